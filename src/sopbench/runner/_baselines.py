"""The two trivial baselines every verb shows next to a real agent, refuse-all and no-verify, played
on exactly the tasks of the source they stand beside.

This is the one home of the baselines: ``run`` plays them on the tasks it scored, and the verbs that
read results (``evaluate``, ``leaderboard``, ``report``, ``compare``, the sweep summary) on the tasks
of their sources: a run folder's tasks are those of its manifest (the stored path, or the generated
set of its seed, built again), each checked against the digest stored when it was played; a
trajectory file's tasks are those its records hold. Never a default from the working directory:
when a source's tasks cannot be found, or are not the tasks played, the baselines are unavailable
and say why (``Baselines.unavailable``). Played first run only, nothing stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from sopbench.scoring import (
    SOPBENCH,
    SOUND,
    Protocol,
    RunScore,
    Summary,
    protocol_by_name,
    score_run,
    summarize,
)
from sopbench.tasks import LoadError, Task, task_digest

from ._export import tasks_by_id
from ._manifest import DIGEST_SHOWN, task_set_digest
from ._plan import Episode, episode_seed, with_ids
from ._read import read_run
from ._record import episode_record
from ._scored import episode_row, play, row_score
from ._spec import RunSpec, RunSpecError
from ._store import STORE_NAME, StoreError

BASELINE_AGENTS = ("refuse-all", "no-verify")


class TaskSetMissing(Exception):
    """The tasks a source was played on cannot be found, or are not those played (named, with why)."""


@dataclass
class Baselines:
    """refuse-all and no-verify on a source's tasks (each a list of scores, one per task), or why
    they could not be played (``unavailable``: then there are no scores at all)."""

    scores: dict[str, list[RunScore]] = field(default_factory=dict)
    unavailable: str | None = None

    def summaries(self) -> dict[str, Summary]:
        return {name: summarize(scores) for name, scores in self.scores.items()}


def baseline_summaries(config: RunSpec, selected: list[tuple[Task, str]]) -> dict[str, Summary]:
    """refuse-all and no-verify on the tasks ``run`` scored (first run only, nothing stored)."""
    return play_baselines(selected, "sound", seed=config.seed).summaries()


def baseline_scores(
    tasks: list[Task], name: str, protocol: str | Protocol = "sound", *, justify_refusal: bool = False
) -> list[RunScore]:
    """``name`` (one of ``BASELINE_AGENTS``) played on ``tasks`` as ``sopbench run`` plays it (each
    score with its source ``name``); ``justify_refusal`` judges whether its refusals are justified."""
    if name not in BASELINE_AGENTS:
        raise ValueError(f"{name!r} is not a baseline ({', '.join(BASELINE_AGENTS)})")
    return play_baselines(with_ids(tasks), protocol, names=(name,), justify_refusal=justify_refusal).scores[
        name
    ]


def play_baselines(
    tasks: Sequence[tuple[Task, str]],
    protocol: str | Protocol = "sound",
    *,
    names: Sequence[str] = BASELINE_AGENTS,
    seed: int = 0,
    justify_refusal: bool = False,
) -> Baselines:
    """Each baseline of ``names`` played once on each (task, task id), scored under ``protocol``
    (``sound``, ``sopbench`` or any protocol object: the stored verdicts of the two, else the
    episode scored again as a record)."""
    config = RunSpec(agent="refuse-all", output=Path("."), baselines=False, seed=seed)
    return Baselines(
        {name: asyncio.run(_scores(config, tasks, name, protocol, justify_refusal)) for name in names}
    )


async def _scores(
    config: RunSpec,
    selected: Sequence[tuple[Task, str]],
    name: str,
    protocol: str | Protocol,
    justify_refusal: bool,
) -> list[RunScore]:
    baseline = config.replace(agent=name, user="none")
    stored = stored_verdict_name(protocol) if not justify_refusal else None
    scores = []
    for task, task_id in selected:
        episode = Episode(task, task_id, 0, episode_seed(config.seed, task_id, 0))
        result, _ = await play(baseline, episode)
        row = episode_row(baseline, episode, result, None, 1)
        if row.status != "completed":
            continue
        score = row_score(row, stored or "sound")
        if stored is None:  # another mix of quirks, or refusals judged: score the episode again
            record = episode_record(
                task, result.messages, result.final_database, tool_list=baseline.tool_list
            )
            chosen = protocol_by_name(protocol) if isinstance(protocol, str) else protocol
            again = score_run(record, 0, chosen, task_id=task_id, justify_refusal=justify_refusal)
            score = replace(again, configuration=score.configuration, source=name)
        scores.append(replace(score, source=name, task=task))
    return scores


def stored_verdict_name(protocol: str | Protocol) -> str | None:
    """``sound`` or ``sopbench`` when ``protocol`` gives one of the two verdicts a run stores (a name
    is taken as it is), else None."""
    if isinstance(protocol, str):
        return protocol
    if protocol.quirks == SOUND.quirks:
        return "sound"
    if protocol.quirks == SOPBENCH.quirks:
        return "sopbench"
    return None


# ---- the tasks of a source ----------------------------------------------------------------------
def run_folder_tasks(folder: Path, task_ids: Iterable[str] | None = None) -> dict[str, Task]:
    """The tasks ``folder`` played (those of ``task_ids``, default all it holds), by task id, from its
    manifest's task set and checked against the digests stored when they were played.

    ``TaskSetMissing`` names the folder and why: the task file was moved or deleted, it now holds
    other tasks (digest), or the store cannot be read.
    """
    try:
        header = read_run(folder, header_only=True)
    except (StoreError, OSError, ValueError) as exc:
        raise TaskSetMissing(f"{folder}: cannot read which tasks it played ({exc})") from None
    stored, where = header.task_digests, header.tasks_path
    sha256 = header.manifest.task_set.sha256 if header.manifest is not None else ""
    if stored and sha256 and task_set_digest(stored) != sha256:
        raise TaskSetMissing(
            f"{folder}: its stored task digests do not give its task_set.sha256 (damaged store)"
        )
    wanted = list(dict.fromkeys(task_ids if task_ids is not None else stored))
    if not where.exists():
        raise TaskSetMissing(f"{folder}: its task set {where} is not there (moved or deleted)")
    found: dict[str, Task] = {}
    for domain in sorted({task_id.split("/", 1)[0] for task_id in wanted}):
        if where.is_dir() and not any(
            (where / f"{domain}_tasks{ext}").is_file() for ext in (".json", ".json.gz")
        ):
            raise TaskSetMissing(f"{folder}: its {domain} task file is not in {where} (moved or deleted)")
        try:
            by_id = tasks_by_id(where, domain)
        except (LoadError, RunSpecError, OSError, KeyError, ValueError) as exc:
            raise TaskSetMissing(
                f"{folder}: its {domain} tasks cannot be read from {where} ({exc})"
            ) from None
        for task_id in (t for t in wanted if t.split("/", 1)[0] == domain):
            task = by_id.get(task_id)
            if task is None:
                raise TaskSetMissing(f"{folder}: task {task_id} is not in {where} (the task file changed)")
            if task_id in stored and task_digest(task) != stored[task_id]:
                shown = sha256[:DIGEST_SHOWN]
                raise TaskSetMissing(
                    f"{folder}: {where} holds other tasks than those played (task_set.sha256 {shown}; "
                    f"first differing task {task_id})"
                )
            found[task_id] = task
    return found


def source_tasks(
    scores: Iterable[RunScore], run_folders: Sequence[Path] = ()
) -> tuple[list[tuple[Task, str]], list[str]]:
    """The distinct tasks behind ``scores`` (in order of first appearance), each with its task id,
    and the problems that kept some out (one line per source).

    A trajectory file's scores carry their task; a run folder's (``source`` is the folder) are
    looked up in its manifest's task set (``run_folder_tasks``). A score whose task is known neither
    way (an Inspect log) is a problem of its source.
    """
    folders = {folder.as_posix(): folder for folder in run_folders}
    by_folder: dict[str, list[str]] = {}
    out: dict[tuple[str, str], tuple[Task, str]] = {}
    problems: list[str] = []
    unknown: dict[str, None] = {}
    for score in scores:
        if score.task is not None:
            out.setdefault((score.task_id, task_digest(score.task)), (score.task, score.task_id))
        elif score.source in folders:
            by_folder.setdefault(score.source, []).append(score.task_id)
        else:
            unknown[score.source] = None
    for source, task_ids in by_folder.items():
        if not (folders[source] / STORE_NAME).is_file():
            problems.append(
                f"{source}: the tasks it was played on are not known (an Inspect log names no task file)"
            )
            continue
        try:
            tasks = run_folder_tasks(folders[source], task_ids)
        except TaskSetMissing as exc:
            problems.append(str(exc))
            continue
        for task_id, task in tasks.items():
            out.setdefault((task_id, task_digest(task)), (task, task_id))
    problems += [f"{source}: the tasks it was played on are not known" for source in unknown]
    return list(out.values()), problems


def source_baselines(
    scores: Iterable[RunScore],
    run_folders: Sequence[Path] = (),
    protocol: str | Protocol = "sound",
    *,
    names: Sequence[str] = BASELINE_AGENTS,
    tasks: Sequence[Task] | None = None,
    justify_refusal: bool = False,
) -> Baselines:
    """The baselines beside ``scores``: played on the sources' own tasks (``source_tasks``), or on
    ``tasks`` when the user named task files. Unavailable, with every reason, when some source's
    tasks cannot be found: a baseline on other tasks than the agents' is never shown."""
    if tasks is not None:
        return play_baselines(with_ids(list(tasks)), protocol, names=names, justify_refusal=justify_refusal)
    found, problems = source_tasks(scores, run_folders)
    if problems:
        return Baselines({}, "; ".join(problems))
    return play_baselines(found, protocol, names=names, justify_refusal=justify_refusal)


def baseline_rows(baselines: Baselines) -> Mapping[str, list[RunScore] | str]:
    """Each baseline's scores, or the reason it is unavailable (what a leaderboard row shows)."""
    if baselines.unavailable is not None:
        return dict.fromkeys(BASELINE_AGENTS, baselines.unavailable)
    return dict(baselines.scores)
