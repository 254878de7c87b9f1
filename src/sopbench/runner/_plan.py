"""Which episodes a run plays: the task files, the selected tasks, each episode and its seed."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sopbench.constraints import singles
from sopbench.domains import UnknownDomain, get_domain, ordered_domains
from sopbench.tasks import LoadError, Task, domain_task_files, load_tasks, task_file_domain, task_ids

from ._spec import RunSpec, RunSpecError


@dataclass(frozen=True, slots=True)
class Episode:
    """One episode to run: a task, its id, the run number and the episode's seed."""

    task: Task
    task_id: str
    run: int
    seed: int


# ---- task selection ---------------------------------------------------------------------------------
def task_files(path: Path, domains: Iterable[str]) -> dict[str, Path]:
    """Domain -> task file, from a task file or a folder of ``<domain>_tasks.json[.gz]``."""
    wanted = list(domains)
    if path.is_file():
        try:
            domain = task_file_domain(path)
        except LoadError as exc:
            raise RunSpecError(str(exc)) from None
        if wanted != ["all"] and wanted != [domain]:
            raise RunSpecError(f"{path} holds the {domain} tasks, not {', '.join(wanted)}")
        return {domain: path}
    if not path.is_dir():
        raise RunSpecError(f"no such task file or folder: {path}")
    try:
        found = domain_task_files(path)  # both forms of one domain's file are refused
    except LoadError as exc:
        raise RunSpecError(str(exc)) from None
    if not found:
        raise RunSpecError(f"{path} holds no <domain>_tasks.json[.gz] file")
    if wanted == ["all"]:
        return {d: found[d] for d in ordered_domains(found)}
    missing = [d for d in wanted if d not in found]
    if missing:
        raise RunSpecError(
            f"no task file for {', '.join(missing)} in {path} (found: {', '.join(sorted(found))})"
        )
    return {d: found[d] for d in wanted}


def select_tasks(config: RunSpec) -> list[tuple[Task, str]]:
    """The tasks of the run with their ids, in domain order then file order, ``limit`` per domain."""
    selected: list[tuple[Task, str]] = []
    for domain, file in task_files(config.tasks_path, config.domains).items():
        try:
            tasks = load_tasks(file, domain=domain)
        except LoadError as exc:
            raise RunSpecError(str(exc)) from None
        pairs = list(zip(tasks, task_ids(tasks), strict=True))
        pairs = pairs[: config.limit] if config.limit else pairs
        _check_playable(file, domain, pairs)
        selected.extend(pairs)
    return selected


def _check_playable(file: Path, domain: str, pairs: list[tuple[Task, str]]) -> None:
    """A task file of a domain sopbench does not know, a task whose goal is not a tool of its domain,
    or whose SOP names a check, tool or link its domain does not have: ``RunSpecError`` naming it
    (before any episode is played)."""
    try:
        known_domain = get_domain(domain)
    except UnknownDomain as exc:
        raise RunSpecError(f"{file}: {str(exc).strip(chr(34))}") from None
    known = set(known_domain.tools) | set(known_domain.checks) | set(known_domain.catalogue.links)
    for task, task_id in pairs:
        if task.goal not in known_domain.tools:  # its episodes could never be scored: not retried
            raise RunSpecError(
                f"{file}: task {task_id}: its goal {task.goal!r} is not a tool of the {domain} domain"
            )
        for expr in (task.constraints, task.constraints_original):
            unknown = sorted({single.name for single in singles(expr)} - known)
            if unknown:
                raise RunSpecError(
                    f"{file}: task {task_id}: its constraints name {', '.join(map(repr, unknown))}, "
                    f"which the {domain} domain has no check, tool or link for"
                )


def episode_seed(seed: int, task_id: str, run: int) -> int:
    """A seed per episode, stable across processes and concurrency levels."""
    digest = hashlib.sha256(f"{seed}:{task_id}:{run}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


class Plan:
    """The episodes of a run (each selected task, ``runs`` times), made one at a time as they are
    taken: ``runs`` may be 1,000 for every task, so they are never all held at once (``run --runs
    100000000`` once grew to gigabytes while planning, and did not hear Ctrl-C)."""

    def __init__(self, config: RunSpec, selected: list[tuple[Task, str]]) -> None:
        self.seed = config.seed
        self.runs = config.runs
        self.selected = selected
        self._ids = frozenset(task_id for _, task_id in selected)

    def __len__(self) -> int:
        return len(self.selected) * self.runs

    def __iter__(self) -> Iterator[Episode]:
        for task, task_id in self.selected:
            for run in range(self.runs):
                yield Episode(task, task_id, run, episode_seed(self.seed, task_id, run))

    def __contains__(self, key: object) -> bool:
        """Whether ``(task_id, run)`` is an episode of this plan."""
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        task_id, run = key
        return isinstance(run, int) and 0 <= run < self.runs and task_id in self._ids


def plan_episodes(config: RunSpec, selected: list[tuple[Task, str]]) -> Plan:
    return Plan(config, selected)


def with_ids(tasks: list[Task]) -> list[tuple[Task, str]]:
    return list(zip(tasks, task_ids(tasks), strict=True))
