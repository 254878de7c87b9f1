"""Reading a run folder without changing it: ``read_run``, the one way stored runs are read.

Modelled on Inspect's ``read_eval_log``: one call gives the run (``StoredRun``) with its manifest,
the tasks' digests, what the models were shown and every episode as its typed row
(``EpisodeRow``), and, when asked, each episode's transcript as a trajectory ``Record`` of the
published shape, so that readers score and show stored and published runs alike. ``read_rows``
is its rows alone, streamed (for a reader that needs no more, such as the end-of-run summary).

The store is opened read-only (a viewer or a report must never create, migrate or lock a run that
``sopbench run`` may still be writing): a store of an earlier schema is read as it is.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sopbench.tasks import LoadError, Task
from sopbench.traces import Record

from ._export import tasks_by_id
from ._manifest import Manifest
from ._record import episode_record
from ._row import EpisodeRow
from ._spec import RunSpecError
from ._store import OnDamaged, StoreError, open_existing, tasks_path_of

__all__ = ["StoredEpisode", "StoredRun", "read_run"]


@dataclass(frozen=True, slots=True)
class StoredEpisode:
    """One stored episode: its row, its transcript as a record (when asked for) and what its model
    was shown."""

    row: EpisodeRow
    # The transcript as a record: a completed episode's, and an infra_error episode's when it got
    # as far as a message (shown, never scored); None for one that ended before any, or when the
    # run was read without records.
    record: Record | None = None
    # What its model was shown (stored once per run, see ``Store.shown``): None for an agent that
    # calls no model, or a store written before it was kept.
    system_prompt: str | None = None
    tools: tuple[dict[str, Any], ...] | None = None

    @property
    def configuration(self) -> str:
        """The run configuration in one label: model (or agent), tool mode, tool list, user."""
        row = self.row
        parts = [row.model or row.agent]
        if row.tool_mode:
            parts.append(row.tool_mode)
        parts.append(f"tools {row.tool_list}")
        if row.user != "none":
            parts.append(f"user {row.user}")
        return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A run folder as ``read_run`` reads it."""

    folder: Path
    schema_version: int
    # What the run is (versions, task set, settings, creation time): None for a schema-1 store.
    manifest: Manifest | None
    # The run's identity: the manifest's, or the configuration a schema-1 store was bound to.
    config: dict[str, Any] | None
    noted_tasks: str | None  # the task path a schema-1 store noted
    task_digests: dict[str, str]  # task id -> sha256 of the task as played (empty for schema 1)
    # What the models were shown, as ``Store.shown`` gives it.
    shown: dict[str, Any]
    episodes: tuple[StoredEpisode, ...]  # in store order (domain, task, run); none with header_only

    @property
    def rows(self) -> tuple[EpisodeRow, ...]:
        return tuple(episode.row for episode in self.episodes)

    @property
    def tasks_path(self) -> Path:
        """The tasks it was played on (``default_tasks_path``; the generated set is built on first use)."""
        return tasks_path_of(self.manifest, self.noted_tasks)


def read_run(
    folder: Path,
    *,
    header_only: bool = False,
    records: bool = True,
    on_damaged: OnDamaged | None = None,
) -> StoredRun:
    """The run folder ``folder``: its manifest and every episode, in store order (domain, task, run).

    ``header_only``: the manifest, identity, task set and digests only, no episode. ``records``:
    also each episode's transcript as a ``Record`` (which needs the tasks it was played on). The
    store is opened read-only (``open_existing``); a damaged row is named to ``on_damaged`` and
    skipped (raised without one). Raises ``StoreError`` when the folder holds no store, the store
    cannot be read (damaged, a newer schema), or (with ``records``) the tasks it was played on
    cannot be found.
    """
    store = open_existing(folder)
    try:
        manifest = store.manifest()
        config = manifest.config if manifest is not None else store.legacy_config()
        noted = store.note("tasks")
        digests = store.task_digests()
        rows = [] if header_only else list(store.rows(on_damaged=on_damaged))
        shown = store.shown()
        version = store.version
    except sqlite3.Error as exc:
        raise StoreError(f"{store.path}: cannot read the store ({exc})") from None
    finally:
        store.close()
    episodes = []
    tasks = _Tasks(store.path, tasks_path_of(manifest, noted)) if records and rows else None
    # Each distinct prompt and tool list is one object, shared by the episodes that got it.
    tool_lists = {digest: tuple(tools) for digest, tools in shown["tools"].items()}
    shown_to = {(e["task_id"], e["run"]): e for e in shown["episodes"]}
    for row in rows:
        got = shown_to.get((row.task_id, row.run), {})
        episodes.append(
            StoredEpisode(
                row=row,
                record=None if tasks is None else tasks.record(row),
                system_prompt=shown["system_prompts"].get(got.get("system_prompt")),
                tools=tool_lists.get(got.get("tools")),
            )
        )
    return StoredRun(folder, version, manifest, config, noted, digests, shown, tuple(episodes))


def read_rows(folder: Path, *, on_damaged: OnDamaged | None = None) -> Iterator[EpisodeRow]:
    """The episode rows of the run folder ``folder`` one at a time, in store order, and nothing else:
    ``read_run``'s rows without holding them all (the end-of-run summary reads a folder of any size
    this way). Errors as ``read_run``'s."""
    store = open_existing(folder)
    try:
        yield from store.rows(on_damaged=on_damaged)
    except sqlite3.Error as exc:
        raise StoreError(f"{store.path}: cannot read the store ({exc})") from None
    finally:
        store.close()


class _Tasks:
    """The tasks a run was played on, each domain's file read when first needed."""

    def __init__(self, store_path: Path, tasks_path: Path) -> None:
        self.store_path = store_path
        self.tasks_path = tasks_path
        self.by_domain: dict[str, dict[str, Task]] = {}

    def record(self, row: EpisodeRow) -> Record | None:
        """The episode's transcript as a record: None for an infra_error episode that ended before
        any message, or whose kept messages cannot make one (shown, never scored)."""
        if row.status != "completed" and not row.messages:
            return None
        if row.domain not in self.by_domain:
            try:
                self.by_domain[row.domain] = tasks_by_id(self.tasks_path, row.domain)
            except (LoadError, RunSpecError, OSError, KeyError, ValueError) as exc:
                raise StoreError(
                    f"{self.store_path}: the {row.domain} tasks it was played on cannot be read ({exc})"
                ) from None
        task = self.by_domain[row.domain].get(row.task_id)
        if task is None:
            raise StoreError(f"{self.store_path}: task {row.task_id} is not in {self.tasks_path}")
        if row.status == "completed":
            return episode_record(task, row.messages, row.final_database, tool_list=row.tool_list)
        try:  # an infra_error episode has no final database: an empty one stands in
            return episode_record(task, row.messages, row.final_database or {}, tool_list=row.tool_list)
        except LoadError:
            return None
