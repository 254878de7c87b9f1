"""Running a sweep: every configuration into its own run folder, then one leaderboard."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sopbench.results import Leaderboard, ScoringOptions, Sources, leaderboard
from sopbench.runner import Progress, RunInterrupted, RunReport, read_run
from sopbench.runner.episode import EpisodePlayer, select_tasks
from sopbench.runner.frontend import RunRefused, run_many
from sopbench.runner.store import STORE_NAME

from ._file import Configuration, SweepError

SweepProgress = Callable[[str, Progress], None]  # (configuration name, its counts)


@dataclass
class SweepReport:
    """What a sweep did: each configuration's run report (in file order) and the leaderboard."""

    reports: dict[str, RunReport] = field(default_factory=dict)
    new: list[str] = field(default_factory=list)  # configurations that had no run folder
    leaderboard: Leaderboard | None = None

    @property
    def complete(self) -> bool:
        return all(r.complete for r in self.reports.values())


def _stored_identity(folder: Path) -> dict[str, Any] | None:
    if not (folder / STORE_NAME).is_file():
        return None
    manifest = read_run(folder, header_only=True).manifest
    return None if manifest is None else dict(manifest.config)


def changed_configurations(configurations: list[Configuration]) -> tuple[list[str], list[str]]:
    """(configurations without a run folder yet, configurations whose folder holds another run:
    a result-determining setting changed in the file since it ran, as ``name (setting, ...)``)."""
    new: list[str] = []
    changed: list[str] = []
    for configuration in configurations:
        stored = _stored_identity(configuration.config.output)
        if stored is None:
            new.append(configuration.name)
            continue
        identity = configuration.config.identity()
        differing = sorted(k for k in identity.keys() | stored.keys() if identity.get(k) != stored.get(k))
        if differing:
            changed.append(f"{configuration.name} ({', '.join(differing)})")
    return new, changed


def run_sweep(
    configurations: list[Configuration],
    progress: SweepProgress | None = None,
    player: EpisodePlayer | None = None,
    *,
    concurrency: int | None = None,
) -> SweepReport:
    """Run (or resume) every configuration, side by side: at most ``concurrency`` episodes in flight
    over the whole sweep (default: the largest configuration's), at most each configuration's own
    ``concurrency`` in it, and at most ``limit`` in the configurations sharing a ``limited_by``
    entry ``(name, limit)`` (an endpoint they share). With a ``player`` (a cluster) the limits hold over the whole cluster,
    since this process hands out every episode and writes every row.

    A configuration whose run folder holds a run with other settings is refused before any episode
    (``SweepError`` naming them all); new configurations are added to the sweep's folder. One whose
    endpoint refuses its requests (a wrong key) stops alone: its report says why (``refused``)."""
    new, changed = changed_configurations(configurations)
    if changed:
        raise SweepError(
            "changed configurations (their folders hold runs with other settings; rename them or "
            f"use another --output): {'; '.join(changed)}"
        )
    report = SweepReport(new=new)
    if not configurations:
        return report
    names = [c.name for c in configurations]
    try:
        reports = run_many(
            [c.config for c in configurations],
            concurrency=concurrency or max(c.config.concurrency for c in configurations),
            progress=None if progress is None else (lambda index, counts: progress(names[index], counts)),
            player=player,
            shared_limits={name: limit for c in configurations for name, limit in c.limited_by},
            limited_by=[[name for name, _ in c.limited_by] for c in configurations],
        )
    except RunRefused as exc:  # a refused key stops its configuration only: the others are shown
        reports = exc.reports
    report.reports = dict(zip(names, reports, strict=True))
    # The stored sound verdicts of every configuration's run folder, the refuse-all floor beside.
    report.leaderboard = leaderboard(
        Sources(run_folders=tuple(c.config.output for c in configurations)), ScoringOptions()
    )
    return report


def stored_when_interrupted(interrupted: RunInterrupted, configurations: list[Configuration]) -> str:
    """What an interrupted sweep left stored, per configuration, on one line: ``1,152 of 1,836
    episodes stored (52 now): reference-full 300 of 306 (+248 before), ...``."""
    names = {c.config.output: c.name for c in configurations}
    parts = []
    for folder, counts in interrupted.parts:
        before = f" (+{counts.skipped:,} before)" if counts.skipped else ""
        parts.append(
            f"{names.get(folder, folder.name)} {counts.skipped + counts.done:,} of {counts.total:,}{before}"
        )
    total = interrupted.progress
    return (
        f"{total.skipped + total.done:,} of {total.total:,} episodes stored ({total.done:,} now): "
        + ", ".join(parts)
        + "; run the same command to resume"
    )


def planned_episodes(configurations: list[Configuration]) -> int:
    """Episodes over the whole sweep (finished ones included): the total bar's length."""
    selected: dict[str, int] = {}  # tasks per task set, domains and limit (read once)
    total = 0
    for configuration in configurations:
        key = configuration.config.model_dump_json(include={"tasks", "domains", "limit"})
        if key not in selected:
            selected[key] = len(select_tasks(configuration.config))
        total += selected[key] * configuration.config.runs
    return total
