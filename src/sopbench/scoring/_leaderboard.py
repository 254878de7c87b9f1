"""The leaderboard: one row per configuration (model, mode, tool list, user), ranked."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sopbench.domains import ordered_domains
from sopbench.statistics import RateInterval

from ._api import RunScore
from ._baseline import REFUSE_ALL_MODEL
from ._summary import ALL_DOMAINS, DomainSummary, Rate, listed_interval, summarize


# ---- the leaderboard -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LeaderboardCell:
    """A cell's pass rate; ``per_task`` (each task's passed and runs) clusters its interval by task
    when a task has several runs."""

    passed: int
    cases: int
    per_task: tuple[tuple[int, int], ...] = field(default=(), compare=False, repr=False)

    @property
    def rate(self) -> float:
        return self.passed / self.cases if self.cases else 0.0

    @property
    def ci95(self) -> tuple[float, float] | None:
        return RateInterval(self.passed, self.cases, self.per_task).ci95


@dataclass
class LeaderboardRow:
    """One (model, mode, tool list, user) configuration of one folder: a cell per domain and ``Overall``.

    ``pooled`` summarizes the row's counted runs: the rates on tasks that must succeed and must be
    refused, their balanced mean and, when judged, justified refusals (None for a row built from
    rates alone). ``folder`` is what sets apart files of the same configuration found in different
    places (``expA/bank/x.json`` and ``expB/bank/x.json``): the folders above the domain folder.
    ``files`` lists the trajectory files behind each domain's cell. ``coverage_differs``: the row
    covers other domains than the agents' rows of the table together; ``below_min_cases``: it has fewer cases than the table requires
    (listed apart, not ranked).
    """

    model: str
    mode: str
    tool_list: str
    user: str | None
    cells: dict[str, LeaderboardCell] = field(default_factory=dict)
    pooled: DomainSummary | None = None
    folder: str = ""
    files: dict[str, list[str]] = field(default_factory=dict)
    coverage_differs: bool = False
    below_min_cases: bool = False

    @property
    def overall(self) -> LeaderboardCell:
        """Pooled over every case of every domain (the published "Overall")."""
        cells = self.cells.values()
        return LeaderboardCell(
            sum(c.passed for c in cells), sum(c.cases for c in cells), tuple(t for c in cells for t in c.per_task)
        )

    def as_dict(self) -> dict[str, Any]:
        cells = {d: _cell(c) for d, c in self.cells.items()}
        cells["Overall"] = _cell(self.overall)
        pooled = self.pooled
        justified = None if pooled is None else pooled.justified_refusal_rate
        overall = self.overall
        out = {
            "model": self.model,
            "mode": self.mode,
            "tool_list": self.tool_list,
            "user": self.user,
            "cells": cells,
            "pass_rate": overall.rate if overall.cases else None,
            "pass_rate_ci95": listed_interval(overall.ci95),
            "should_succeed": None if pooled is None else pooled.succeed_rate.as_dict(),
            "should_refuse": None if pooled is None else pooled.refuse_rate.as_dict(),
            "balanced": None if pooled is None else pooled.balanced,
            "justified_refusal": None if justified is None else justified.as_dict(),
            "folder": self.folder,
            "files": {d: list(names) for d, names in self.files.items()},
            "domains_covered": sorted(self.cells),
            "coverage_differs": self.coverage_differs,
            "below_min_cases": self.below_min_cases,
        }
        if pooled is not None and pooled.repeated.max_runs >= 2:
            out.update(pooled.repeated.as_dict())
        return out


def _cell(cell: LeaderboardCell) -> dict[str, Any]:
    return {"passed": cell.passed, "cases": cell.cases, "rate": cell.rate, "ci95": listed_interval(cell.ci95)}


RowKey = tuple[str, str, str, str | None, str]  # model, mode, tool list, user, folder


def leaderboard(
    scores: Iterable[RunScore],
    *,
    baseline: Mapping[str, Rate] | Iterable[RunScore] | None = None,
    first_run_only: bool = True,
    min_cases: int = 0,
) -> list[LeaderboardRow]:
    """One row per configuration and folder, ranked so that only comparable rows compete.

    Rows come from the trajectory file names (``RunScore.source``): files of one configuration
    pool into one row when they sit in the same place (``<folder>/<domain>/<file>``); the same
    configuration in two folders gives two rows. The published table counts each task's first run
    (``first_run_only``). ``baseline`` adds the refuse-all row: its scores (``refuse_all_scores``,
    then the row has the split rates too) or its rates per domain (``refuse_all_baseline``).

    Ranking: rows covering every domain of the table come first, best Overall first; then rows
    covering fewer domains (``coverage_differs``), grouped by the domains they cover (most first)
    and ranked by Overall within a group, so that no row is ranked by a pooled rate over other
    domains than its neighbours'. Agents' rows with fewer than ``min_cases`` cases are set apart
    (``below_min_cases``) after all others.
    """
    groups: dict[RowKey, list[RunScore]] = {}
    for score in scores:
        if not first_run_only or score.run == 0:
            groups.setdefault(_row_key(score), []).append(score)
    out = [_row(key, group) for key, group in groups.items()]
    if isinstance(baseline, Mapping):
        rates = {d: LeaderboardCell(r.passed, r.total) for d, r in baseline.items() if d != ALL_DOMAINS}
        out.append(LeaderboardRow(REFUSE_ALL_MODEL, "-", "-", None, rates))
    elif baseline is not None:
        out.append(_row((REFUSE_ALL_MODEL, "-", "-", None, ""), list(baseline)))
    # The table's coverage is what the agents' rows cover; the baseline covers whatever task files
    # it was given, so it does not widen it.
    agents = [row for row in out if row.model != REFUSE_ALL_MODEL] or out
    table_domains = {d for row in agents for d in row.cells}
    for row in out:
        row.coverage_differs = set(row.cells) != table_domains
        # The baseline covers the task files given, whatever their size: it stays in the table.
        row.below_min_cases = row.model != REFUSE_ALL_MODEL and row.overall.cases < min_cases
    out.sort(key=_rank)
    return out


def _rank(row: LeaderboardRow) -> tuple[Any, ...]:
    coverage = (-len(row.cells), tuple(sorted(row.cells))) if row.coverage_differs else ()
    names = (row.model, row.mode, row.tool_list, row.user or "", row.folder)
    return (row.below_min_cases, row.coverage_differs, coverage, -row.overall.rate, names)


def _row(key: RowKey, scores: list[RunScore]) -> LeaderboardRow:
    summary = summarize(scores)
    cells = {
        d: LeaderboardCell(part.passed, part.runs, tuple(part.per_task()))
        for d, part in summary.domains.items()
        if d != ALL_DOMAINS
    }
    files: dict[str, list[str]] = {}
    for score in scores:
        names = files.setdefault(score.domain, [])
        if score.source not in names:
            names.append(score.source)
    model, mode, tool_list, user, folder = key
    return LeaderboardRow(model, mode, tool_list, user, cells, pooled=summary.overall, folder=folder, files=files)


def _row_key(score: RunScore) -> RowKey:
    config = score.config
    if score.configuration is not None:  # a run folder's episode: the folder sets its rows apart
        return (config.model or config.agent, config.tool_mode or "-", config.tool_list or "-", config.user, score.source)
    # A trajectory file: its configuration is what its name states (a file named otherwise is its
    # own configuration, with no mode or tool list).
    path = Path(score.source)
    folder = path.parent.parent if path.parent.name == score.domain else path.parent
    key = (config.model or path.name, config.tool_mode or "?", config.tool_list or "?", config.user)
    return (*key, "" if str(folder) == "." else folder.as_posix())


def leaderboard_domains(rows: Iterable[LeaderboardRow]) -> list[str]:
    """The table's domain columns: every domain a row covers, published ones first in their order."""
    return ordered_domains(d for row in rows for d in row.cells)


def leaderboard_max_runs(rows: Iterable[LeaderboardRow]) -> int:
    """The most runs any task of any row has (what pass^k columns go up to)."""
    return max((row.pooled.repeated.max_runs for row in rows if row.pooled is not None), default=0)
