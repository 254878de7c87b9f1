"""What one domain's generation gives: its task file (in the published layout) and its coverage
report (every combination, and why any of them has no task)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from sopbench.tasks import Task, task_from_json

from ._enumerate import Variant


@dataclass(frozen=True)
class Unrealised:
    """A combination no task was made for, and why."""

    goal: str
    variant: int
    assignment: list[list[Any]]
    outcome: bool
    reason: str
    missing: int  # how many of the asked-for tasks are missing


@dataclass
class DomainReport:
    """Coverage of one domain's generation."""

    domain: str
    seed: int
    per_assignment: int
    goals: int = 0
    variants: int = 0
    assignments: int = 0
    realised: int = 0  # combinations with every asked-for task made
    tasks: int = 0
    must_succeed: int = 0
    verified: int = 0  # tasks whose reference path on the strict oracle gave the expected outcome
    unrealisable: list[Unrealised] = field(default_factory=list)  # should have been realised, and was not
    excluded: list[Unrealised] = field(default_factory=list)  # left out by design (hidden prerequisite)
    hidden_prerequisite_tasks: int = 0  # made anyway, on request, and marked
    seconds: float = 0.0
    combinations: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "seed": self.seed,
            "per_assignment": self.per_assignment,
            "goals": self.goals,
            "variants": self.variants,
            "assignments": self.assignments,
            "realised": self.realised,
            "tasks": self.tasks,
            "must_succeed": self.must_succeed,
            "verified": self.verified,
            "unrealisable": [u.__dict__ for u in self.unrealisable],
            "excluded": [u.__dict__ for u in self.excluded],
            "hidden_prerequisite_tasks": self.hidden_prerequisite_tasks,
            "seconds": round(self.seconds, 3),
            "combinations": self.combinations,
        }


@dataclass
class DomainTasks:
    """A generated task file (goal -> tasks, in the published layout) and its report."""

    domain: str
    tasks: dict[str, list[dict[str, Any]]]
    report: DomainReport
    variants: list[Variant] = field(default_factory=list, repr=False)

    def to_json(self) -> bytes:
        return orjson.dumps(self.tasks, option=orjson.OPT_INDENT_2) + b"\n"

    def task_list(self) -> list[Task]:
        """The generated tasks as loaded task objects (goal order, then generation order)."""
        return [
            task_from_json(entry, domain=self.domain, goal=goal, index=i)
            for goal, entries in self.tasks.items()
            for i, entry in enumerate(entries)
        ]
