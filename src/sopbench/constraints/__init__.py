"""Constraint expressions: the model, the published encoding, rendering, rules.

>>> from sopbench.constraints import parse, dump, render
>>> expr = parse(["and", [["single", "logged_in_user", {"username": "username"}],
...                       ["single", "not internal_check_username_exist", {"username": "dest"}]]])
>>> print(render(expr))
ALL of:
  - logged_in_user(username=username)
  - NOT internal_check_username_exist(username=dest)
"""

from ._codec import ConstraintError, check_acyclic, dump, parse, referenced_names, validate
from ._expr import (
    GROUP_TYPES,
    And,
    Chain,
    Expr,
    Gate,
    Group,
    Not,
    Or,
    Single,
    count_singles,
    holds,
    rename,
    singles,
)
from ._graph import ActionGraph, GraphNode, GroupNodeKind, ToolNode
from ._literals import parse_python_expression, python_literal
from ._render import clip, format_call, format_single, format_value, render
from ._rule import HelperCall, Rule, Sop

__all__ = [
    "parse_python_expression",
    "python_literal",
    "GROUP_TYPES",
    "ActionGraph",
    "GraphNode",
    "GroupNodeKind",
    "ToolNode",
    "And",
    "Chain",
    "ConstraintError",
    "Expr",
    "Gate",
    "Group",
    "HelperCall",
    "Not",
    "Or",
    "Rule",
    "Single",
    "Sop",
    "check_acyclic",
    "count_singles",
    "dump",
    "clip",
    "format_call",
    "format_single",
    "format_value",
    "holds",
    "parse",
    "referenced_names",
    "rename",
    "render",
    "singles",
    "validate",
]
