"""Readable text for constraint expressions (prompts, reports, explanations)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from ._expr import And, Chain, Expr, Gate, Or, Single


def clip(text: str, limit: int = 60) -> str:
    """``text`` cut to at most ``limit`` characters, ending in "..." when cut (the one clipping rule)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


_HEADERS = {And: "ALL of:", Or: "ANY of:", Chain: "IN ORDER:", Gate: "FIRST THAT HOLDS:"}


# Plain text is shown unquoted: letters and digits (any script: ``\w`` is ``str.isalnum`` or "_")
# and the characters of names, paths and addresses.
_PLAIN = re.compile(r"[\w\-.@:/]+")


def format_value(value: object) -> str:
    """A compact, unambiguous rendering of an argument value (strings unquoted when plain)."""
    if type(value) is str and len(value) <= _CACHED_TEXT:
        return _format_text(value)
    if isinstance(value, str):  # a subclass may render itself otherwise: never taken from the cache
        return value if _PLAIN.fullmatch(value) else repr(value)
    return repr(value)


# Texts up to this long have their renderings kept (names, ids, amounts; not documents).
_CACHED_TEXT = 200


@functools.lru_cache(maxsize=4096)
def _format_text(value: str) -> str:
    """``format_value`` of a text: the same names and values come back in every explanation of a
    conversation, so their renderings are kept (the most recent few thousand)."""
    return value if _PLAIN.fullmatch(value) else repr(value)


def format_call(name: str, args: Mapping[str, Any] | None) -> str:
    """``name(k=v, ...)`` in the argument order given."""
    inner = ", ".join([f"{k}={format_value(v)}" for k, v in (args or {}).items()])
    return f"{name}({inner})"


def format_single(single: Single, bindings: Mapping[str, Any] | None = None) -> str:
    """``name(param=var)``; with ``bindings``, bound variables show their values."""
    parts = []
    for param, var in single.params or ():
        if bindings is not None and var in bindings:
            parts.append(f"{param}={format_value(bindings[var])}")
        else:
            parts.append(f"{param}={var}")
    text = f"{single.name}({', '.join(parts)})"
    return f"NOT {text}" if single.negated else text


def render(
    expr: Expr | None,
    *,
    bindings: Mapping[str, Any] | None = None,
    describe: Callable[[Single], str] | None = None,
    indent: str = "  ",
) -> str:
    """An indented outline: groups become ALL/ANY/IN ORDER/FIRST THAT HOLDS lists.

    ``describe`` replaces the default ``name(param=var)`` text of a single (e.g. a domain's
    natural-language template); ``bindings`` fills in variable values.
    """
    if expr is None:
        return "(no constraints)"
    lines: list[str] = []
    _render_into(lines, expr, 0, "", bindings, describe, indent)
    return "\n".join(lines)


def _render_into(
    lines: list[str],
    expr: Expr,
    depth: int,
    bullet: str,
    bindings: Mapping[str, Any] | None,
    describe: Callable[[Single], str] | None,
    indent: str,
) -> None:
    pad = indent * depth
    if isinstance(expr, Single):
        text = describe(expr) if describe else format_single(expr, bindings)
        lines.append(f"{pad}{bullet}{text}")
        return
    lines.append(f"{pad}{bullet}{_HEADERS[type(expr)]}")
    for i, child in enumerate(expr.children, start=1):
        child_bullet = f"{i}. " if isinstance(expr, Chain) else "- "
        _render_into(lines, child, depth + 1, child_bullet, bindings, describe, indent)
