"""The search's values: its state (database, constraint parameters, user-known values), the targets a
state must meet, and the problem one assignment poses (its variables, their candidates, the test)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

import orjson

from sopbench.constraints import Expr, Single
from sopbench.evaluation import canonical_json


class GoalCall(Single):
    """The goal call itself as a target: it must succeed when the task is to succeed."""

    __slots__ = ()


class ShownSop(Single):
    """The SOP as the agent is shown it (the original constraints, without their hidden
    prerequisites) as a target: a refusal must rest on a constraint the agent can check."""

    __slots__ = ()


@dataclass
class State:
    db: dict[str, Any]
    params: dict[str, Any]
    known: dict[str, Any]

    def with_known(self, **changes: Any) -> State:
        return State(self.db, self.params, {**self.known, **changes})

    def fingerprint(self) -> bytes:
        return canonical_json([self.db, self.params, self.known])


@dataclass(frozen=True)
class Targets:
    """The truth a state must give each target: constraint instances, the goal and the helper calls
    that must work, the SOP as shown (at most one ``ShownSop``, standing for ``shown_sop``)."""

    wanted: tuple[tuple[Single, bool], ...]
    shown_sop: Expr | None = None

    def only(self, wanted: Iterable[tuple[Single, bool]]) -> Targets:
        """Some of these targets (those one step of a search checks)."""
        return Targets(tuple(wanted), self.shown_sop)

    def truth(self, target: Single) -> bool:
        return dict(self.wanted)[target]

    @property
    def variables(self) -> set[str]:
        """The variables some target checks."""
        return {var for single, _ in self.wanted for _, var in single.params or ()}


@dataclass(frozen=True)
class Problem:
    """What one search looks for: values of ``names`` (each tried from its ``candidates``, in order)
    and a database meeting ``targets``, giving a state not in ``avoid`` that ``verify`` (the strict
    oracle's reference path) accepts."""

    names: tuple[str, ...]
    candidates: Mapping[str, Sequence[Any]]
    targets: Targets
    avoid: Set[bytes]  # fingerprints of the states that made this combination's earlier tasks
    verify: Callable[[State], bool]

    def accepts(self, state: State) -> bool:
        return state.fingerprint() not in self.avoid and self.verify(state)


@dataclass(frozen=True)
class Searched:
    """What one search found (None: nothing within its budget), the evaluations it spent, and the
    targets its last state still got wrong."""

    state: State | None
    evaluations: int
    wrong: list[Single] = field(default_factory=list)


@dataclass
class Outcome:
    state: State | None
    reason: str = ""
    evaluations: int = 0
    wrong: list[str] = field(default_factory=list)


def copy_data(data: Any) -> Any:
    return orjson.loads(orjson.dumps(data))


def with_value(state: State, path: tuple[Any, ...], value: Any) -> State:
    db = copy_data(state.db)
    target = db
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return State(db, state.params, state.known)
