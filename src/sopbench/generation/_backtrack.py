"""The first search: backtracking over the user-known variables with the database fixed, each
constraint instance checked as soon as its variables are chosen, constructive candidates first."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sopbench.constraints import Single

from ._records import Records, fewest_first, hashable_scalar, records_of
from ._space import SearchSpace
from ._state import Problem, Searched, State, Targets
from ._values import format_date, parse_date

BROADENING = (3, 8, 20, 10_000)  # candidates per variable in successive backtracking passes
UNCHECKED_WIDTH = 3  # candidates tried at a level where no check is decided (a later one may be)


@dataclass(frozen=True)
class _Plan:
    """The order the variables are chosen in and what is checked once each is chosen."""

    order: tuple[str, ...]
    position: Mapping[str, int]
    checks: tuple[Targets, ...]  # by level: the targets whose last variable is chosen there
    fixed: Targets  # the targets of no variable: only the database decides them
    partners: Mapping[str, list[str]]  # variable -> the variables sharing a target with it (itself too)


@dataclass(frozen=True)
class _Candidates:
    """Each variable's candidates for the backtracking: first the constructive ones the values chosen
    so far suggest, then the problem's, among equals the values more records hold first."""

    start: State
    records: Records
    allowed: Mapping[str, set[Any]]
    ranked: Mapping[str, Sequence[Any]]


def backtrack(
    space: SearchSpace, problem: Problem, start: State, budget: int, *, by_links: bool = True
) -> Searched:
    """Backtracking over the variables alone, the database of ``start`` fixed; a verified state or None.

    ``by_links`` orders the variables by the checks that tie two or more of them together;
    otherwise every check counts, the checks of one variable alone included (which puts a
    guest who must not be a member first, before the dates that depend on the guest's stays)."""
    plan = _plan(problem, by_links)
    used = 1
    if plan.fixed.wanted and space.wrong(start, plan.fixed):
        return Searched(None, used)  # only the database can change these
    candidates = _candidates(problem, plan, start)
    order, checks, position = plan.order, plan.checks, plan.position
    known = dict(start.known)
    everything = frozenset(range(len(order)))

    def search(i: int, width: int) -> tuple[State | None, frozenset[int]]:
        """Choose the variables from level ``i`` on. Conflict-directed backjumping: a level whose
        values all fail returns the levels its failures depend on, and the levels between are
        skipped (choosing another amount cannot help a guest without a reservation)."""
        nonlocal used
        if i == len(order):
            state = State(start.db, start.params, dict(known))
            if problem.accepts(state):
                return state, frozenset()
            return None, everything
        name = order[i]
        values = _ordered(space, plan, candidates, name, known)[
            : width if checks[i].wanted else UNCHECKED_WIDTH
        ]
        conflicts: set[int] = set()
        for value in values:
            if used >= budget:
                return None, everything
            known[name] = value
            if checks[i].wanted:
                used += 1
                failed = space.wrong(State(start.db, start.params, known), checks[i])
                if failed:
                    conflicts.update(_levels(failed, position))
                    continue
            found, below = search(i + 1, width)
            if found is not None:
                return found, frozenset()
            if i not in below:  # this variable took no part in the failure: jump over it
                known[name] = start.known.get(name)
                return None, below
            conflicts.update(below)
        known[name] = start.known.get(name)
        conflicts.discard(i)
        return None, frozenset(c for c in conflicts if c < i)

    # Iterative broadening: every variable's first few candidates before any variable's many.
    for width in BROADENING:
        found, _ = search(0, width)
        if found is not None or used >= budget:
            return Searched(found, used)
    return Searched(None, used)


def _plan(problem: Problem, by_links: bool) -> _Plan:
    names = problem.names
    involved = [
        (single, want, [v for _, v in single.params or () if v in names])
        for single, want in problem.targets.wanted
    ]
    # A check of one variable alone (a guest who must be a gold member) filters that
    # variable's values wherever it comes; the order follows the checks that tie variables
    # together, so the dates of a stay are chosen before the guest and the amount that must fit them.
    order = _variable_order(
        names, [set(variables) for _, _, variables in involved if not by_links or len(set(variables)) > 1]
    )
    position = {n: i for i, n in enumerate(order)}
    checks: list[list[tuple[Single, bool]]] = [[] for _ in order]
    fixed: list[tuple[Single, bool]] = []
    for single, want, variables in involved:
        if variables:
            checks[max(position[v] for v in variables)].append((single, want))
        else:
            fixed.append((single, want))
    partners = {
        n: list(dict.fromkeys(v for _, _, variables in involved if n in variables for v in variables))
        for n in names
    }
    targets = problem.targets
    return _Plan(
        tuple(order), position, tuple(targets.only(level) for level in checks), targets.only(fixed), partners
    )


def _candidates(problem: Problem, plan: _Plan, start: State) -> _Candidates:
    records = records_of(start.db)
    allowed = {
        n: {c for c in problem.candidates[n] if hashable_scalar(c) or isinstance(c, bool)}
        for n in problem.names
    }
    # A variable that shares an instance with others tries first the values most records
    # hold (a guest with reservations before a guest without): those give the other
    # variables linked values to try. The seeded order is kept among equals.
    ranked = {
        n: sorted(problem.candidates[n], key=functools.partial(fewest_first, records, n))
        if len(plan.partners[n]) > 1
        else problem.candidates[n]
        for n in problem.names
    }
    return _Candidates(start, records, allowed, ranked)


def _ordered(
    space: SearchSpace, plan: _Plan, candidates: _Candidates, name: str, known: Mapping[str, Any]
) -> list[Any]:
    """The candidates of ``name`` given the values chosen before it. Constructive ones first: the
    values that records named by the variables chosen so far hold (the dates of the chosen guest's
    reservation), and dates a window away from a date chosen for the same instance (a stay just
    longer than the maximum)."""
    start = candidates.start
    chosen = {n: known[n] for n in plan.order[: plan.position[name]] if n in known}
    first = [start.known[name]] if name in start.known else []
    linked = candidates.records.linked(name, chosen)
    first += _alternate(
        linked, space.relative_dates(name, [chosen[n] for n in plan.partners[name] if n in chosen])
    )
    # ... and the days next to the linked ones (a stay that just runs into another one).
    first += [
        format_date(moment + timedelta(days=shift), layout)
        for moment, layout in (p for p in map(parse_date, linked[:4]) if p is not None)
        for shift in (-1, 1, -2, 2)
    ]
    allowed = candidates.allowed[name]
    first = [
        v
        for v in dict.fromkeys(v for v in first if hashable_scalar(v) or isinstance(v, bool))
        if v in allowed
    ]
    taken = set(first)
    return first + [c for c in candidates.ranked[name] if not (hashable_scalar(c) and c in taken)]


def _levels(failed: list[Single], position: Mapping[str, int]) -> list[int]:
    """The levels whose variables the failed targets take (a failure depends on their choices)."""
    return [position[v] for single in failed for _, v in single.params or () if v in position]


def _variable_order(names: Sequence[str], scopes: list[set[str]]) -> list[str]:
    """The order the backtracking chooses variables in: next, the variable that completes the
    most instances (so each choice is checked at once), then the one in most instances (the
    most constrained), then the earlier name."""
    order: list[str] = []
    chosen: set[str] = set()
    degree = {n: sum(n in scope for scope in scopes) for n in names}
    rest = [n for n in names if degree[n]]
    while rest:

        def rank(name: str) -> tuple[int, int, int]:
            completes = sum(1 for scope in scopes if name in scope and scope - chosen <= {name})
            return (-completes, -degree[name], names.index(name))

        best = min(rest, key=rank)
        order.append(best)
        chosen.add(best)
        rest.remove(best)
    return order + [n for n in names if n not in order]


def _alternate(first: list[Any], second: list[Any]) -> list[Any]:
    """The two lists interleaved (each one's best candidates come early)."""
    out: list[Any] = []
    for i in range(max(len(first), len(second))):
        out += first[i : i + 1] + second[i : i + 1]
    return out
