"""Reading a run folder without changing it: the one way other packages read stored episodes.

The store is opened read-only (a viewer or a report must never create, migrate or lock a run that
``sopbench run`` may still be writing), and every completed episode comes back as a trajectory
``Record`` of the published shape, so that readers score and show stored and published runs alike.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sopbench.tasks import LoadError, Task
from sopbench.traces import Record

from ._export import tasks_by_id
from ._record import episode_record
from ._row import EndReason, Status
from ._spec import RunSpecError
from ._store import OnDamaged, StoreError, default_tasks_path, open_existing

__all__ = ["StoredEpisode", "StoredRun", "read_run_folder"]


@dataclass(frozen=True, slots=True)
class StoredEpisode:
    """One stored episode: how it was played, and (when completed) its transcript as a record."""

    task_id: str
    run: int
    domain: str
    goal: str
    agent: str
    model: str | None
    tool_mode: str | None
    tool_list: str
    user: str
    status: Status
    end_reason: EndReason
    # The transcript as a record: a completed episode's, and an infra_error episode's when it got
    # as far as a message (shown, never scored); None for one that ended before any.
    record: Record | None
    # What its model was shown (stored once per run, see ``Store.shown``): None for an agent that
    # calls no model, or a store written before it was kept.
    system_prompt: str | None = None
    tools: tuple[dict[str, Any], ...] | None = None
    # How it went, as stored: what an infra_error was, tokens ({prompt_tokens, completion_tokens}
    # of the agent and of the user), wall time, tries, and the malformed calls and replies.
    reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    user_usage: dict[str, Any] = field(default_factory=dict)
    latency_s: float | None = None
    attempts: int = 1
    problems: tuple[Any, ...] = ()

    @property
    def configuration(self) -> str:
        """The run configuration in one label: model (or agent), tool mode, tool list, user."""
        parts = [self.model or self.agent]
        if self.tool_mode:
            parts.append(self.tool_mode)
        parts.append(f"tools {self.tool_list}")
        if self.user != "none":
            parts.append(f"user {self.user}")
        return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class StoredRun:
    folder: Path
    config: dict[str, Any] | None
    episodes: tuple[StoredEpisode, ...]
    # What the run is (versions, task set, settings, creation time): None for a schema-1 store.
    manifest: dict[str, Any] | None = None


def read_run_folder(folder: Path, *, on_damaged: OnDamaged | None = None) -> StoredRun:
    """Every episode of the run folder ``folder``, in store order (domain, task, run).

    The store is opened read-only (``open_existing``); a damaged row is named to ``on_damaged`` and
    skipped. Raises ``StoreError`` when the folder holds no store, the store cannot be read (damaged,
    another schema version), or the tasks it was played on cannot be found.
    """
    store = open_existing(folder)
    try:
        manifest = store.manifest()
        config = (manifest or {}).get("config") or store.legacy_config()
        tasks_path = default_tasks_path(store)
        rows = list(store.rows(on_damaged=on_damaged))
        shown = store.shown()
    except sqlite3.Error as exc:
        raise StoreError(f"{store.path}: cannot read the store ({exc})") from None
    finally:
        store.close()
    tasks: dict[str, dict[str, Task]] = {}
    episodes = []
    # Each distinct prompt and tool list is one object, shared by the episodes that got it.
    tool_lists = {digest: tuple(tools) for digest, tools in shown["tools"].items()}
    shown_to = {(e["task_id"], e["run"]): e for e in shown["episodes"]}
    for row in rows:
        record = None
        if row["status"] == "completed" or row["messages"]:
            domain = row["domain"]
            if domain not in tasks:
                try:
                    tasks[domain] = tasks_by_id(tasks_path, domain)
                except (LoadError, RunSpecError, OSError, KeyError, ValueError) as exc:
                    raise StoreError(
                        f"{store.path}: the {domain} tasks it was played on cannot be read ({exc})"
                    ) from None
            task = tasks[domain].get(row["task_id"])
            if task is None:
                raise StoreError(f"{store.path}: task {row['task_id']} is not in {tasks_path}")
            if row["status"] == "completed":
                record = episode_record(task, row["messages"], row["final_database"], tool_list=row["tool_list"])
            else:
                record = _unfinished_record(task, row)
        got = shown_to.get((row["task_id"], row["run"]), {})
        episodes.append(
            StoredEpisode(
                task_id=row["task_id"],
                run=row["run"],
                domain=row["domain"],
                goal=row["goal"],
                agent=row["agent"],
                model=row["model"],
                tool_mode=row["tool_mode"],
                tool_list=row["tool_list"],
                user=row["user"],
                status=row["status"],
                end_reason=row["end_reason"],
                record=record,
                system_prompt=shown["system_prompts"].get(got.get("system_prompt")),
                tools=tool_lists.get(got.get("tools")),
                reason=row["reason"],
                usage=row["usage"] or {},
                user_usage=row["user_usage"] or {},
                latency_s=row["latency_s"],
                attempts=row["attempts"] or 1,
                problems=tuple(row["problems"] or ()),
            )
        )
    return StoredRun(folder, config, tuple(episodes), manifest)


def _unfinished_record(task: Task, row: dict[str, Any]) -> Record | None:
    """An infra_error episode's transcript up to the failure, to be shown (never scored): it has no
    final database (an empty one stands in); None when what was kept cannot make a record."""
    try:
        return episode_record(task, row["messages"], row["final_database"] or {}, tool_list=row["tool_list"])
    except LoadError:
        return None
