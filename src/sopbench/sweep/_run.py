"""Running a sweep: every configuration into its own run folder, then one leaderboard."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sopbench.report import LeaderboardReport, build_leaderboard
from sopbench.runner import STORE_NAME, EpisodePlayer, Progress, RunReport, open_existing, run, select_tasks
from sopbench.scoring import SOUND

from ._file import Configuration, SweepError

SweepProgress = Callable[[str, Progress], None]  # (configuration name, its counts)


@dataclass
class SweepReport:
    """What a sweep did: each configuration's run report (in file order) and the leaderboard."""

    reports: dict[str, RunReport] = field(default_factory=dict)
    new: list[str] = field(default_factory=list)  # configurations that had no run folder
    leaderboard: LeaderboardReport | None = None

    @property
    def complete(self) -> bool:
        return all(r.complete for r in self.reports.values())


def _stored_identity(folder: Path) -> dict[str, Any] | None:
    if not (folder / STORE_NAME).is_file() or (folder / STORE_NAME).stat().st_size == 0:
        return None
    store = open_existing(folder)
    try:
        manifest = store.manifest()
    finally:
        store.close()
    return None if manifest is None else dict(manifest.get("config", {}))


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
) -> SweepReport:
    """Run (or resume) every configuration, one after the other, each at its own concurrency.

    A configuration whose run folder holds a run with other settings is refused before any episode
    (``SweepError`` naming them all); new configurations are added to the sweep's folder."""
    new, changed = changed_configurations(configurations)
    if changed:
        raise SweepError(
            "changed configurations (their folders hold runs with other settings; rename them or "
            f"use another --output): {'; '.join(changed)}"
        )
    report = SweepReport(new=new)
    for configuration in configurations:
        report.reports[configuration.name] = run(configuration.config, _named(progress, configuration.name), player)
    report.leaderboard = build_leaderboard(
        [], SOUND, run_folders=[c.config.output for c in configurations]
    )
    return report


def _named(progress: SweepProgress | None, name: str) -> Callable[[Progress], None] | None:
    if progress is None:
        return None
    return lambda counts: progress(name, counts)


def planned_episodes(configurations: list[Configuration]) -> int:
    """Episodes over the whole sweep (finished ones included): the total bar's length."""
    return sum(len(select_tasks(c.config)) * c.config.runs for c in configurations)
