"""Claiming a run folder for writing: the store refused when foreign, the one-writer lock, the
manifest checked and recorded; shared by ``run`` and the front ends that play episodes themselves."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass

from sopbench.tasks import Task

from ._claim import claim, generated_seed
from ._lock import RunLock
from ._manifest import TaskSet
from ._plan import Plan, plan_episodes
from ._spec import RunSpec
from ._store import STORE_NAME, Store, open_existing


@dataclass
class RunFolder:
    """A run folder claimed for writing: its task set, its plan and its open store (the folder's
    lock held until the ``ExitStack`` it was opened on closes)."""

    task_set: TaskSet
    episodes: Plan
    store: Store

    def done(self) -> set[tuple[str, int]]:
        """The episodes of the plan the store holds as completed (a resume skips them)."""
        finished = self.store.finished().items()
        return {key for key, f in finished if f.status == "completed" and key in self.episodes}


def open_run_folder(stack: ExitStack, config: RunSpec, selected: list[tuple[Task, str]]) -> RunFolder:
    """Claim ``config.output`` for writing the episodes of ``selected``, as ``run`` does: a foreign
    store is refused, the one-writer lock is taken and the manifest checked (``StoreError`` when the
    folder holds another run, left as it was) and recorded. The lock and the store are released
    when ``stack`` closes. For front ends that play episodes themselves (``sopbench mcp serve``)."""
    task_set = TaskSet.of(config.tasks_path, generated_seed(config), selected)
    episodes = plan_episodes(config, selected)
    if (config.output / STORE_NAME).is_file():
        open_existing(config.output).close()  # a foreign, newer or empty file is refused before anything
    stack.enter_context(RunLock(config.output))
    manifest, played = claim(config, task_set)  # read-only: a refused folder is left as it was
    store = Store.for_run(config.output)
    stack.callback(store.close)
    store.record_manifest(manifest, played)
    return RunFolder(task_set, episodes, store)
