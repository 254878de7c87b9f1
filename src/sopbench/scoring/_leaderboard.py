"""The leaderboard: one row per configuration (model, mode, tool list, user), ranked."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sopbench.domains import ordered_domains
from sopbench.statistics import RateInterval, clustered, rank_groups

from ._api import RunScore
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
    # A floor (refuse-all, no-verify): ranked where it scores, marked; ``unavailable`` says why it
    # has no figure (its tasks could not be found), and then it is not ranked.
    floor: bool = False
    unavailable: str | None = None
    rank: str = ""  # "4", or "3–5" for rows a paired test over shared tasks cannot tell apart
    # task (id and digest) -> (passed, runs): what rank groups pair rows over
    per_task: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)

    @property
    def ranked(self) -> bool:
        return not self.below_min_cases and self.unavailable is None and bool(self.cells)

    def score(self, rank_by: str = "pass") -> float:
        """What the ranking orders by: the Overall pass rate, or the balanced score."""
        if rank_by == "balanced":
            balanced = None if self.pooled is None else self.pooled.balanced
            return self.overall.rate if balanced is None else balanced
        return self.overall.rate

    @property
    def overall(self) -> LeaderboardCell:
        """Pooled over every case of every domain (the published "Overall")."""
        cells = self.cells.values()
        return LeaderboardCell(
            sum(c.passed for c in cells),
            sum(c.cases for c in cells),
            tuple(t for c in cells for t in c.per_task),
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
            "floor": self.floor,
            "unavailable": self.unavailable,
            "rank": self.rank or None,
            "ci95_method": "wilson, clustered by task" if clustered(self.overall.per_task) else "wilson",
        }
        if pooled is not None and pooled.repeated.max_runs >= 2:
            out.update(pooled.repeated.as_dict())
        return out


def _cell(cell: LeaderboardCell) -> dict[str, Any]:
    return {"passed": cell.passed, "cases": cell.cases, "rate": cell.rate, "ci95": listed_interval(cell.ci95)}


RowKey = tuple[str, str, str, str | None, str]  # model, mode, tool list, user, folder


RANK_BY = ("pass", "balanced")
REFUSE_ALL_MODEL = "refuse-all"  # the floor's row (played by ``sopbench.runner.baselines.source_baselines``)


def leaderboard(
    scores: Iterable[RunScore],
    *,
    baseline: Mapping[str, Rate] | Iterable[RunScore] | None = None,
    floors: Mapping[str, Sequence[RunScore] | str] | None = None,
    first_run_only: bool = True,
    min_cases: int = 0,
    rank_by: str = "pass",
) -> list[LeaderboardRow]:
    """One row per configuration and folder, ranked so that only comparable rows compete.

    Rows come from the trajectory file names (``RunScore.source``): files of one configuration
    pool into one row when they sit in the same place (``<folder>/<domain>/<file>``); the same
    configuration in two folders gives two rows. The published table counts each task's first run
    (``first_run_only``). ``baseline`` adds the refuse-all row: its scores (then the row has the
    split rates too) or its rates per domain.
    ``floors`` adds a floor row per name: its scores, or the reason it has none (shown, not ranked).

    Ranking (by ``rank_by``: the Overall pass rate, or the balanced score): floors are ranked where
    they score, among the agents, and marked. Rows whose difference from the row above is not
    significant (exact sign test over their shared tasks, at 0.05) share a rank (``rank``, e.g.
    ``3–5``). Rows covering every domain of the table come first, best first; then rows
    covering fewer domains (``coverage_differs``), grouped by the domains they cover (most first)
    and ranked by Overall within a group, so that no row is ranked by a pooled rate over other
    domains than its neighbours'. Agents' rows with fewer than ``min_cases`` cases are set apart
    (``below_min_cases``) after all others.
    """
    groups: dict[RowKey, list[RunScore]] = {}
    for score in scores:
        if not first_run_only or score.run == 0:
            groups.setdefault(_row_key(score), []).append(score)
    if rank_by not in RANK_BY:
        raise ValueError(f"unknown ranking {rank_by!r} (expected {', '.join(RANK_BY)})")
    out = [_row(key, group) for key, group in groups.items()]
    if isinstance(baseline, Mapping):
        rates = {d: LeaderboardCell(r.passed, r.total) for d, r in baseline.items() if d != ALL_DOMAINS}
        out.append(LeaderboardRow(REFUSE_ALL_MODEL, "-", "-", None, rates, floor=True))
    elif baseline is not None:
        out.append(replace(_row((REFUSE_ALL_MODEL, "-", "-", None, ""), list(baseline)), floor=True))
    for name, scores_or_reason in (floors or {}).items():
        if isinstance(scores_or_reason, str):
            out.append(LeaderboardRow(name, "-", "-", None, floor=True, unavailable=scores_or_reason))
        else:
            out.append(replace(_row((name, "-", "-", None, ""), list(scores_or_reason)), floor=True))
    # The table's coverage is what the agents' rows cover; a floor covers whatever tasks it was
    # played on, so it does not widen it.
    agents = [row for row in out if not row.floor] or out
    table_domains = {d for row in agents for d in row.cells}
    for row in out:
        row.coverage_differs = bool(row.cells) and set(row.cells) != table_domains
        # A floor covers the tasks it was played on, whatever their number: it stays in the table.
        row.below_min_cases = not row.floor and row.overall.cases < min_cases
    out.sort(key=lambda row: _rank(row, rank_by))
    _set_ranks(out)
    return out


def _rank(row: LeaderboardRow, rank_by: str) -> tuple[Any, ...]:
    coverage = (-len(row.cells), tuple(sorted(row.cells))) if row.coverage_differs else ()
    names = (row.model, row.mode, row.tool_list, row.user or "", row.folder)
    return (
        row.below_min_cases,
        row.unavailable is not None,
        row.coverage_differs,
        coverage,
        -row.score(rank_by),
        names,
    )


def _set_ranks(rows: list[LeaderboardRow]) -> None:
    """Rank groups among the rows ranked together (same coverage), positions counted over all."""
    ranked = [row for row in rows if row.ranked]
    position = 0
    for _, group in itertools.groupby(
        ranked, key=lambda row: (row.coverage_differs, tuple(sorted(row.cells)))
    ):
        members = list(group)
        for row, label in zip(members, rank_groups([r.per_task for r in members]), strict=True):
            first, _, last = label.partition("–")
            row.rank = f"{int(first) + position}" + (f"–{int(last) + position}" if last else "")
        position += len(members)


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
    return LeaderboardRow(
        model,
        mode,
        tool_list,
        user,
        cells,
        pooled=summary.overall,
        folder=folder,
        files=files,
        per_task=_per_task(scores),
    )


def _per_task(scores: Sequence[RunScore]) -> dict[str, tuple[int, int]]:
    """(passed, runs) per task, a task named by its id and digest: rows pair over the same tasks."""
    out: dict[str, list[int]] = {}
    for score in scores:
        counts = out.setdefault(f"{score.task_key}#{score.task_digest}", [0, 0])
        counts[0] += score.passed
        counts[1] += 1
    return {task: (p, n) for task, (p, n) in out.items()}


def _row_key(score: RunScore) -> RowKey:
    config = score.config
    if score.configuration is not None:  # a run folder's episode: the folder sets its rows apart
        return (
            config.model or config.agent,
            config.tool_mode or "-",
            config.tool_list or "-",
            config.user,
            score.source,
        )
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
