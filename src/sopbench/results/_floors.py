"""The floors (refuse-all, no-verify) beside a use case's figures: which scores' tasks they are
played on, and the one call that plays them.

Playing them is the runner's (``sopbench.runner``'s baselines: the one baselines module, which
also finds a source's tasks and says why they are unavailable); this module only chooses what to
hand it, so that every use case asks for the floors the same way. With a verdict cache
(``ScoringOptions.cache``) each floor is played once per task set (the tasks' ids and digests, in
order) and read back after: the tasks of a trajectory file whose verdicts came from the cache are
read from it only when a floor has to be played."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from sopbench.cache import VerdictCache
from sopbench.runner.baselines import (
    BASELINE_AGENTS,
    Baselines,
    play_baselines,
    source_baselines,
    source_tasks,
)
from sopbench.scoring import RunScore, load_records
from sopbench.tasks import Task, task_digest, task_ids

from ._options import ScoringOptions
from ._sources import Sources

__all__ = ["floor_sources", "floors_beside"]

DEFAULT_USERS = (None, "none", "default")

TaskKey = tuple[str, str]  # (task id, digest)


def floor_sources(scores: Sequence[RunScore]) -> list[RunScore]:
    """The scores whose tasks the floors are played on: those of the configurations with the
    default user when there are any. A published adversarial-user file holds other tasks (the same
    requests, pressed by the user), which would otherwise be pooled into the floors' Overall."""
    return [s for s in scores if s.config.user in DEFAULT_USERS] or list(scores)


def floors_beside(
    scores: Sequence[RunScore],
    sources: Sources,
    options: ScoringOptions,
    names: Sequence[str] = BASELINE_AGENTS,
) -> Baselines:
    """The floors of ``names`` played once on the tasks of ``scores`` (looked up in the manifests of
    ``sources``' run folders when the scores do not carry them), or on ``options.floor_tasks``,
    scored as ``options`` says. When some source's tasks cannot be found they are unavailable and
    say why (``Baselines.unavailable``): a floor on other tasks than the agents' is never shown."""
    if options.cache is None:
        return source_baselines(
            scores,
            sources.run_folders,
            options.protocol,
            names=names,
            tasks=options.floor_tasks,
            justify_refusal=options.justify_refusal,
        )
    if options.floor_tasks is not None:
        named = list(zip(options.floor_tasks, task_ids(options.floor_tasks), strict=True))
        keys = [(task_id, task_digest(task)) for task, task_id in named]
        return _through_cache(keys, lambda: named, options, names, options.cache)
    return _cached_floors(scores, sources, options, names, options.cache)


def _cached_floors(
    scores: Sequence[RunScore],
    sources: Sources,
    options: ScoringOptions,
    names: Sequence[str],
    cache: VerdictCache,
) -> Baselines:
    """``source_baselines`` through the cache: the same tasks in the same order, the same reasons."""
    folders = {folder.as_posix() for folder in sources.run_folders}
    tasks: dict[TaskKey, Task | None] = {}
    held_by: dict[TaskKey, str] = {}  # a trajectory file that holds the task
    others: list[RunScore] = []
    for score in scores:
        if score.task is None and (not score.stored_digest or score.source in folders):
            others.append(score)  # a run folder's (its manifest), or a score of unknown tasks
            continue
        key = (score.task_id, score.task_digest)
        if tasks.get(key) is None:
            tasks[key] = score.task
        held_by.setdefault(key, score.source)
    found, problems = source_tasks(others, sources.run_folders)
    if problems:
        return Baselines({}, "; ".join(problems))
    for task, task_id in found:
        tasks.setdefault((task_id, task_digest(task)), task)

    def chosen() -> list[tuple[Task, str]]:
        missing = _read_tasks(tasks, held_by)
        if missing:  # a file no longer holds the task it was scored with
            raise _Unavailable(
                "; ".join(f"{source}: the tasks it was played on are not known" for source in missing)
            )
        return [(task, task_id) for (task_id, _digest), task in tasks.items() if task is not None]

    return _through_cache(list(tasks), chosen, options, names, cache)


def _through_cache(
    keys: list[TaskKey],
    chosen: Callable[[], list[tuple[Task, str]]],
    options: ScoringOptions,
    names: Sequence[str],
    cache: VerdictCache,
) -> Baselines:
    """Each floor of ``names`` on the tasks named by ``keys``: read from the cache, else played on
    ``chosen()`` (asked for only then: finding a task may mean reading its file again)."""

    def play(name: str) -> list[RunScore]:
        return play_baselines(
            chosen(), options.protocol, names=(name,), justify_refusal=options.justify_refusal
        ).scores[name]

    try:
        return Baselines(
            {
                name: cache.floor_scores(
                    keys, name, options.protocol, options.justify_refusal, partial(play, name)
                )
                for name in names
            }
        )
    except _Unavailable as exc:
        return Baselines({}, str(exc))


class _Unavailable(Exception):
    pass


def _read_tasks(tasks: dict[TaskKey, Task | None], held_by: dict[TaskKey, str]) -> list[str]:
    """Fill in the tasks not known yet from the trajectory files that hold them (each file read
    once); the files that did not hold theirs."""
    wanted = [key for key, task in tasks.items() if task is None]
    files = list(dict.fromkeys(held_by[key] for key in wanted))
    for source in files:
        records = load_records(source, lambda error: None)
        for record, task_id in zip(records, task_ids(record.task for record in records), strict=True):
            key = (task_id, task_digest(record.task))
            if key in tasks and tasks[key] is None:
                tasks[key] = record.task
    return list(dict.fromkeys(held_by[key] for key in wanted if tasks[key] is None))
