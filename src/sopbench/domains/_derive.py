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

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, overload

from sopbench.constraints import And, Chain, Expr, Gate, Group, Not, Or, Single, rename, singles

from ._catalogue import Catalogue

DependencyOption = Literal["full", "required"]


def simplify(expr: Expr | None) -> Expr | None:
    """Merge nested groups of the same operator, drop repeated siblings, collapse one-child groups."""
    if expr is None or isinstance(expr, Single):
        return expr
    children: list[Expr] = []
    for original in expr.children:
        child = simplify(original)
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


@overload
def expand(expr: Expr, catalogue: Catalogue) -> Expr: ...


@overload
def expand(expr: Expr | None, catalogue: Catalogue) -> Expr | None: ...


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


# ---- innate implications -------------------------------------------------------------------------
def expanded_innate(catalogue: Catalogue, tool: str) -> Expr | None:
    """A tool's innate dependency with links, innate checks, defaults and prerequisites inserted."""
    expr = catalogue.innate.get(tool)
    if expr is None:
        return None
    return simplify(_expand_innate(expr, catalogue, _cached_defaults(catalogue, "full"), depth=0))


@overload
def _expand_innate(
    expr: Expr, catalogue: Catalogue, defaults: Mapping[str, Expr | None], depth: int
) -> Expr: ...


@overload
def _expand_innate(
    expr: Expr | None, catalogue: Catalogue, defaults: Mapping[str, Expr | None], depth: int
) -> Expr | None: ...


def _expand_innate(
    expr: Expr | None, catalogue: Catalogue, defaults: Mapping[str, Expr | None], depth: int
) -> Expr | None:
    """Put in front of every single what must hold before it: its link's tool, or the single's own
    innate check, default SOP and constraint prerequisites (in that order), as the published
    evaluator did before reading innate implications (spec §7.4)."""
    if expr is None or depth > 16:
        return expr
    if not isinstance(expr, Single):
        return type(expr)(_expand_innate(child, catalogue, defaults, depth + 1) for child in expr.children)
    linked = catalogue.linked_call(expr)
    if linked is not None:
        tool, params = linked
        return _expand_innate(
            Single(tool, tuple(params.items()), expr.negated), catalogue, defaults, depth + 1
        )
    parts: list[Expr] = []
    for table in (catalogue.innate, defaults, catalogue.constraint_dependencies):
        before = table.get(expr.name)
        if before is None:
            continue
        before = _expand_innate(rename(before, expr.param_map), catalogue, defaults, depth + 1)
        if before is not None:
            parts.append(Not(before) if expr.negated else before)
    if not parts:
        return expr
    return (Gate if expr.negated else Chain)([*parts, expr])


@dataclass(frozen=True, slots=True)
class Implication:
    """A helper call a passing call of a tool implies (its innate check made it).

    ``keys``: the implied tool's parameter names, sorted; ``variables``: per implied call, the
    calling tool's variable for each key.
    """

    tool: str
    keys: tuple[str, ...]
    variables: tuple[tuple[str, ...], ...]


def innate_implications(
    catalogue: Catalogue, *, published: bool = False
) -> dict[str, tuple[Implication, ...]]:
    """For every tool with an innate check, the helper calls a passing call of it implies.

    Every tool-named single of the expanded innate dependency, bound through the caller's
    variables; with ``published``, the published evaluator's reading (quirk Q5): only the first
    leaf of the expanded dependency, and for a constraint leaf the tools of its verification
    process.
    """
    key = (id(catalogue), published)
    kept = _IMPLICATIONS.get(key)
    if kept is not None and kept[0] is catalogue:
        return dict(kept[1])
    out: dict[str, tuple[Implication, ...]] = {}
    for tool, expr in catalogue.innate.items():
        if expr is None:
            continue
        expanded = expanded_innate(catalogue, tool)
        if expanded is None:
            continue
        out[tool] = (
            _published_implications(expanded, catalogue)
            if published
            else _sound_implications(expanded, catalogue)
        )
    _IMPLICATIONS[key] = (catalogue, out)
    return dict(out)


_IMPLICATIONS: dict[tuple[int, bool], tuple[Catalogue, dict[str, tuple[Implication, ...]]]] = {}


def _first_leaf(expr: Expr) -> Single:
    while not isinstance(expr, Single):
        expr = expr.children[0]
    return expr


def _published_implications(expr: Expr, catalogue: Catalogue) -> tuple[Implication, ...]:
    leaf = _first_leaf(expr)
    mapping = leaf.param_map
    if leaf.name in catalogue.tools:
        keys = tuple(sorted(mapping))
        return (Implication(leaf.name, keys, (tuple(mapping[k] for k in keys),)),)
    if leaf.name not in catalogue.processes:
        return ()
    grouped: dict[str, tuple[tuple[str, ...], list[tuple[str, ...]]]] = {}
    for single in {s.positive for s in singles(catalogue.processes[leaf.name])}:
        renamed = {p: mapping.get(v, v) for p, v in single.params or ()}
        if single.name not in grouped:
            grouped[single.name] = (tuple(sorted(renamed)), [])
        keys, values = grouped[single.name]
        values.append(tuple(renamed[k] for k in keys))
    return tuple(Implication(tool, keys, tuple(values)) for tool, (keys, values) in grouped.items())


def _sound_implications(expr: Expr, catalogue: Catalogue) -> tuple[Implication, ...]:
    found: dict[str, tuple[tuple[str, ...], list[tuple[str, ...]]]] = {}
    for single in singles(expr):
        if single.name not in catalogue.tools:
            continue
        mapping = single.param_map
        keys = tuple(sorted(mapping))
        entry = found.setdefault(single.name, (keys, []))
        if entry[0] == keys and tuple(mapping[k] for k in keys) not in entry[1]:
            entry[1].append(tuple(mapping[k] for k in keys))
    return tuple(Implication(tool, keys, tuple(values)) for tool, (keys, values) in found.items())


def _forget_derived() -> None:
    _DEFAULTS_CACHE.clear()
    _IMPLICATIONS.clear()


@contextmanager
def cold_derivations() -> Iterator[Callable[[], None]]:
    """Within: the tables derived per catalogue are forgotten, and the yielded function forgets
    them again; after: what was kept before is back. For benchmarks that time a cold start."""
    saved = (dict(_DEFAULTS_CACHE), dict(_IMPLICATIONS))
    _forget_derived()
    try:
        yield _forget_derived
    finally:
        _forget_derived()
        _DEFAULTS_CACHE.update(saved[0])
        _IMPLICATIONS.update(saved[1])


__all__ = [
    "DependencyOption",
    "Implication",
    "cold_derivations",
    "expanded_innate",
    "innate_implications",
    "Group",
    "Or",
    "default_dependencies",
    "default_dependency",
    "expand",
    "oracle_dependencies",
    "simplify",
]
