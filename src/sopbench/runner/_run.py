"""Running many episodes: task selection, bounded asyncio concurrency, scoring, storing, resuming."""

from __future__ import annotations

import asyncio
import functools
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, Literal

from sopbench.agents import AgentRequestError
from sopbench.agents.openai import ReplyCache
from sopbench.scoring import summarize
from sopbench.statistics import summarize_usage
from sopbench.tasks import Task

from ._baselines import baseline_summaries
from ._caching import count_cache, open_caches
from ._episode import AgentContractError
from ._folder import open_run_folder
from ._manifest import TaskSet
from ._outcome import CacheCounts, Progress, ProgressCallback, ProtocolCounts, RunInterrupted, RunReport
from ._plan import Episode, Plan, select_tasks
from ._read import read_rows
from ._row import never_replied
from ._scored import EpisodePlayer, play_row, row_score
from ._spec import RunSpec, RunSpecError
from ._store import Store, dumps

# After Ctrl-C or SIGTERM, episodes in flight may finish for this long; then they are abandoned (not
# stored: resume runs them again). A second signal abandons them at once.
INTERRUPT_GRACE_S = 1.5


# ---- the run ------------------------------------------------------------------------------------------
class _Signals:
    """Ctrl-C and SIGTERM while episodes run: the first stops the scheduling (workers take no new
    episode), a second abandons the episodes in flight. Installed only in the main thread."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _Signals:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _on_signal(self, signum: int, frame: object) -> None:
        self.received.append(signum)


class _Permits:
    """Named limits on the episodes in flight (a configuration's ``concurrency``, an endpoint shared by
    several configurations): an episode starts only when every limit it is subject to has room."""

    def __init__(self, limits: Mapping[str, int]) -> None:
        self.limits = dict(limits)
        self.held: dict[str, int] = dict.fromkeys(self.limits, 0)

    def free(self, names: tuple[str, ...]) -> bool:
        return all(self.held[n] < self.limits[n] for n in names)

    def take(self, names: tuple[str, ...]) -> None:
        for n in names:
            self.held[n] += 1

    def give(self, names: tuple[str, ...]) -> None:
        for n in names:
            self.held[n] -= 1


class _Lane:
    """A configuration's episodes still to play, drawn from its plan one at a time when taken."""

    def __init__(self, episodes: Iterator[Episode], count: int) -> None:
        self._episodes = episodes
        self._next = next(episodes, None)
        self.count = count  # how many it held at the start

    def __bool__(self) -> bool:
        return self._next is not None

    def popleft(self) -> Episode:
        episode = self._next
        assert episode is not None, "popleft of an empty lane"
        self._next = next(self._episodes, None)
        return episode

    def clear(self) -> None:
        self._next = None


@dataclass
class _Job:
    """One configuration of a run: its plan, its open store, its counts."""

    config: RunSpec
    selected: list[tuple[Task, str]]
    task_set: TaskSet
    episodes: Plan
    store: Store
    counts: Progress
    on_progress: ProgressCallback | None
    limits: tuple[str, ...]  # the named limits each of its episodes is subject to
    refused: str | None = None
    cache: ReplyCache | None = None  # its recorded replies (``--cache``)
    cache_counts: CacheCounts | None = None


async def _run_async(
    jobs: list[_Job],
    todo: list[_Lane],
    permits: _Permits,
    concurrency: int,
    signals: _Signals,
    player: EpisodePlayer = play_row,
) -> None:
    """Every job's episodes to do, ``concurrency`` at once over all of them: an idle worker takes the
    next episode of the first job (file order) whose limits have room, so that the configurations
    run side by side and a busy endpoint holds back only its own configurations."""
    finished = [job.store.finished() for job in jobs]
    lanes = todo
    room = asyncio.Condition()

    def next_episode() -> tuple[int, Episode] | Literal["wait"] | None:
        """(job, episode) to play, None when nothing is left, "wait" when all that is left waits."""
        left = False
        for index, lane in enumerate(lanes):
            if not lane:
                continue
            left = True
            if permits.free(jobs[index].limits):
                permits.take(jobs[index].limits)
                return index, lane.popleft()
        return "wait" if left else None

    async def play_one(index: int, episode: Episode) -> None:
        job = jobs[index]
        earlier = finished[index].get((episode.task_id, episode.run))
        attempts = (earlier.attempts if earlier else 0) + 1
        cache = job.cache
        session = None
        if cache is not None:  # the replies recorded for it; in this process, any other too
            session = cache.session(episode.task_id, episode.run, episode.seed, local=player is play_row)
        try:
            row, shown, recorded = await player(job.config, episode, attempts, session)
        except AgentRequestError as exc:  # every episode of it would fail alike: stop scheduling it
            job.refused = job.refused or str(exc)
            lanes[index].clear()
            return
        except AgentContractError as exc:
            job.refused = job.refused or f"agent {job.config.agent!r} is broken: {exc}"
            lanes[index].clear()
            return
        notes: list[tuple[str, str]] = []
        if cache is not None and recorded is not None:
            # The replies first: a run killed between the two leaves an entry no row uses, never a
            # row whose replies are missing. The run folder notes which entries each episode used
            # (``export --with-cache``).
            cache.save(recorded)
            count_cache(job.cache_counts, recorded, job.config.replies)
            if recorded.uses:
                notes.append((f"cache.episode.{episode.task_id}#{episode.run}", dumps(recorded.uses)))
                notes.append(("cache.source", str(cache.path)))
        # What the agent was shown (system prompt, tool schemas) travels with the row; the store
        # keeps each distinct one once.
        job.store.put(row, shown, notes)
        counts = job.counts
        counts.done += 1
        counts.last = episode.task_id
        if never_replied(row):
            pass  # neither scored nor an infra_error: counted apart in the report
        elif row.status == "completed":
            counts.scored += 1
            counts.passed += row.passed or 0
        else:
            counts.infra_errors += 1
        if job.on_progress is not None:
            job.on_progress(counts)

    async def worker() -> None:
        while not signals.received:
            async with room:
                while (chosen := next_episode()) == "wait" and not signals.received:
                    await room.wait()
            if chosen is None or chosen == "wait":
                return
            index, episode = chosen
            try:
                await play_one(index, episode)
            finally:
                permits.give(jobs[index].limits)
                async with room:
                    room.notify_all()
            await asyncio.sleep(0)  # let the other workers (and a signal's stop) through

    total = sum(lane.count for lane in lanes)
    pending = {asyncio.create_task(worker()) for _ in range(min(concurrency, max(total, 1)))}
    stopping_since: float | None = None
    try:
        while pending:
            done, pending = await asyncio.wait(pending, timeout=0.05, return_when=asyncio.FIRST_EXCEPTION)
            failures = [exc for task in done if (exc := task.exception()) is not None]
            if failures:
                raise failures[0]
            if signals.received and stopping_since is None:
                stopping_since = time.monotonic()
                async with room:
                    room.notify_all()  # workers waiting for room take no new episode
            if stopping_since is not None and (
                len(signals.received) > 1 or time.monotonic() - stopping_since > INTERRUPT_GRACE_S
            ):
                break  # the episodes still in flight are abandoned (not stored)
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


class NoTaskToPlay(RunSpecError):
    """The task files hold no task of the run's domains: refused before any folder is made or bound."""


class RunRefused(RunSpecError):
    """An endpoint refused a request in a way no retry fixes (a wrong key or URL, an unknown model, a
    request the server calls invalid), or an agent broke its contract: an error of the invocation.
    Episodes finished before it are stored; the one refused is not (the same command runs it once
    the cause is fixed). ``reports``: every configuration's report (as ``run_many`` returns them),
    each refused one with its ``refused`` reason, so that the others can still be shown."""

    def __init__(self, message: str, reports: list[RunReport] | None = None) -> None:
        super().__init__(message)
        self.reports = reports or []


def run(
    config: RunSpec, progress: ProgressCallback | None = None, player: EpisodePlayer | None = None
) -> RunReport:
    """Run (or resume) every episode of ``config`` into ``config.output/results.sqlite``.

    Finished episodes are skipped; ``infra_error`` ones are run again. Raises ``RunSpecError``
    for a configuration that cannot run, ``StoreError`` for a folder holding another run (or in use
    by another process), and ``RunInterrupted`` after Ctrl-C or SIGTERM (what finished is stored).
    ``player`` plays the episodes elsewhere (a cluster); this process still writes every row.
    """
    on_progress = None if progress is None else (lambda _index, counts: progress(counts))
    [(report, selected)] = _run_many([config], config.concurrency, on_progress, player, {}, None)
    if config.baselines:  # on the tasks the agent was scored on, so that the comparison is fair
        scored = set(report.scored_tasks)
        report.baselines = baseline_summaries(config, [(t, i) for t, i in selected if i in scored])
    return report


def run_many(
    configs: Sequence[RunSpec],
    *,
    concurrency: int,
    progress: Callable[[int, Progress], None] | None = None,
    player: EpisodePlayer | None = None,
    shared_limits: Mapping[str, int] | None = None,
    limited_by: Sequence[Sequence[str]] | None = None,
) -> list[RunReport]:
    """Run (or resume) several configurations side by side, each into its own run folder, with at
    most ``concurrency`` episodes in flight over all of them and at most ``config.concurrency`` in
    each. ``shared_limits`` names further limits (an endpoint used by several configurations) and
    ``limited_by[i]`` those configuration ``i`` is subject to. ``progress(i, counts)`` after each
    finished episode of configuration ``i``. Every folder is claimed (locked, its manifest checked)
    before any episode; errors as ``run``, a refused endpoint after the others have finished. No
    baselines (``run`` adds them)."""
    done = _run_many(configs, concurrency, progress, player, shared_limits or {}, limited_by)
    return [report for report, _ in done]


def _run_many(
    configs: Sequence[RunSpec],
    concurrency: int,
    progress: Callable[[int, Progress], None] | None,
    player: EpisodePlayer | None,
    shared_limits: Mapping[str, int],
    limited_by: Sequence[Sequence[str]] | None,
) -> list[tuple[RunReport, list[tuple[Task, str]]]]:
    if player is None:
        for config in configs:
            if config.via != "direct":
                raise RunSpecError(
                    f"via {config.via!r}: the episodes are played by sopbench.mcp's player "
                    "(`sopbench run --via mcp`, or run(spec, player=sopbench.mcp.mcp_player()))"
                )
    shared = dict(shared_limits)
    limits = {**shared, **{f"configuration {i}": c.concurrency for i, c in enumerate(configs)}}
    tasks: dict[str, list[tuple[Task, str]]] = {}  # one selection per task set, domains and limit
    jobs: list[_Job] = []
    todo: list[_Lane] = []
    with ExitStack() as stack, _Signals() as signals:
        caches = open_caches(configs, stack)  # a cache that cannot be used: refused before any folder
        for index, config in enumerate(configs):
            key = config.model_dump_json(include={"tasks", "domains", "limit"})
            selected = tasks[key] = tasks[key] if key in tasks else select_tasks(config)
            if not selected:  # refused before its folder is made or bound to no task
                raise NoTaskToPlay(f"{config.tasks_path} holds no task to play ({', '.join(config.domains)})")
            folder = open_run_folder(stack, config, selected)
            task_set, episodes, store = folder.task_set, folder.episodes, folder.store
            done = folder.done()
            todo.append(
                _Lane((e for e in episodes if (e.task_id, e.run) not in done), len(episodes) - len(done))
            )
            counts = Progress(total=len(episodes), skipped=len(done))
            names = (f"configuration {index}", *(limited_by[index] if limited_by else ()))
            on_progress = None if progress is None else functools.partial(progress, index)
            job = _Job(config, selected, task_set, episodes, store, counts, on_progress, names)
            if config.cache is not None and config.replies != "off":
                job.cache = caches[(config.cache.resolve(), config.replies)]
                job.cache_counts = CacheCounts(config.cache, config.replies)
            jobs.append(job)
        for job in jobs:
            if job.on_progress is not None:
                job.on_progress(job.counts)
        asyncio.run(_run_async(jobs, todo, _Permits(limits), concurrency, signals, player or play_row))
        if signals.received:
            raise RunInterrupted(
                signals.received[0],
                jobs[0].counts if len(jobs) == 1 else _sum(jobs),
                [(job.config.output, job.counts) for job in jobs],
            )
        reports = [_report(job.config, job.episodes, job.counts) for job in jobs]
    for report, job in zip(reports, jobs, strict=True):
        report.task_set = job.task_set
        report.refused = job.refused
        if job.cache is not None and job.cache_counts is not None:
            report.cache = job.cache_counts
            report.cache.problems = list(job.cache.problems)
            damaged = len(job.cache.damaged_seen)
            if damaged:
                told = report.cache.notes if job.cache.mode == "read-write" else report.cache.problems
                again = "recorded again" if job.cache.mode == "read-write" else "not used"
                told.append(f"--cache {job.cache.path}: {damaged} damaged entries were {again}")
    refused = [job for job in jobs if job.refused]
    if refused:
        named = [
            job.refused if len(jobs) == 1 else f"{job.config.output.name}: {job.refused}" for job in refused
        ]
        raise RunRefused(f"the run stopped: {'; '.join(str(n) for n in named)}", reports)
    return [(report, job.selected) for report, job in zip(reports, jobs, strict=True)]


def _sum(jobs: list[_Job]) -> Progress:
    counts = Progress()
    for job in jobs:
        for name in ("total", "skipped", "done", "scored", "passed", "infra_errors"):
            setattr(counts, name, getattr(counts, name) + getattr(job.counts, name))
    return counts


def _report(config: RunSpec, episodes: Plan, counts: Progress) -> RunReport:
    wanted = episodes
    scores, infra, reasons = [], 0, []
    damaged: list[str] = []
    no_reply: dict[str, int] = {}
    scored_tasks: dict[str, None] = {}
    timed_out = 0
    queue_s = model_s = 0.0
    protocol: dict[str, ProtocolCounts] = {}
    # Read back as every reader reads a run folder (the writer's connection is still open: WAL).
    for row in read_rows(config.output, on_damaged=damaged.append):
        if (row.task_id, row.run) not in wanted:
            continue
        usage = row.usage or {}
        timed_out += usage.get("timed_out_requests", 0) if isinstance(usage, dict) else 0
        for side in (usage, row.user_usage or {}):
            if isinstance(side, dict):
                queue_s += side.get("queue_s", 0.0)
                model_s += side.get("model_s", 0.0)
        if never_replied(row):
            no_reply[row.end_reason] = no_reply.get(row.end_reason, 0) + 1
        elif row.status == "completed":
            scores.append(row_score(row))
            scored_tasks[row.task_id] = None
            for key in (row.domain, "all"):
                protocol.setdefault(key, ProtocolCounts()).add(row)
        else:
            infra += 1
            reasons.append(f"{row.task_id} run {row.run}: {row.reason}")
    return RunReport(
        output=config.output,
        episodes=len(episodes),
        skipped=counts.skipped,
        ran=counts.done,
        completed=len(scores),
        infra_errors=infra,
        summary=summarize(scores),
        infra_reasons=reasons,
        damaged=damaged,
        usage=summarize_usage([score.outcome() for score in scores]),
        no_reply=no_reply,
        scored_tasks=list(scored_tasks),
        timed_out_requests=timed_out,
        queue_s=queue_s,
        model_s=model_s,
        protocol=protocol,
    )
