"""Running many episodes: task selection, bounded asyncio concurrency, scoring, storing, resuming."""

from __future__ import annotations

import asyncio
import hashlib
import signal
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sopbench.agents import Agent, AgentRequestError, Usage, agent_factory, user_factory
from sopbench.constraints import singles
from sopbench.domains import PUBLISHED_DOMAINS, UnknownDomain, get_domain
from sopbench.scoring import RunScore, ScoringError, Summary, summarize
from sopbench.statistics import Configuration, UsageSummary, summarize_usage
from sopbench.statistics import Usage as StatUsage
from sopbench.tasks import LoadError, Task, load_tasks, task_file_domain

from ._config import RunConfig, RunConfigError
from ._episode import AgentContractError, EpisodeResult, Limits, play_episode
from ._manifest import TaskSet, build_manifest, differences, task_differences, task_digest
from ._row import read_verdict, stored_verdict
from ._scoring import score_finished_episode
from ._setup import episode_setup, task_ids
from ._store import STORE_NAME, RunLock, Store, StoreError, open_existing

TASK_SUFFIXES = ("_tasks.json.gz", "_tasks.json")
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
        pairs = pairs[: config.limit] if config.limit else pairs
        _check_playable(file, domain, pairs)
        selected.extend(pairs)
    return selected


def _check_playable(file: Path, domain: str, pairs: list[tuple[Task, str]]) -> None:
    """A task file of a domain sopbench does not know, or a task whose SOP names a check, tool or
    link its domain does not have: ``RunConfigError`` naming it (before any episode is played)."""
    try:
        known_domain = get_domain(domain)
    except UnknownDomain as exc:
        raise RunConfigError(f"{file}: {str(exc).strip(chr(34))}") from None
    known = set(known_domain.tools) | set(known_domain.checks) | set(known_domain.catalogue.links)
    for task, task_id in pairs:
        for expr in (task.constraints, task.constraints_original):
            unknown = sorted({single.name for single in singles(expr)} - known)
            if unknown:
                raise RunConfigError(
                    f"{file}: task {task_id}: its constraints name {', '.join(map(repr, unknown))}, "
                    f"which the {domain} domain has no check, tool or link for"
                )


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
        episode.task,
        episode.task_id,
        config.tool_list,
        episode.seed,
        episode.run,
        offer_exit=offer_exit,
        env_mode=config.env_mode,
        shuffle_tools=config.shuffle_tools,
        constraint_format=config.constraint_format,
        default_sop=config.default_sop,
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
    result = await play_episode(setup, agent, user, limits, config.episode_timeout, default_sop=config.default_sop)
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
                task,
                result.messages,
                result.final_database,
                tool_list=config.tool_list,
                ablations=config.ablations(),
                refused=[c.refused for c in result.calls],
            )
        except ScoringError as exc:
            status, end, reason = "infra_error", "infra_error", f"cannot be scored: {exc}"
        else:
            unverified = score.sound.episode.verdict.procedure.unverified if score.sound.episode else ()
            verdict, compat = stored_verdict(score.sound.verdict, unverified), score.compat_fields()
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
            **({"refused": True} if c.refused else {}),
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


def row_score(row: dict[str, Any], protocol: str = "sound", source: str | None = None) -> RunScore:
    """A stored completed episode (JSON columns decoded) as a score the scoring summaries take.

    ``protocol``: ``sound`` reads the ``verdict`` column, ``sopbench`` the ``compat`` one (the
    stored explanations are the sound verdict's, kept only with it). ``source``: where the row was
    read (default: the agent's name).
    """
    if protocol not in ("sound", "sopbench"):
        raise ValueError(f"a run folder stores sound and sopbench verdicts only, not {protocol}")
    usage, user_usage = row["usage"] or {}, row["user_usage"] or {}
    verdict, unverified = read_verdict(row["verdict"] if protocol == "sound" else row["compat"])
    return RunScore(
        source=row["agent"] if source is None else source,
        domain=row["domain"],
        record=row["task_index"],
        run=row["run"],
        protocol=protocol,
        verdict=verdict,
        explanations=tuple(row["explanations"]) if protocol == "sound" else (),
        justified_refusal=None,
        should_succeed=bool(row["should_succeed"]),
        goal=row["goal"],
        task_id=row["task_id"],
        configuration=Configuration(row["agent"], row["model"], row["tool_mode"], row["tool_list"], row["user"]),
        usage=StatUsage(
            agent_prompt_tokens=usage.get("prompt_tokens") or 0,
            agent_completion_tokens=usage.get("completion_tokens") or 0,
            user_prompt_tokens=user_usage.get("prompt_tokens") or 0,
            user_completion_tokens=user_usage.get("completion_tokens") or 0,
            latency_s=row["latency_s"],
        ),
        unverified=unverified,
    )


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


def run(config: RunConfig, progress: ProgressCallback | None = None) -> RunReport:
    """Run (or resume) every episode of ``config`` into ``config.output/results.sqlite``.

    Finished episodes are skipped; ``infra_error`` ones are run again. Raises ``RunConfigError``
    for a configuration that cannot run, ``StoreError`` for a folder holding another run (or in use
    by another process), and ``RunInterrupted`` after Ctrl-C or SIGTERM (what finished is stored).
    """
    config.check_options()
    selected = select_tasks(config)
    task_set = TaskSet.of(config.tasks_path, _generated_seed(config), selected)
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
            asyncio.run(_run_async(config, store, todo, counts, progress, signals))
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


def never_replied(row: dict[str, Any]) -> bool:
    """A completed episode in which the model never replied: its first request already overflowed
    the context. There is no behaviour to judge (a must-refuse task would pass by silence), so it
    is reported apart and not scored."""
    return row["status"] == "completed" and row.get("agent_steps") == 0 and row["end_reason"] == "context_length"


def _generated_seed(config: RunConfig) -> int | None:
    """The seed of the generated default task set, when the run plays it (no ``tasks`` given)."""
    if config.tasks is not None:
        return None
    from sopbench.generation import DEFAULT_SEED

    return DEFAULT_SEED


def claim(config: RunConfig, task_set: TaskSet) -> tuple[dict[str, Any], dict[str, str]]:
    """The manifest and task digests to record for this run, read from the folder's store without
    changing it; ``StoreError`` when the folder holds another run: a result-determining setting
    differs, or tasks played before are not these tasks. A schema-1 store is adopted (made schema 2
    when the manifest is recorded) only when its episodes were played on these tasks."""
    identity = config.identity()
    manifest: dict[str, Any] | None = None
    stored_digests: dict[str, str] = {}
    if (config.output / STORE_NAME).is_file() and (config.output / STORE_NAME).stat().st_size > 0:
        store = open_existing(config.output)
        try:
            manifest = store.manifest()
            stored_digests = store.task_digests()
            if store.version == 1:
                stored_digests = _adopt_schema_1(store, config, task_set, identity)
            elif manifest is not None:
                problems = differences(manifest.get("config", {}), identity)
                changed = task_differences(stored_digests, task_set)
                if changed:
                    problems.append(changed)
                if problems:
                    raise StoreError(
                        f"{store.folder} holds another run ({'; '.join(problems)}); it is left as it "
                        "was: use another --output folder to run these"
                    )
        finally:
            store.close()
    played = {**stored_digests, **task_set.digests}
    created = None if manifest is None else manifest.get("created_at")
    return build_manifest(task_set, identity, played, created_at=created), played


def _adopt_schema_1(
    store: Store, config: RunConfig, task_set: TaskSet, identity: dict[str, Any]
) -> dict[str, str]:
    """The digests of the tasks a schema-1 store's episodes were played on, when the task set named
    now still holds those very tasks (same goal, position, expected outcome and opening message);
    otherwise ``StoreError`` saying what to do."""
    legacy = store.legacy_config()
    if legacy is not None:
        try:
            before = RunConfig(output=config.output, **legacy).identity()
        except (ValueError, KeyError, TypeError):
            before = legacy
        problems = differences(before, identity)
        if problems:
            raise StoreError(
                f"{store.folder} holds another run ({'; '.join(problems)}); it is left as it was: "
                "use another --output folder to run these"
            )
    rows = list(
        store.db.execute(
            "SELECT task_id, domain, goal, task_index, should_succeed, user, "
            "json_extract(messages, '$[0].content') FROM episodes"
        )
    )
    if not rows:
        return {}
    domains = sorted({row[1] for row in rows})
    noted = store.note("tasks")
    hint = (
        f"run it with --tasks {noted} if that still holds the tasks it was played on, or use another "
        "--output folder"
        if noted
        else "use another --output folder"
    )
    try:
        files = task_files(config.tasks_path, domains)
        tasks = {
            task_id: task
            for file_domain, file in files.items()
            for task, task_id in _with_ids(load_tasks(file, domain=file_domain))
        }
    except (RunConfigError, LoadError) as exc:
        raise StoreError(
            f"{store.folder} was made by an earlier sopbench (schema 1) and its episodes cannot be matched "
            f"with the tasks of {config.tasks_path} ({exc}); {hint}"
        ) from None
    mismatched = [
        row[0]
        for row in rows
        if (task := tasks.get(row[0])) is None
        or task.goal != row[2]
        or (task.index if task.index is not None else 0) != row[3]
        or int(task.action_should_succeed) != row[4]
        or (row[5] == "none" and row[6] is not None and row[6] != task.user_prompt)
    ]
    if mismatched:
        raise StoreError(
            f"{store.folder} was made by an earlier sopbench (schema 1) and {len(mismatched)} of its "
            f"{len(rows)} episodes were not played on the tasks of {config.tasks_path} (first "
            f"{mismatched[0]}); it is left as it was: {hint}"
        )
    return {row[0]: task_digest(tasks[row[0]]) for row in rows}


def _with_ids(tasks: list[Task]) -> list[tuple[Task, str]]:
    return list(zip(tasks, task_ids(tasks), strict=True))


def _report(config: RunConfig, store: Store, episodes: list[Episode], counts: Progress) -> RunReport:
    wanted = {(e.task_id, e.run) for e in episodes}
    scores, infra, reasons = [], 0, []
    damaged: list[str] = []
    no_reply: dict[str, int] = {}
    scored_tasks: dict[str, None] = {}
    timed_out = 0
    for row in store.rows(on_damaged=damaged.append):
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
        damaged=damaged,
        usage=summarize_usage([score.outcome() for score in scores]),
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
