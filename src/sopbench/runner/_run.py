"""Running many episodes: task selection, bounded asyncio concurrency, scoring, storing, resuming."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sopbench.agents import AgentRequestError
from sopbench.scoring import RunScore, Summary, summarize
from sopbench.statistics import UsageSummary, summarize_usage
from sopbench.tasks import Task

from ._claim import claim, generated_seed
from ._config import RunConfig, RunConfigError
from ._episode import AgentContractError
from ._manifest import TaskSet
from ._plan import Episode, episode_seed, plan_episodes, select_tasks, with_ids
from ._scored import EpisodePlayer, episode_row, never_replied, play, play_row, row_score
from ._store import STORE_NAME, RunLock, Store, open_existing

BASELINE_AGENTS = ("refuse-all", "no-verify")
# After Ctrl-C or SIGTERM, episodes in flight may finish for this long; then they are abandoned (not
# stored: resume runs them again). A second signal abandons them at once.
INTERRUPT_GRACE_S = 1.5


class RunInterrupted(KeyboardInterrupt):
    """The run stopped on Ctrl-C (SIGINT) or SIGTERM; every finished episode is stored.
    ``exit_code`` is the shell's convention: 128 + the signal number (130, 143)."""

    def __init__(self, signum: int, progress: Progress) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.progress = progress

    @property
    def exit_code(self) -> int:
        return 128 + self.signum



@dataclass
class Progress:
    """Counts as episodes finish (what the progress bar shows)."""

    total: int = 0  # episodes in the selection
    skipped: int = 0  # already finished before this invocation
    done: int = 0  # finished in this invocation
    scored: int = 0
    passed: int = 0
    infra_errors: int = 0
    last: str = ""

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.scored if self.scored else None


ProgressCallback = Callable[[Progress], None]


@dataclass
class RunReport:
    output: Path
    episodes: int  # in the selection
    skipped: int  # finished before, not run again
    ran: int  # run now
    completed: int  # completed episodes of the selection in the store
    infra_errors: int  # infra_error episodes of the selection in the store (retried on resume)
    summary: Summary  # sound verdicts of the completed episodes of the selection
    task_set: TaskSet | None = None  # the tasks of this invocation
    baselines: dict[str, Summary] = field(default_factory=dict)
    infra_reasons: list[str] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)  # stored rows that could not be read (run again)
    usage: UsageSummary | None = None  # tokens and latency of the completed episodes
    # Completed episodes in which the model never replied (its first request already failed, by a
    # context overflow): no behaviour to judge, so not scored (like an infra_error), counted by
    # how they ended. They make the run incomplete (exit 1) though no resume changes them.
    no_reply: dict[str, int] = field(default_factory=dict)
    scored_tasks: list[str] = field(default_factory=list)  # task ids in ``summary`` (baselines use them)
    timed_out_requests: int = 0  # requests abandoned at --request-timeout and sent again
    # Seconds the model requests (agent and user) of the selection waited for an endpoint slot
    # (--endpoint-slots), and took to be answered, over all episodes: apart from the episodes' own time.
    queue_s: float = 0.0
    model_s: float = 0.0

    @property
    def complete(self) -> bool:
        return self.infra_errors == 0 and not self.no_reply and self.completed == self.episodes

    def as_dict(self) -> dict[str, Any]:
        task_set = None
        if self.task_set is not None:
            task_set = {
                "path": str(self.task_set.path),
                "generated_seed": self.task_set.generated_seed,
                "tasks": len(self.task_set.digests),
                "sha256": self.task_set.sha256,
            }
        return {
            "output": str(self.output),
            "task_set": task_set,
            "episodes": self.episodes,
            "skipped": self.skipped,
            "ran": self.ran,
            "completed": self.completed,
            "infra_errors": self.infra_errors,
            "summary": self.summary.as_dict(),
            "baselines": {name: summary.as_dict() for name, summary in self.baselines.items()},
            "infra_reasons": list(self.infra_reasons),
            "usage": None if self.usage is None else self.usage.as_dict(),
            "no_reply": dict(self.no_reply),
            "timed_out_requests": self.timed_out_requests,
            "request_time_s": {"queued": round(self.queue_s, 3), "model": round(self.model_s, 3)},
        }


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


async def _run_async(
    config: RunConfig,
    store: Store,
    episodes: list[Episode],
    progress: Progress,
    on_progress: ProgressCallback | None,
    signals: _Signals,
    player: EpisodePlayer = play_row,
) -> None:
    finished = store.finished()
    queue: asyncio.Queue[Episode] = asyncio.Queue()
    for episode in episodes:
        queue.put_nowait(episode)
    refused: list[str] = []

    async def worker() -> None:
        while not signals.received and not refused:
            try:
                episode = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            earlier = finished.get((episode.task_id, episode.run))
            attempts = (earlier.attempts if earlier else 0) + 1
            try:
                row = await player(config, episode, attempts)
            except AgentRequestError as exc:  # every episode would fail alike: stop scheduling
                refused.append(str(exc))
                return
            except AgentContractError as exc:
                refused.append(f"agent {config.agent!r} is broken: {exc}")
                return
            # What the agent was shown (system prompt, tool schemas) travels with the row; the
            # store keeps each distinct one once.
            shown = row.pop("shown", None)
            store.put(row, shown)
            progress.done += 1
            progress.last = episode.task_id
            if never_replied(row):
                pass  # neither scored nor an infra_error: counted apart in the report
            elif row["status"] == "completed":
                progress.scored += 1
                progress.passed += row["passed"]
            else:
                progress.infra_errors += 1
            if on_progress is not None:
                on_progress(progress)
            await asyncio.sleep(0)  # let the other workers (and a signal's stop) through

    pending = {asyncio.create_task(worker()) for _ in range(min(config.concurrency, max(len(episodes), 1)))}
    stopping_since: float | None = None
    try:
        while pending:
            done, pending = await asyncio.wait(pending, timeout=0.05, return_when=asyncio.FIRST_EXCEPTION)
            failures = [exc for task in done if (exc := task.exception()) is not None]
            if failures:
                raise failures[0]
            if signals.received and stopping_since is None:
                stopping_since = time.monotonic()
            if stopping_since is not None and (
                len(signals.received) > 1 or time.monotonic() - stopping_since > INTERRUPT_GRACE_S
            ):
                break  # the episodes still in flight are abandoned (not stored)
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    if refused:
        raise RunRefused(f"the run stopped: {refused[0]}")


class RunRefused(RunConfigError):
    """An endpoint refused a request in a way no retry fixes (a wrong key or URL, an unknown model, a
    request the server calls invalid), or an agent broke its contract: an error of the invocation.
    Episodes finished before it are stored; the one refused is not (the same command runs it once
    the cause is fixed)."""


def run(
    config: RunConfig, progress: ProgressCallback | None = None, player: EpisodePlayer | None = None
) -> RunReport:
    """Run (or resume) every episode of ``config`` into ``config.output/results.sqlite``.

    Finished episodes are skipped; ``infra_error`` ones are run again. Raises ``RunConfigError``
    for a configuration that cannot run, ``StoreError`` for a folder holding another run (or in use
    by another process), and ``RunInterrupted`` after Ctrl-C or SIGTERM (what finished is stored).
    ``player`` plays the episodes elsewhere (a cluster); this process still writes every row.
    """
    config.check_options()
    selected = select_tasks(config)
    task_set = TaskSet.of(config.tasks_path, generated_seed(config), selected)
    episodes = plan_episodes(config, selected)
    if (config.output / STORE_NAME).is_file() and (config.output / STORE_NAME).stat().st_size > 0:
        open_existing(config.output).close()  # a foreign or newer file is refused before anything
    with RunLock(config.output), _Signals() as signals:
        manifest, played = claim(config, task_set)  # read-only: a refused folder is left as it was
        store = Store.for_run(config.output)
        try:
            store.record_manifest(manifest, played)
            finished = store.finished()
            todo = [
                e
                for e in episodes
                if (f := finished.get((e.task_id, e.run))) is None or f.status != "completed"
            ]
            counts = Progress(total=len(episodes), skipped=len(episodes) - len(todo))
            if progress is not None:
                progress(counts)
            asyncio.run(_run_async(config, store, todo, counts, progress, signals, player or play_row))
            if signals.received:
                raise RunInterrupted(signals.received[0], counts)
            report = _report(config, store, episodes, counts)
        finally:
            store.close()
    report.task_set = task_set
    if config.baselines:  # on the tasks the agent was scored on, so that the comparison is fair
        scored = set(report.scored_tasks)
        report.baselines = baseline_summaries(config, [(t, i) for t, i in selected if i in scored])
    return report


def _report(config: RunConfig, store: Store, episodes: list[Episode], counts: Progress) -> RunReport:
    wanted = {(e.task_id, e.run) for e in episodes}
    scores, infra, reasons = [], 0, []
    damaged: list[str] = []
    no_reply: dict[str, int] = {}
    scored_tasks: dict[str, None] = {}
    timed_out = 0
    queue_s = model_s = 0.0
    for row in store.rows(on_damaged=damaged.append):
        if (row["task_id"], row["run"]) not in wanted:
            continue
        usage = row.get("usage") or {}
        timed_out += usage.get("timed_out_requests", 0) if isinstance(usage, dict) else 0
        for side in (usage, row.get("user_usage") or {}):
            if isinstance(side, dict):
                queue_s += side.get("queue_s", 0.0)
                model_s += side.get("model_s", 0.0)
        if never_replied(row):
            no_reply[row["end_reason"]] = no_reply.get(row["end_reason"], 0) + 1
        elif row["status"] == "completed":
            scores.append(row_score(row))
            scored_tasks[row["task_id"]] = None
        else:
            infra += 1
            reasons.append(f"{row['task_id']} run {row['run']}: {row['reason']}")
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
    )


def baseline_summaries(config: RunConfig, selected: list[tuple[Task, str]]) -> dict[str, Summary]:
    """refuse-all and no-verify on the same tasks (first run only, nothing stored): the two trivial
    scores every report shows next to a real agent."""
    return {
        name: summarize(asyncio.run(_baseline_scores(config, selected, name))) for name in BASELINE_AGENTS
    }


def baseline_scores(tasks: list[Task], name: str, protocol: str = "sound") -> list[RunScore]:
    """``name`` (one of ``BASELINE_AGENTS``) played on ``tasks`` as ``sopbench run`` plays it next
    to an agent (first run only, nothing stored), scored under ``protocol`` (sound or sopbench)."""
    if name not in BASELINE_AGENTS:
        raise ValueError(f"{name!r} is not a baseline ({', '.join(BASELINE_AGENTS)})")
    config = RunConfig(agent=name, output=Path("."), baselines=False)
    return asyncio.run(_baseline_scores(config, with_ids(tasks), name, protocol))


async def _baseline_scores(
    config: RunConfig, selected: list[tuple[Task, str]], name: str, protocol: str = "sound"
) -> list[RunScore]:
    baseline = config.model_copy(
        update={"agent": name, "agent_options": {}, "user": "none", "user_options": {}}
    )
    scores = []
    for task, task_id in selected:
        episode = Episode(task, task_id, 0, episode_seed(config.seed, task_id, 0))
        result, _ = await play(baseline, episode)
        row = episode_row(baseline, episode, result, None, 1)
        if row["status"] == "completed":
            scores.append(row_score(row, protocol))
    return scores
