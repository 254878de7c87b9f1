"""Running many episodes: task selection, bounded asyncio concurrency, scoring, storing, resuming."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sopbench.agents import Agent, AgentRequestError, Usage, agent_factory, user_factory
from sopbench.domains import PUBLISHED_DOMAINS
from sopbench.scoring import RunScore, ScoringError, Summary, summarize
from sopbench.tasks import LoadError, Task, load_tasks, task_file_domain

from ._config import RunConfig, RunConfigError
from ._episode import AgentContractError, EpisodeResult, Limits, play_episode
from ._scoring import score_finished_episode
from ._setup import episode_setup, task_ids
from ._store import Store

TASK_SUFFIXES = ("_tasks.json.gz", "_tasks.json")
BASELINE_AGENTS = ("refuse-all", "no-verify")


@dataclass(frozen=True, slots=True)
class Episode:
    """One episode to run: a task, its id, the run number and the episode's seed."""

    task: Task
    task_id: str
    run: int
    seed: int


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
    baselines: dict[str, Summary] = field(default_factory=dict)
    infra_reasons: list[str] = field(default_factory=list)
    # Completed episodes in which the model never replied (its first request already failed, by a
    # context overflow): no behaviour to judge, so not scored (like an infra_error), counted by
    # how they ended. They make the run incomplete (exit 1) though no resume changes them.
    no_reply: dict[str, int] = field(default_factory=dict)
    scored_tasks: list[str] = field(default_factory=list)  # task ids in ``summary`` (baselines use them)
    timed_out_requests: int = 0  # requests abandoned at --request-timeout and sent again

    @property
    def complete(self) -> bool:
        return self.infra_errors == 0 and not self.no_reply and self.completed == self.episodes

    def as_dict(self) -> dict[str, Any]:
        return {
            "output": str(self.output),
            "episodes": self.episodes,
            "skipped": self.skipped,
            "ran": self.ran,
            "completed": self.completed,
            "infra_errors": self.infra_errors,
            "summary": self.summary.as_dict(),
            "baselines": {name: summary.as_dict() for name, summary in self.baselines.items()},
            "infra_reasons": list(self.infra_reasons),
            "no_reply": dict(self.no_reply),
            "timed_out_requests": self.timed_out_requests,
        }


# ---- task selection ---------------------------------------------------------------------------------
def task_files(path: Path, domains: Iterable[str]) -> dict[str, Path]:
    """Domain -> task file, from a task file or a folder of ``<domain>_tasks.json[.gz]``."""
    wanted = list(domains)
    if path.is_file():
        try:
            domain = task_file_domain(path)
        except LoadError as exc:
            raise RunConfigError(str(exc)) from None
        if wanted != ["all"] and wanted != [domain]:
            raise RunConfigError(f"{path} holds the {domain} tasks, not {', '.join(wanted)}")
        return {domain: path}
    if not path.is_dir():
        raise RunConfigError(f"no such task file or folder: {path}")
    found: dict[str, Path] = {}
    for suffix in TASK_SUFFIXES:
        for file in sorted(path.glob(f"*{suffix}")):
            found.setdefault(file.name[: -len(suffix)], file)
    if not found:
        raise RunConfigError(f"{path} holds no <domain>_tasks.json[.gz] file")
    if wanted == ["all"]:
        order = [d for d in PUBLISHED_DOMAINS if d in found] + sorted(set(found) - set(PUBLISHED_DOMAINS))
        return {d: found[d] for d in order}
    missing = [d for d in wanted if d not in found]
    if missing:
        raise RunConfigError(
            f"no task file for {', '.join(missing)} in {path} (found: {', '.join(sorted(found))})"
        )
    return {d: found[d] for d in wanted}


def select_tasks(config: RunConfig) -> list[tuple[Task, str]]:
    """The tasks of the run with their ids, in domain order then file order, ``limit`` per domain."""
    selected: list[tuple[Task, str]] = []
    for domain, file in task_files(config.tasks_path, config.domains).items():
        try:
            tasks = load_tasks(file, domain=domain)
        except LoadError as exc:
            raise RunConfigError(str(exc)) from None
        pairs = list(zip(tasks, task_ids(tasks), strict=True))
        selected.extend(pairs[: config.limit] if config.limit else pairs)
    return selected


def episode_seed(seed: int, task_id: str, run: int) -> int:
    """A seed per episode, stable across processes and concurrency levels."""
    digest = hashlib.sha256(f"{seed}:{task_id}:{run}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def plan_episodes(config: RunConfig, selected: list[tuple[Task, str]]) -> list[Episode]:
    return [
        Episode(task, task_id, run, episode_seed(config.seed, task_id, run))
        for task, task_id in selected
        for run in range(config.runs)
    ]


# ---- one episode, played and scored -------------------------------------------------------------------
async def play(config: RunConfig, episode: Episode) -> tuple[EpisodeResult, Agent | None]:
    """Play one episode with a fresh agent and user; a timeout becomes an ``infra_error``.

    The agent is returned for its ``model`` and ``tool_mode`` (None when it could not be created).
    """
    offer_exit = not getattr(user_factory(config.user), "holds_exit", False)
    setup = episode_setup(
        episode.task, episode.task_id, config.tool_list, episode.seed, episode.run, offer_exit=offer_exit
    )
    try:
        agent = agent_factory(config.agent)(**config.agent_options)
        user = user_factory(config.user)(**config.user_options)
    except Exception as exc:  # noqa: BLE001 - a constructor failure is an infrastructure problem
        result = EpisodeResult(
            status="infra_error", end="infra_error", reason=f"cannot create: {type(exc).__name__}: {exc}"
        )
        return result, None
    limits = Limits(config.max_turns, config.max_actions)
    result = await play_episode(setup, agent, user, limits, config.episode_timeout)
    return result, agent


def episode_row(
    config: RunConfig, episode: Episode, result: EpisodeResult, agent: Agent | None, attempts: int
) -> dict[str, Any]:
    """The stored row of a finished episode, scored when it completed."""
    task = episode.task
    verdict = compat = None
    explanations: list[str] = []
    status, end, reason = result.status, result.end, result.reason
    if status == "completed":
        try:
            score = score_finished_episode(
                task, result.messages, result.final_database, tool_list=config.tool_list
            )
        except ScoringError as exc:
            status, end, reason = "infra_error", "infra_error", f"cannot be scored: {exc}"
        else:
            verdict, compat = score.sound.verdict, score.compat_fields()
            explanations = list(score.sound.explanations)
            if score.compat_failure is not None:
                explanations.append(f"published checks not available: {score.compat_failure}")
    calls = [
        {
            "id": c.id,
            "name": c.name,
            "arguments_text": c.arguments_text,
            "arguments": c.arguments,
            "output": c.output,
            "problem": c.problem,
        }
        for c in result.calls
    ]
    return {
        "task_id": episode.task_id,
        "run": episode.run,
        "domain": task.domain,
        "goal": task.goal,
        "task_index": task.index if task.index is not None else 0,
        "seed": episode.seed,
        "agent": config.agent,
        "model": getattr(agent, "model", None),
        "tool_mode": getattr(agent, "tool_mode", None),
        "tool_list": config.tool_list,
        "user": config.user,
        "status": status,
        "end_reason": end,
        "reason": reason,
        "should_succeed": int(task.action_should_succeed),
        "passed": None if verdict is None else int(verdict["passed"]),
        "verdict": verdict,
        "compat": compat,
        "explanations": explanations,
        "messages": result.messages,
        "tool_calls": calls,
        "final_database": result.final_database if status == "completed" else None,
        "problems": result.problems,
        "raw_replies": result.raw_replies,
        "malformed_calls": sum(c.problem is not None for c in result.calls),
        "usage": _usage(result.usage)
        | (
            {"requests": result.requests, "timed_out_requests": result.timed_out_requests}
            if result.requests
            else {}
        ),
        "user_usage": _usage(result.user_usage),
        "agent_steps": result.agent_steps,
        "latency_s": result.latency_s,
        "attempts": attempts,
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _usage(usage: Usage) -> dict[str, int]:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}


def row_score(row: dict[str, Any]) -> RunScore:
    """A stored completed episode as a score the scoring summaries take."""
    return RunScore(
        source=row["agent"],
        domain=row["domain"],
        record=row["task_index"],
        run=row["run"],
        protocol="sound",
        verdict=row["verdict"],
        explanations=tuple(row["explanations"]),
        justified_refusal=None,
        should_succeed=bool(row["should_succeed"]),
        goal=row["goal"],
    )


# ---- the run ------------------------------------------------------------------------------------------
async def _run_async(
    config: RunConfig,
    store: Store,
    episodes: list[Episode],
    progress: Progress,
    on_progress: ProgressCallback | None,
) -> None:
    finished = store.finished()
    queue: asyncio.Queue[Episode] = asyncio.Queue()
    for episode in episodes:
        queue.put_nowait(episode)
    refused: list[str] = []

    async def worker() -> None:
        while not refused:
            try:
                episode = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            earlier = finished.get((episode.task_id, episode.run))
            attempts = (earlier.attempts if earlier else 0) + 1
            try:
                result, agent = await play(config, episode)
            except AgentRequestError as exc:  # every episode would fail alike: stop scheduling
                refused.append(str(exc))
                return
            except AgentContractError as exc:
                refused.append(f"agent {config.agent!r} is broken: {exc}")
                return
            row = episode_row(config, episode, result, agent, attempts)
            store.put(row)
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

    await asyncio.gather(*(worker() for _ in range(min(config.concurrency, max(len(episodes), 1)))))
    if refused:
        raise RunRefused(f"the run stopped: {refused[0]}")


class RunRefused(RunConfigError):
    """An endpoint refused a request in a way no retry fixes (a wrong key or URL, an unknown model, a
    request the server calls invalid), or an agent broke its contract: an error of the invocation. Episodes finished before it are
    stored; the one refused is not (the same command runs it once the cause is fixed)."""


def run(config: RunConfig, progress: ProgressCallback | None = None) -> RunReport:
    """Run (or resume) every episode of ``config`` into ``config.output/results.sqlite``.

    Finished episodes are skipped; ``infra_error`` ones are run again. Raises ``RunConfigError``
    for a configuration that cannot run and ``StoreError`` for a folder holding another run.
    """
    config.check_options()
    selected = select_tasks(config)
    episodes = plan_episodes(config, selected)
    store = Store(config.output)
    try:
        store.claim(config.identity())
        store.set_note("tasks", str(config.tasks_path))
        finished = store.finished()
        todo = [
            e for e in episodes if (f := finished.get((e.task_id, e.run))) is None or f.status != "completed"
        ]
        counts = Progress(total=len(episodes), skipped=len(episodes) - len(todo))
        if progress is not None:
            progress(counts)
        asyncio.run(_run_async(config, store, todo, counts, progress))
        report = _report(config, store, episodes, counts)
    finally:
        store.close()
    if config.baselines:  # on the tasks the agent was scored on, so that the comparison is fair
        scored = set(report.scored_tasks)
        report.baselines = baseline_summaries(config, [(t, i) for t, i in selected if i in scored])
    return report


def never_replied(row: dict[str, Any]) -> bool:
    """A completed episode in which the model never replied: its first request already overflowed
    the context. There is no behaviour to judge (a must-refuse task would pass by silence), so it
    is reported apart and not scored."""
    return row["status"] == "completed" and row.get("agent_steps") == 0 and row["end_reason"] == "context_length"


def _report(config: RunConfig, store: Store, episodes: list[Episode], counts: Progress) -> RunReport:
    wanted = {(e.task_id, e.run) for e in episodes}
    scores, infra, reasons = [], 0, []
    no_reply: dict[str, int] = {}
    scored_tasks: dict[str, None] = {}
    timed_out = 0
    for row in store.rows():
        if (row["task_id"], row["run"]) not in wanted:
            continue
        usage = row.get("usage") or {}
        timed_out += usage.get("timed_out_requests", 0) if isinstance(usage, dict) else 0
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
        no_reply=no_reply,
        scored_tasks=list(scored_tasks),
        timed_out_requests=timed_out,
    )


def baseline_summaries(config: RunConfig, selected: list[tuple[Task, str]]) -> dict[str, Summary]:
    """refuse-all and no-verify on the same tasks (first run only, nothing stored): the two trivial
    scores every report shows next to a real agent."""
    return {
        name: summarize(asyncio.run(_baseline_scores(config, selected, name))) for name in BASELINE_AGENTS
    }


async def _baseline_scores(config: RunConfig, selected: list[tuple[Task, str]], name: str) -> list[RunScore]:
    baseline = config.model_copy(
        update={"agent": name, "agent_options": {}, "user": "none", "user_options": {}}
    )
    scores = []
    for task, task_id in selected:
        episode = Episode(task, task_id, 0, episode_seed(config.seed, task_id, 0))
        result, _ = await play(baseline, episode)
        row = episode_row(baseline, episode, result, None, 1)
        if row["status"] == "completed":
            scores.append(row_score(row))
    return scores
