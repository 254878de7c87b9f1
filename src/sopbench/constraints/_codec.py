"""The published list encoding of constraint expressions: parse, dump and validate.

``["single", name, {param: var} | null]``, ``[op, [children...]]`` with op in and/or/chain/gate, and
``null``. Parsing is strict and every error names the path inside the expression, e.g.
``constraints[1][2]: unknown operator "xor"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ._expr import GROUP_TYPES, LITERAL_PREFIX, NEGATION_PREFIX, Expr, Single, singles
from ._render import clip


class ConstraintError(ValueError):
    """A constraint expression that cannot be used; ``path`` locates the offending part."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def parse(data: Any, path: str = "constraints") -> Expr | None:
    """Parse the published encoding into an expression (``None`` for no constraint)."""
    if data is None:
        return None
    if not isinstance(data, list | tuple) or not data:
        raise ConstraintError(path, f'expected a list such as ["single", name, params], got {_show(data)}')
    op = data[0]
    if not isinstance(op, str):
        raise ConstraintError(f"{path}[0]", f"operator must be a string, got {_show(op)}")
    if op == "single":
        return _parse_single(data, path)
    group = GROUP_TYPES.get(op)
    if group is None:
        known = ", ".join(["single", *GROUP_TYPES])
        raise ConstraintError(path, f'unknown operator "{op}" (expected one of {known})')
    if len(data) != 2 or not isinstance(data[1], list | tuple):
        raise ConstraintError(path, f'"{op}" takes exactly one list of children, got {_show(data)}')
    if not data[1]:
        raise ConstraintError(path, f'"{op}" has no children')
    return group(_parse_child(child, f"{path}[1][{i}]") for i, child in enumerate(data[1]))


def _parse_child(data: Any, path: str) -> Expr:
    expr = parse(data, path)
    if expr is None:
        raise ConstraintError(path, "a group's child cannot be null (only a whole constraint can be empty)")
    return expr


def _parse_single(data: list[Any] | tuple[Any, ...], path: str) -> Single:
    if len(data) != 3:
        raise ConstraintError(path, f'"single" takes a name and a parameter map, got {_show(data)}')
    name, params = data[1], data[2]
    if not isinstance(name, str) or not name.strip():
        raise ConstraintError(f"{path}[1]", f"constraint name must be a non-empty string, got {_show(name)}")
    if params is not None:
        if not isinstance(params, Mapping):
            raise ConstraintError(
                f"{path}[2]", f"parameter map must be an object or null, got {_show(params)}"
            )
        for key, var in params.items():
            if not isinstance(key, str) or not isinstance(var, str):
                raise ConstraintError(
                    f"{path}[2]", f"parameter map entries must be strings, got {_show(key)}: {_show(var)}"
                )
    single = Single.of(name, params)
    if not single.name:
        raise ConstraintError(f"{path}[1]", f'"{name}" negates nothing')
    return single


def dump(expr: Expr | None) -> Any:
    """The published encoding of ``expr``: ``json.dumps(dump(parse(x))) == json.dumps(x)``."""
    if expr is None:
        return None
    if isinstance(expr, Single):
        name = NEGATION_PREFIX + expr.name if expr.negated else expr.name
        return ["single", name, None if expr.params is None else dict(expr.params)]
    return [expr.op, [dump(child) for child in expr.children]]


def validate(expr: Expr | None, bound: Iterable[str], path: str = "constraints") -> None:
    """Check that every parameter map names only variables in ``bound``."""
    bound = set(bound)
    for single_path, single in _singles_with_paths(expr, path):
        for param, var in single.params or ():
            if not var.startswith(LITERAL_PREFIX) and var not in bound:
                known = ", ".join(sorted(bound)) or "none"
                raise ConstraintError(
                    f"{single_path}[2]",
                    f'"{single.name}" maps "{param}" to variable "{var}", which is not bound (bound: {known})',
                )


def _singles_with_paths(expr: Expr | None, path: str) -> Iterable[tuple[str, Single]]:
    if expr is None:
        return
    if isinstance(expr, Single):
        yield path, expr
        return
    for i, child in enumerate(expr.children):
        yield from _singles_with_paths(child, f"{path}[1][{i}]")


def check_acyclic(edges: Mapping[str, Iterable[str]], what: str = "helper dependencies") -> None:
    """Raise ``ConstraintError`` naming the cycle if ``edges`` (node -> nodes it needs) has one."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in edges.get(node, ()):
            if state.get(nxt) == 1:
                cycle = " -> ".join([*stack[stack.index(nxt) :], nxt])
                raise ConstraintError(what, f"cycle: {cycle}")
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)


def referenced_names(expr: Expr | None) -> set[str]:
    return {s.name for s in singles(expr)}


def _show(value: object) -> str:
    return clip(repr(value), 80)
