"""Exporting a run folder: JSON Lines (one episode per line) or trajectory files of the published layout."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import groupby
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from sopbench._io import write_atomically
from sopbench.domains import Environment
from sopbench.tasks import LoadError, Task, load_tasks, task_ids

from ._manifest import task_digest
from ._plan import task_files
from ._record import executed_messages, record_json
from ._row import (
    DERIVED,
    DERIVED_FIELDS,
    EXPORT_FIELDS,
    EXPORTED_SETTINGS,
    SETTINGS_AFTER,
    TIMING_FIELDS,
    EpisodeRow,
)
from ._scoring import PUBLISHED_CHECKS
from ._spec import RunSpecError
from ._store import StoreError, open_existing

if TYPE_CHECKING:
    from ._read import StoredRun

VERDICT_KEYS = ("passed", "database", "permission", "procedure")
# Timings a model agent's (and an llm user's) usage holds, and the replies it took from the cache
# (``--cache``) with their tokens: exported apart, after latency_s.
USAGE_TIMINGS = ("cache_hits", "cached_prompt_tokens", "cached_completion_tokens", "queue_s", "model_s")
# How many requests it sent (retries, timeouts): kept in ``usage``, left out with the timings, as
# they are no result either (a replay of a recorded run sends none, and its export without timings
# is byte for byte the recording's).
USAGE_REQUESTS = ("requests", "timed_out_requests")


def export_line(
    row: EpisodeRow, *, timings: bool = True, ablations: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """One episode as an export line: the fields of ``EXPORT_FIELDS`` (``runner/_row.py``) in their
    order. Timings come last, so that the rest is comparable byte for byte. ``ablations``: the run's
    environment settings (``env_mode``, ``shuffle_tools``, ...), given with each line; a call the
    guard refused has ``"refused": true``."""
    reshaped = {"tool_calls": _exported_calls(row.tool_calls), "verdict": _exported_verdict(row)}
    line: dict[str, Any] = {}
    for name, column in EXPORT_FIELDS:
        if name in TIMING_FIELDS and not timings:
            continue
        if column == DERIVED:
            line[name] = DERIVED_FIELDS[name](row)
        else:
            line[name] = reshaped[column] if column in reshaped else getattr(row, column)
        if name == SETTINGS_AFTER:
            line.update(ablations or {})
    line["usage"] = {
        k: v
        for k, v in (row.usage or {}).items()
        if k not in USAGE_TIMINGS and (timings or k not in USAGE_REQUESTS)
    }
    if timings:  # the request times of a model agent (and an llm user), last like latency_s
        for prefix, usage in (("", row.usage or {}), ("user_", row.user_usage or {})):
            line.update({prefix + k: usage[k] for k in USAGE_TIMINGS if k in usage})
    return line


def _exported_verdict(row: EpisodeRow) -> dict[str, Any] | None:
    """The sound judgements and the published checks of the sopbench protocol (None: infra_error)."""
    if row.status != "completed" or row.verdict is None:
        return None
    verdict = {key: row.verdict[key] for key in VERDICT_KEYS}
    # null checks: the published evaluator crashes on this episode (its explanations say why)
    compat = row.compat or {}
    verdict.update({key: compat.get(key) for key in PUBLISHED_CHECKS})
    return verdict


def _exported_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Name, arguments (their text when they are not JSON) and output of each call."""
    return [
        {
            "name": c["name"],
            "arguments": c["arguments"] if c["arguments"] is not None else c["arguments_text"],
            "output": c["output"],
            **({"refused": True} if c.get("refused") else {}),
        }
        for c in calls
    ]


def export_shown(run: StoredRun, sink: IO[bytes]) -> int:
    """What the run's models were shown, as one JSON document (``Store.shown``): each distinct system
    prompt and tool list once, and which ones each episode got. The number of episodes it covers."""
    shown = run.shown
    sink.write(orjson.dumps(shown, option=orjson.OPT_INDENT_2) + b"\n")
    return len(shown["episodes"])


def export_jsonl(run: StoredRun, sink: IO[bytes], *, timings: bool = True) -> int:
    """Every episode of ``run`` (read with ``read_run``), one JSON line each, in a fixed order
    (domain, task position, run)."""
    count = 0
    ablations = stored_ablations(run.config)
    for row in run.rows:
        line = export_line(row, timings=timings, ablations=ablations)
        sink.write(orjson.dumps(line, option=orjson.OPT_NON_STR_KEYS) + b"\n")
        count += 1
    return count


def export_cache(folder: Path, target: Path, source: Path | None = None) -> int:
    """The recorded replies (``--cache``) the episodes stored in run folder ``folder`` used, written
    to a new cache file ``target`` (atomically): what ``run --cache TARGET --cache-mode replay``
    needs to play them again anywhere. ``source``: the cache they were recorded in (default: the one
    the run last used, as its folder notes it). The number of entries written; ``StoreError`` (one
    line) when the folder used no cache or the source cannot be read."""
    from sopbench.agents.openai import CacheError, ReplyCache

    store = open_existing(folder)
    try:
        uses = store.cache_uses()
        noted = store.note("cache.source")
    finally:
        store.close()
    if not uses:
        raise StoreError(f"{folder}: its episodes used no recorded reply (run it with --cache PATH first)")
    path = source or (Path(noted) if noted else None)
    if path is None:
        raise StoreError(f"{folder}: the cache it used is not noted; name it with --cache PATH")
    try:
        cache = ReplyCache.open(path, "replay")  # read only
    except CacheError as exc:
        raise StoreError(str(exc)) from None
    try:
        return cache.copy_to(target, uses)
    finally:
        cache.close()


def trajectory_file_name(
    model: str | None,
    agent: str,
    tool_mode: str | None,
    tool_list: str,
    ablations: Mapping[str, Any] | None = None,
) -> str:
    """The published naming: ``ast_<model>-mode_<mode>-dep_<option>-fmt_<format>-tool_<list>-shuffle_<bool>.json``
    (the env_mode is not in the published name: it is in each record's ``setup``)."""
    environment = Environment.from_settings(ablations or {})
    name = (model or agent).replace("/", "_")
    return (
        f"ast_{name}-mode_{tool_mode or 'fc'}-dep_{environment.default_sop}"
        f"-fmt_{environment.constraint_format}-tool_{tool_list}"
        f"-shuffle_{environment.shuffle_tools}.json"
    )


def stored_ablations(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ablation settings a run folder was made with, from its identity (``StoredRun.config``):
    defaults for what it omits."""
    config = config or {}
    return {key: config.get(key, value) for key, value in EXPORTED_SETTINGS.items()}


def tasks_by_id(tasks_path: Path, domain: str) -> dict[str, Task]:
    """The tasks of ``domain`` under ``tasks_path`` (a file or a folder of task files), by task id."""
    file = task_files(tasks_path, [domain])[domain]
    tasks = load_tasks(file, domain=domain)
    return dict(zip(task_ids(tasks), tasks, strict=True))


def mismatch(row: EpisodeRow, task: Task | None, digests: dict[str, str]) -> str | None:
    """Why ``task`` is not the task the stored episode ``row`` was played on (None when it is): by
    digest (schema 2), or by goal, position, expected outcome and opening message (schema 1)."""
    if task is None:
        return "no such task"
    if digests:
        stored = digests.get(row.task_id)
        if stored is not None:
            return None if stored == task_digest(task) else "the task differs (sha256)"
    if task.goal != row.goal:
        return f"goal {task.goal}, played {row.goal}"
    if int(task.action_should_succeed) != row.should_succeed:
        return "the expected outcome differs"
    opening = row.messages[0].get("content") if row.messages else None
    if row.user == "none" and opening is not None and opening != task.user_prompt:
        return "the user prompt differs"
    return None


def export_sopbench(
    run: StoredRun,
    folder: Path,
    tasks_path: Path,
    *,
    check_targets: Callable[[list[Path]], None] | None = None,
) -> list[Path]:
    """Trajectory files in the published layout, one per domain (``<folder>/<domain>/<name>.json``),
    one record per task with its completed runs in run order. ``sopbench evaluate`` scores them.

    Every episode is first matched with its task in ``tasks_path``: when one was played on another
    task (the task files changed), ``StoreError`` is raised and nothing is written. Then
    ``check_targets(files)`` may refuse the files about to be written (the command line checks them
    against its inputs); then each file is written atomically."""
    rows = [row for row in run.rows if row.status == "completed"]
    digests = run.task_digests
    ablations = stored_ablations(run.config)
    shown = run.shown  # the published layout keeps each run's system prompt (``prompt``)
    prompt_of = {
        (e["task_id"], e["run"]): shown["system_prompts"].get(e["system_prompt"]) or ""
        for e in shown["episodes"]
    }
    plans = []
    for domain, grouped in groupby(rows, key=lambda r: r.domain):
        domain_rows = list(grouped)
        try:
            tasks = tasks_by_id(tasks_path, domain)
        except (RunSpecError, LoadError) as exc:
            raise StoreError(f"--tasks {tasks_path}: {exc}") from None
        wrong = [(r, why) for r in domain_rows if (why := mismatch(r, tasks.get(r.task_id), digests))]
        if wrong:
            row, why = wrong[0]
            raise StoreError(
                f"{tasks_path} does not hold the tasks this run was played on ({len(wrong)} episodes of "
                f"{domain} differ, first {row.task_id}: {why}); nothing was written: pass --tasks "
                "with the task files of the run"
            )
        first = domain_rows[0]
        target = (
            folder
            / domain
            / trajectory_file_name(first.model, first.agent, first.tool_mode, first.tool_list, ablations)
        )
        plans.append((target, tasks, domain_rows))
    if check_targets is not None:
        check_targets([target for target, _, _ in plans])
    written = []
    for target, tasks, domain_rows in plans:
        first = domain_rows[0]
        records = []
        for task_id, grouped_rows in groupby(domain_rows, key=lambda r: r.task_id):
            task_rows = list(grouped_rows)
            # Calls the guard refused were not executed: the published layout (and the scorers
            # that replay it) must not see them (the JSON Lines export keeps them).
            runs = [
                (
                    executed_messages(r.messages, [bool(c.get("refused")) for c in r.tool_calls]),
                    r.final_database,
                )
                for r in task_rows
            ]
            records.append(
                record_json(
                    tasks[task_id],
                    runs,
                    tool_list=first.tool_list,
                    model=first.model or first.agent,
                    tool_mode=first.tool_mode or "fc",
                    user=first.user,
                    ablations=ablations,
                    prompts=[prompt_of.get((r.task_id, r.run), "") for r in task_rows],
                )
            )
        write_atomically(target, orjson.dumps(records, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_INDENT_2))
        written.append(target)
    return written
