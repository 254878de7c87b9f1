"""What follows from a domain's catalogue: default SOPs, expanded forms, a task's oracle table.

- The *default SOP* of a tool (option ``full``) is its required part AND every customizable
  constraint, simplified; option ``required`` keeps the required part only.
- *Expansion* puts each constraint's prerequisites in front of it: ``CHAIN[prereq, c]`` for a
  positive constraint and ``GATE[NOT prereq, NOT c]`` for a negated one, so that the existence
  check short-circuits before a check that would fail on missing data.
- The strict oracle of a task enforces every tool's expanded default SOP, and the task's own
  ``constraints`` for the goal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from sopbench.constraints import And, Chain, Expr, Gate, Group, Not, Or, Single, rename

from ._catalogue import Catalogue

DependencyOption = Literal["full", "required"]


def simplify(expr: Expr | None) -> Expr | None:
    """Merge nested groups of the same operator, drop repeated siblings, collapse one-child groups."""
    if expr is None or isinstance(expr, Single):
        return expr
    children: list[Expr] = []
    for child in expr.children:
        child = simplify(child)
        if child is None:
            continue
        merged = child.children if type(child) is type(expr) else (child,)
        for item in merged:
            if item not in children:
                children.append(item)
    if not children:
        return None
    if len(children) == 1:
        return children[0]
    return type(expr)(children)


def default_dependency(catalogue: Catalogue, tool: str, option: DependencyOption = "full") -> Expr | None:
    """The default SOP of ``tool`` before expansion."""
    required = catalogue.required.get(tool)
    if option == "required":
        return simplify(required)
    pool = catalogue.customizable.get(tool, ())
    parts = [part for part in (required, *pool) if part is not None]
    if not parts:
        return None
    return simplify(And(parts)) if len(parts) > 1 else simplify(parts[0])


def expand(expr: Expr | None, catalogue: Catalogue) -> Expr | None:
    """Insert every constraint's prerequisites (``constraint_dependencies``) in front of it."""
    if expr is None:
        return None
    if isinstance(expr, Single):
        prerequisite = catalogue.constraint_dependencies.get(expr.name)
        if prerequisite is None:
            return expr
        guard = expand(rename(prerequisite, expr.param_map), catalogue)
        if expr.negated:
            return Gate([Not(guard), expr])
        return Chain([guard, expr])
    return type(expr)(expand(child, catalogue) for child in expr.children)


def default_dependencies(
    catalogue: Catalogue, option: DependencyOption = "full", *, expanded: bool = True
) -> dict[str, Expr | None]:
    """Every tool's default SOP, in the catalogue's order (the published prompt order)."""
    table: dict[str, Expr | None] = {}
    for tool in catalogue.required:
        base = default_dependency(catalogue, tool, option)
        table[tool] = expand(base, catalogue) if expanded else base
    return table


def oracle_dependencies(
    catalogue: Catalogue,
    goal: str,
    goal_constraints: Expr | None,
    option: DependencyOption = "full",
) -> dict[str, Expr | None]:
    """The strict oracle's table for one task: expanded defaults, the goal's task SOP."""
    table = dict(_cached_defaults(catalogue, option))
    table[goal] = goal_constraints
    return table


_DEFAULTS_CACHE: dict[tuple[int, str], Mapping[str, Expr | None]] = {}


def _cached_defaults(catalogue: Catalogue, option: DependencyOption) -> Mapping[str, Expr | None]:
    # Deriving the tables is cheap but not free; the published evaluator spent most of its time
    # rebuilding them for every trajectory, so derive once per catalogue.
    key = (id(catalogue), option)
    if key not in _DEFAULTS_CACHE:
        _DEFAULTS_CACHE[key] = default_dependencies(catalogue, option, expanded=True)
    return _DEFAULTS_CACHE[key]


__all__ = [
    "DependencyOption",
    "Group",
    "Or",
    "default_dependencies",
    "default_dependency",
    "expand",
    "oracle_dependencies",
    "simplify",
]
