"""Typed tasks: one published test case (database, SOP, user knowledge, expected outcome)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sopbench.constraints import ActionGraph, Expr


@dataclass(frozen=True, slots=True)
class Task:
    """One test case of a domain.

    The dictionaries are the decoded JSON itself, shared, not copied: treat them as read-only and
    deep-copy ``initial_database`` before running a system on it.
    """

    domain: str
    goal: str
    # Position in the domain's task file (goal keys, then list order); None for a task embedded in a
    # trajectory record, whose position is not recorded (records can be misaligned, spec quirk Q15).
    index: int | None
    initial_database: dict[str, Any]
    constraint_parameters: dict[str, Any]
    user_known: dict[str, Any]
    constraints: Expr | None
    constraints_original: Expr | None
    action_should_succeed: bool
    user_instruction: str
    user_prompt: str
    directed_action_graph: ActionGraph
    # The published encodings, kept so that writing a task back is byte-exact.
    constraints_json: Any = field(default=None, repr=False, compare=False)
    constraints_original_json: Any = field(default=None, repr=False, compare=False)
    # Fields this model does not know (e.g. ``assistant_prompt`` in some trajectory files).
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    # ``task_digest``'s answer once computed: a task is immutable, and the loader shares one object
    # among the records of every file that embeds it, so each is digested once, not per record.
    _digest: str = field(default="", init=False, repr=False, compare=False)


def task_ids(tasks: Iterable[Task]) -> list[str]:
    """Each task's id, ``"<domain>/<goal>[<i>]"``, i its position in its goal's list in the order given
    (a task file's order): how run folders, exports, scored trajectory files and the viewer name a task."""
    seen: dict[tuple[str, str], int] = {}
    ids = []
    for task in tasks:
        key = (task.domain, task.goal)
        position = seen.get(key, 0)
        seen[key] = position + 1
        ids.append(f"{task.domain}/{task.goal}[{position}]")
    return ids
