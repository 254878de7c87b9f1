"""The one way sopbench turns Python text into an AST: under a process-wide lock.

CPython 3.11 keeps the recursion depth of its AST conversion in state shared by every thread, not
per thread, so two threads parsing at the same moment can fail with ``SystemError: AST constructor
recursion depth mismatch`` (CPython gh-106905). Episodes of plugin agents run in threads of their
own, and each of them parses tool outputs (the reference policy, the scorer's reading of recorded
outputs): without the lock a run at concurrency above 1 could lose an episode to an infra_error
that no agent caused. Only the parse is held; walking the tree is plain Python.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

_PARSING = threading.Lock()


def parse_python_expression(source: str) -> ast.Expression:
    """``ast.parse(source, mode="eval")``, one thread at a time (raises as it does)."""
    with _PARSING:
        return ast.parse(source, mode="eval")


def python_literal(text: str) -> Any:
    """``ast.literal_eval(text)``: the value of a Python literal written as text (leading spaces
    and tabs allowed, as ``literal_eval`` allows them), raising as ``literal_eval`` raises."""
    return ast.literal_eval(parse_python_expression(text.lstrip(" \t")))
