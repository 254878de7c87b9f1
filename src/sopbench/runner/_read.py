"""Reading a run folder without changing it: the one way other packages read stored episodes.

The store is opened read-only (a viewer or a report must never create, migrate or lock a run that
``sopbench run`` may still be writing), and every completed episode comes back as a trajectory
``Record`` of the published shape, so that readers score and show stored and published runs alike.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from sopbench.tasks import LoadError, Task
from sopbench.traces import Record

from ._export import _tasks_by_index
from ._record import episode_record
from ._store import SCHEMA_VERSION, STORE_NAME, StoreError

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
    status: str  # "completed" or "infra_error"
    end_reason: str
    record: Record | None  # None for an infra_error episode (nothing to score)

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


def read_run_folder(folder: Path) -> StoredRun:
    """Every episode of the run folder ``folder``, in store order (domain, task, run).

    Raises ``StoreError`` when the folder holds no store, the store cannot be read (damaged, another
    schema version), or the tasks it was played on cannot be found.
    """
    path = folder / STORE_NAME
    if not path.is_file():
        raise StoreError(f"{folder}: no {STORE_NAME} here (run `sopbench run --output {folder}` first)")
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open the store ({exc})") from None
    try:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        version = meta.get("schema_version")
        # Columns are read by name, so older schemas read as well; a newer one may mean anything.
        if version is not None and int(version) > SCHEMA_VERSION:
            raise StoreError(f"{path}: schema version {version}, this sopbench reads version {SCHEMA_VERSION}")
        cursor = db.execute("SELECT * FROM episodes ORDER BY domain, task_index, run")
        names = [column[0] for column in cursor.description]
        rows = [dict(zip(names, values, strict=True)) for values in cursor]
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot read the store ({exc})") from None
    finally:
        db.close()
    config = orjson.loads(meta["config"]) if meta.get("config") else None
    if meta.get("tasks"):
        tasks_path = Path(meta["tasks"])
    else:  # a run without a note was played on the default task set
        from sopbench.generation import default_tasks_dir

        tasks_path = default_tasks_dir()
    tasks: dict[str, dict[int, Task]] = {}
    episodes = []
    for row in rows:
        record = None
        if row["status"] == "completed":
            domain = row["domain"]
            if domain not in tasks:
                try:
                    tasks[domain] = _tasks_by_index(tasks_path, domain)
                except (LoadError, OSError, KeyError, ValueError) as exc:
                    raise StoreError(f"{path}: the {domain} tasks it was played on cannot be read ({exc})") from None
            task = tasks[domain].get(row["task_index"])
            if task is None:
                raise StoreError(f"{path}: task {row['task_id']} is not in {tasks_path}")
            messages = orjson.loads(row["messages"])
            database = orjson.loads(row["final_database"]) if row["final_database"] is not None else None
            record = episode_record(task, messages, database, tool_list=row["tool_list"])
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
            )
        )
    return StoredRun(folder, config, tuple(episodes))
