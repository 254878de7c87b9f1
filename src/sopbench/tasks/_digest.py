"""A task's identity: its published encoding and the sha256 of that encoding.

Two tasks are the same task only when their digests agree: a run folder stores the digest of every
task it played (its manifest), and a trajectory file's task is digested the same way, so that a
comparison pairs only the same task, whatever its id, and a baseline is played on exactly the tasks
a source names.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sopbench.constraints import dump
from sopbench.evaluation import canonical_json

from ._model import Task

__all__ = ["task_digest", "task_json"]


def task_json(task: Task) -> dict[str, Any]:
    """The task in the published encoding, with ``user_goal``."""
    return {
        "initial_database": task.initial_database,
        "constraint_parameters": task.constraint_parameters,
        "user_known": task.user_known,
        "constraints": task.constraints_json if task.constraints_json is not None else dump(task.constraints),
        "constraints_original": (
            task.constraints_original_json
            if task.constraints_original_json is not None
            else dump(task.constraints_original)
        ),
        "action_should_succeed": task.action_should_succeed,
        "user_instruction": task.user_instruction,
        "user_prompt": task.user_prompt,
        "directed_action_graph": task.directed_action_graph.to_json(),
        "user_goal": task.goal,
    }


def task_digest(task: Task) -> str:
    """sha256 of the task's canonical JSON (the published encoding, with its goal)."""
    digest = task._digest
    if not digest:
        digest = hashlib.sha256(canonical_json(task_json(task))).hexdigest()
        object.__setattr__(task, "_digest", digest)
    return digest
