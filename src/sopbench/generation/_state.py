"""The search's state (database, constraint parameters, user-known values) and its targets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from sopbench.constraints import Single


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
        return orjson.dumps(
            [self.db, self.params, self.known], option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
        )


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
