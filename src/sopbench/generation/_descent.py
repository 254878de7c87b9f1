"""The second search: a first-improvement descent that also moves the database and the
constraint parameters, one value at a time, near the entities the variables name."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from sopbench.constraints import Single

from ._records import find_record, paths_of
from ._space import SearchSpace
from ._state import Problem, Searched, State, copy_data, with_value
from ._values import (
    Leaf,
    WorldIndex,
    date_shifts,
    format_date,
    get_path,
    json_kind,
    number_shifts,
    parse_date,
    walk,
)

SIDEWAYS_STEPS = 20  # equal-cost steps allowed per descent (to leave a plateau)


def descend(space: SearchSpace, problem: Problem, start: State, budget: int) -> Searched:
    """First-improvement descent from ``start``; a few equal-cost steps are allowed to leave a plateau."""
    state = start
    used = 1
    wrong = space.wrong(state, problem.targets)
    seen = {state.fingerprint()}
    penalty = 0
    sideways = SIDEWAYS_STEPS
    while used < budget:
        if not wrong:
            if problem.accepts(state):
                return Searched(state, used)
            penalty = 1  # realised on paper, refused by the oracle or already produced: keep moving
        cost = len(wrong) + penalty
        level: tuple[State, list[Single]] | None = None
        improved = False
        for move in _moves(space, problem, state, wrong):
            if used >= budget:
                break
            key = move.fingerprint()
            if key in seen:
                continue
            seen.add(key)
            used += 1
            new_wrong = space.wrong(move, problem.targets)
            new_cost = len(new_wrong)
            if new_cost < cost or (penalty and new_cost == 0):
                state, wrong, improved = move, new_wrong, True
                penalty = 0
                break
            if level is None and new_cost == cost and new_wrong != wrong:
                level = (move, new_wrong)
        if improved:
            continue
        if level is None or sideways == 0:
            break
        sideways -= 1
        state, wrong = level
    return Searched(None, used, wrong)


def follow(state: State, variable: str, names: Sequence[str]) -> State:
    """After a variable names a record (its key, or one of its fields), take the other variables
    that are fields of that record (same name, or a name that contains the field's)."""
    value = state.known[variable]
    if not isinstance(value, str) or not value:
        return state
    record = find_record(state.db, value)
    if record is None:
        return state
    changes = {}
    for n in names:
        if n == variable:
            continue
        source = n if n in record else next((f for f in record if len(f) > 3 and f in n), None)
        if (
            source is not None
            and not isinstance(record[source], list | dict)
            and record[source] not in (None, "")
        ):
            changes[n] = record[source]
    return state.with_known(**changes) if changes else state


# ---- moves -----------------------------------------------------------------------------------
def _moves(space: SearchSpace, problem: Problem, state: State, wrong: list[Single]) -> Iterator[State]:
    """Moves for the first wrong instance first: its variables, its entities, the top-level values."""
    involved = list(dict.fromkeys(v for s in wrong[:1] for _, v in s.params or () if v in state.known))
    for n in involved:
        yield from _variable_moves(problem, state, n)
    yield from _date_pair_moves(space, state, involved)
    yield from _database_moves(space, state, involved)
    others = [n for n in problem.names if n not in involved]
    for n in others:
        yield from _variable_moves(problem, state, n)
    yield from _database_moves(space, state, others)
    yield from _parameter_moves(state)
    yield from _database_moves(space, state, [], everywhere=True)


def _date_pair_moves(space: SearchSpace, state: State, involved: list[str]) -> Iterator[State]:
    """Two date variables of one instance moved together: a start and a stay of n days after it."""
    parsed = [(n, parse_date(state.known[n])) for n in involved]
    dated = [(n, p) for n, p in parsed if p is not None and p[1] == "%Y-%m-%d"]
    if len(dated) < 2:
        return
    (first, (start, layout)), (second, _) = dated[0], dated[1]
    anchors = [p[0] for p in (parse_date(v) for v in state.db.values() if isinstance(v, str)) if p]
    starts = [start] + [
        a.replace(hour=0, minute=0, second=0) + timedelta(days=d) for a in anchors for d in (1, 2, 3, 5, 10)
    ]
    lengths = sorted({1, 2, 3, 5} | {w + 1 for w in space.windows if 0 < w < 60})
    for begin in starts:
        for nights in lengths:
            yield state.with_known(
                **{
                    first: format_date(begin, layout),
                    second: format_date(begin + timedelta(days=nights), layout),
                }
            )


def _variable_moves(problem: Problem, state: State, n: str) -> Iterator[State]:
    current = state.known.get(n)
    for value in problem.candidates[n]:
        if value == current and type(value) is type(current):
            continue
        yield follow(state.with_known(**{n: value}), n, problem.names)


def _database_moves(
    space: SearchSpace, state: State, variables: list[str], *, everywhere: bool = False
) -> Iterator[State]:
    known_strings = [v for v in state.known.values() if isinstance(v, str)]
    numbers = [v for v in state.known.values() if isinstance(v, int | float) and not isinstance(v, bool)]
    numbers += [v for v in state.params.values() if isinstance(v, int | float) and not isinstance(v, bool)]
    anchors = [p[0] for p in (parse_date(v) for v in state.db.values() if isinstance(v, str)) if p]
    roots: list[tuple[Any, ...]] = []
    for name in variables:
        value = state.known.get(name)
        if isinstance(value, str):
            roots += [path for path in paths_of(state.db, value)]
    roots.append(())
    done: set[tuple[Any, ...]] = set()
    for root in roots:
        for leaf in walk(get_path(state.db, root), root, str(root[-1]) if root else ""):
            if leaf.path in done or (root == () and len(leaf.path) > 1 and not everywhere):
                continue
            done.add(leaf.path)
            for value in _edits(space, leaf, known_strings, numbers, anchors):
                yield with_value(state, leaf.path, value)


def _edits(
    space: SearchSpace, leaf: Leaf, known_strings: list[str], numbers: list[Any], anchors: list[datetime]
) -> Iterator[Any]:
    """The values one place of the database may be changed to, by the kind of its value."""
    value = leaf.value
    kind = json_kind(value)
    if kind == "boolean":
        yield not value
    elif kind == "number":
        yield from number_shifts(value, numbers)
    elif kind == "string":
        yield from _string_edits(space, leaf, known_strings, anchors)
    elif kind == "null":
        for other in space.index.containers.get(leaf.field, []) + space.index.by_field.get(leaf.field, []):
            if other is not None:
                yield copy_data(other)
    elif kind == "array":
        yield from _array_edits(space.index, leaf, known_strings)
    elif kind == "object" and leaf.path:
        yield from _object_edits(space.index, leaf, known_strings)


def _string_edits(
    space: SearchSpace, leaf: Leaf, known_strings: list[str], anchors: list[datetime]
) -> Iterator[Any]:
    """A date moved by the domain's windows; other text: what the same field holds elsewhere, the
    user's values, another case, nothing."""
    value = leaf.value
    shifted = date_shifts(value, anchors, space.windows)
    if shifted:
        yield from shifted
        return
    for other in space.index.by_field.get(leaf.field, []) + known_strings:
        if other != value and isinstance(other, str):
            yield other
    for variant in (value.lower(), value.capitalize(), ""):
        if variant != value:
            yield variant


def _array_edits(index: WorldIndex, leaf: Leaf, known_strings: list[str]) -> Iterator[Any]:
    """A collection emptied, without one of the user's values, with one more, covering the days
    between the user's dates, or as a like collection elsewhere (with one more of its entries)."""
    value = leaf.value
    if value:
        yield []
        for i, item in enumerate(value):
            if item in known_strings:
                yield value[:i] + value[i + 1 :]
    for text in known_strings:
        if text not in value:
            yield [*value, text]
    days = sorted(p for p in (parse_date(t) for t in known_strings) if p and p[1] == "%Y-%m-%d")
    if len(days) >= 2 and all(parse_date(v) for v in value if isinstance(v, str)):
        span = _days_between(days[0][0], days[-1][0])
        if span and len(span) <= 60:
            yield sorted(set(value) | set(span))
    for other in index.containers.get(leaf.field, []):
        if isinstance(other, list) and other and other != value:
            yield copy_data(other)
            if isinstance(other[0], dict):
                yield [*copy_data(value), copy_data(other[0])]


def _object_edits(index: WorldIndex, leaf: Leaf, known_strings: list[str]) -> Iterator[Any]:
    """A mapping without an entry keyed by one of the user's values, or with one more."""
    value = leaf.value
    for key in list(value):
        if key in known_strings:
            yield {k: v for k, v in value.items() if k != key}
    template = _template_entry(value, index.containers.get(leaf.field, []))
    if template is not None:
        for text in known_strings:
            if text not in value:
                yield {**value, text: copy_data(template)}


def _parameter_moves(state: State) -> Iterator[State]:
    numbers = [v for v in state.known.values() if isinstance(v, int | float) and not isinstance(v, bool)]
    for name, value in state.params.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            for shifted in number_shifts(value, numbers):
                if shifted >= 0:
                    yield State(state.db, {**state.params, name: shifted}, state.known)


def _template_entry(container: dict[str, Any], same_field: list[Any]) -> Any:
    """A record to copy when a collection needs one more entry: one of its own, or of a like collection."""
    for candidate in [container, *same_field]:
        if isinstance(candidate, dict) and candidate:
            first = next(iter(candidate.values()))
            if isinstance(first, dict | list | str | int | float):
                return first
    return None


def _days_between(first: datetime, last: datetime) -> list[str]:
    count = (last - first).days
    return [(first + timedelta(days=i)).strftime("%Y-%m-%d") for i in range(count)]
