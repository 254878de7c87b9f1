"""The first search: backtracking over the user-known variables with the database fixed, each
constraint instance checked as soon as its variables are chosen, constructive candidates first."""

from __future__ import annotations

import functools
from datetime import timedelta
from typing import Any

from sopbench.constraints import Single

from ._records import fewest_first, hashable_scalar, records_of
from ._space import SearchSpace
from ._state import State
from ._values import format_date, parse_date

BROADENING = (3, 8, 20, 10_000)  # candidates per variable in successive backtracking passes


class Backtracking(SearchSpace):
    def _assign(
        self, start: State, targets, names, candidates, budget: int, avoid, verify, *, by_links: bool = True
    ) -> tuple[State | None, int]:
        """Backtracking over the variables alone, the database fixed; returns a verified state or None.

        ``by_links`` orders the variables by the checks that tie two or more of them together;
        otherwise every check counts, the checks of one variable alone included (which puts a
        guest who must not be a member first, before the dates that depend on the guest's stays)."""
        involved = [
            (single, want, [v for _, v in single.params or () if v in names]) for single, want in targets
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
        allowed = {n: {c for c in candidates[n] if hashable_scalar(c) or isinstance(c, bool)} for n in names}
        used = 1
        if fixed and self.wrong(start, fixed):
            return None, used  # only the database can change these
        known = dict(start.known)

        records = records_of(start.db)
        partners = {
            n: list(dict.fromkeys(v for _, _, variables in involved if n in variables for v in variables))
            for n in names
        }

        # A variable that shares an instance with others tries first the values most records
        # hold (a guest with reservations before a guest without): those give the other
        # variables linked values to try. The seeded order is kept among equals.
        ranked = {
            n: sorted(candidates[n], key=functools.partial(fewest_first, records, n))
            if len(partners[n]) > 1
            else candidates[n]
            for n in names
        }

        def options(name: str) -> list[Any]:
            # Constructive candidates first: the values that records named by the variables chosen
            # so far hold (the dates of the chosen guest's reservation), and dates a window away
            # from a date chosen for the same instance (a stay just longer than the maximum).
            chosen = {n: known[n] for n in order[: position[name]] if n in known}
            first = [start.known[name]] if name in start.known else []
            linked = records.linked(name, chosen)
            first += _alternate(
                linked,
                self._relative_dates(name, [chosen[n] for n in partners[name] if n in chosen]),
            )
            # ... and the days next to the linked ones (a stay that just runs into another one).
            first += [
                format_date(moment + timedelta(days=shift), layout)
                for moment, layout in (p for p in map(parse_date, linked[:4]) if p is not None)
                for shift in (-1, 1, -2, 2)
            ]
            first = list(dict.fromkeys(v for v in first if hashable_scalar(v) or isinstance(v, bool)))
            if name in allowed:
                first = [v for v in first if v in allowed[name]]
            taken = set(first)
            return first + [c for c in ranked[name] if not (hashable_scalar(c) and c in taken)]

        everything = frozenset(range(len(order)))

        def search(i: int, width: int) -> tuple[State | None, frozenset[int]]:
            """Depth-first over the variables with conflict-directed backjumping: a level whose
            values all fail returns the levels its failures depend on, and the levels between are
            skipped (choosing another amount cannot help a guest without a reservation)."""
            nonlocal used
            if i == len(order):
                state = State(start.db, start.params, dict(known))
                if state.fingerprint() not in avoid and verify(state):
                    return state, frozenset()
                return None, everything
            name = order[i]
            values = options(name)[: width if checks[i] else 3]
            conflicts: set[int] = set()
            for value in values:
                if used >= budget:
                    return None, everything
                known[name] = value
                if checks[i]:
                    used += 1
                    failed = self.wrong(State(start.db, start.params, known), checks[i])
                    if failed:
                        conflicts.update(
                            position[v] for single in failed for _, v in single.params or () if v in position
                        )
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
                return found, used
        return None, used

    def _relative_dates(self, name: str, partners: list[Any]) -> list[str]:
        """Days a window away (before and after) from the dates chosen for the same instances:
        the rules compare spans of days with the domain's windows (a stay longer than the
        maximum, a booking within the lead time)."""
        if "date" not in name and "time" not in name:
            return []
        out: list[str] = []
        for other in partners:
            if not isinstance(other, str):
                continue
            if other not in self._relative:
                parsed = parse_date(other)
                shifted: list[str] = []
                if parsed is not None:
                    moment, layout = parsed
                    for days in self._spans:
                        for sign in (1, -1):
                            shifted.append(format_date(moment + timedelta(days=sign * days), layout))
                self._relative[other] = shifted
            out += self._relative[other]
        return out


def _variable_order(names: list[str], scopes: list[set[str]]) -> list[str]:
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
