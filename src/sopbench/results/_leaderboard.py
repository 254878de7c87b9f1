"""The leaderboard: the published table recomputed from trajectory files and run folders, with the
refuse-all (and no-verify) rows and the protocol comparison when asked for.

The rows and their ranking are computed by ``sopbench.scoring.leaderboard``; this module gathers
what goes into them. ``sopbench.report`` renders the result as markdown, CSV, JSON or HTML."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sopbench._io import collector_paused
from sopbench.cache import VerdictCache
from sopbench.runner.baselines import BASELINE_AGENTS, baseline_rows
from sopbench.scoring import (
    ComparedRun,
    Comparison,
    LeaderboardRow,
    RunScore,
    ScoringReport,
    compared_runs,
    leaderboard_domains,
    leaderboard_max_runs,
)
from sopbench.scoring import compare as compare_quirks
from sopbench.scoring import leaderboard as ranked_rows
from sopbench.statistics import Outcome

from ._breakdowns import BREAKDOWN_ORDER, breakdowns
from ._cards import CardChoice
from ._floors import floor_sources, floors_beside
from ._options import DEFAULT_MIN_CASES, ScoringOptions
from ._sources import Sources, score_files, scores_of_run_folders

__all__ = ["Leaderboard", "compare_protocols", "leaderboard", "report_leaderboard"]

Progress = Callable[[str], None]
ProblemSink = Callable[[str], None]


@dataclass(frozen=True)
class Leaderboard:
    """The rows (ranked first, rows under ``min_cases`` last), and the comparison when asked for."""

    rows: list[LeaderboardRow]
    protocol: str
    justified: bool = False
    pass_hat_k: bool = False  # add pass^k columns, k = 2..K
    by: Sequence[str] = ()  # breakdowns shown under the table (JSON: always, per row)
    outcomes: dict[int, list[Outcome]] = field(default_factory=dict)  # by id() of the row; kept with ``by``
    min_cases: int = DEFAULT_MIN_CASES
    comparison: Comparison | None = None
    baseline_tasks: str = ""  # where the floors' tasks came from
    baselines_unavailable: str | None = None  # why the floors have no figure (their tasks are missing)
    rank_by: str = "pass"
    records_without_runs: list[tuple[str, int]] = field(default_factory=list)  # ("<domain>/<file>", record)
    scores: list[RunScore] = field(default_factory=list)  # every score behind the agents' rows

    @property
    def ranked(self) -> list[LeaderboardRow]:
        return [row for row in self.rows if not row.below_min_cases]

    @property
    def apart(self) -> list[LeaderboardRow]:
        return [row for row in self.rows if row.below_min_cases]

    @property
    def max_runs(self) -> int:
        return leaderboard_max_runs(self.rows)

    @property
    def hat_ks(self) -> list[int]:
        """The k of the pass^k columns (2..K), none unless asked for."""
        return list(range(2, self.max_runs + 1)) if self.pass_hat_k else []

    @property
    def domains(self) -> list[str]:
        return leaderboard_domains(self.rows)

    def row_outcomes(self, row: LeaderboardRow) -> list[Outcome]:
        """The outcomes behind ``row`` (kept only with ``by``)."""
        return self.outcomes.get(id(row), [])

    def row_breakdowns(self, row: LeaderboardRow) -> dict[str, Any]:
        """The breakdowns asked for (``by``), in that order, over the outcomes behind ``row``."""
        return breakdowns(self.row_outcomes(row), self.by)


def leaderboard(
    sources: Sources,
    options: ScoringOptions,
    *,
    pass_hat_k: bool = False,
    by: Sequence[str] = (),
    compare: bool = False,
    no_verify: bool = False,
    progress: Progress | None = None,
    on_problem: ProblemSink | None = None,
) -> Leaderboard:
    """Read the stored verdicts of ``sources.run_folders`` and score every run of every record of
    ``sources.files`` (a row's rate is the mean pass rate over its runs; ``options.runs`` "first":
    each task's first run only, as the published table counted), add the refuse-all floor (and with
    ``no_verify`` the no-verify one) played on the sources' own tasks or ``options.floor_tasks``,
    rank the rows (``options.rank_by``, ``options.min_cases``), keep the outcomes behind each row
    for the breakdowns ``by``, and with ``compare`` score the first run of every record under both
    protocols and each quirk toggled alone (``progress`` is called once per file for each pass).
    When a source's tasks cannot be found the floors show why instead of a figure, and
    ``on_problem`` hears it."""
    # Everything built here (scores, rows, the outcomes behind them) holds no cycles and lives as
    # long as the leaderboard: built with the collector paused, then filed as old, it is not walked
    # by young collections as it grows nor by a full collection that its growth would set off
    # (0.4 s of a report over the published set).
    with collector_paused():
        protocol = options.protocol
        scoring = ScoringReport()
        scores = scores_of_run_folders(
            sources.run_folders,
            protocol,
            on_problem,
            progress=progress,
            first_runs_only=options.first_runs_only,
        )
        without_runs: list[tuple[str, int]] = []
        # Rows are keyed by the file's path as found, so that files of one configuration in two
        # different folders never pool into one row.
        scores += [
            replace(score, source=file.as_posix())
            for file, score in score_files(
                sources.files, options, scoring, without_runs, progress=progress, on_problem=on_problem
            )
        ]
        floor_names: tuple[str, ...] = BASELINE_AGENTS if no_verify else BASELINE_AGENTS[:1]
        baselines = floors_beside(floor_sources(scores), sources, options, floor_names)
        if baselines.unavailable is not None and on_problem is not None:
            on_problem(f"refuse-all and no-verify not shown: {baselines.unavailable}")
        floors = {name: value for name, value in baseline_rows(baselines).items() if name in floor_names}
        rows = ranked_rows(
            scores, floors=floors, min_cases=options.min_cases, first_run_only=False, rank_by=options.rank_by
        )
        outcomes: dict[int, list[Outcome]] = {}
        if by:
            # Each source (a file or a run folder) is behind exactly one row.
            row_of = {name: id(row) for row in rows for names in row.files.values() for name in names}
            floor_scores = [score for played in baselines.scores.values() for score in played]
            for score in [*scores, *floor_scores]:  # the floors' rows too (refuse-all passes only by default)
                if score.source in row_of:
                    outcomes.setdefault(row_of[score.source], []).append(score.outcome())
            for row in rows:  # the floors' too: the report pairs each agent's runs with them
                played = floors.get(row.model) if row.floor else None
                if isinstance(played, list):
                    outcomes[id(row)] = [score.outcome() for score in played]
        if on_problem is not None:
            for row in rows:
                for domain, names in row.files.items():
                    if len(names) > 1:
                        on_problem(
                            f"{', '.join(names)}: several files for {domain} in one row ({row.model}); pooled"
                        )
        comparison = None
        if compare:
            comparison = compare_protocols(
                list(sources.files), credit_cards=options.credit_cards, progress=progress, cache=options.cache
            )
            if on_problem is not None:
                for problem in comparison.errors:
                    if problem not in scoring.errors:
                        on_problem(problem)
        return Leaderboard(
            rows=rows,
            protocol=str(protocol),
            justified=options.justify_refusal,
            pass_hat_k=pass_hat_k,
            by=by,
            outcomes=outcomes,
            min_cases=options.min_cases,
            comparison=comparison,
            baseline_tasks=options.floor_tasks_source,
            baselines_unavailable=baselines.unavailable,
            rank_by=options.rank_by,
            records_without_runs=without_runs,
            scores=scores,
        )


def report_leaderboard(
    sources: Sources,
    options: ScoringOptions,
    *,
    progress: Progress | None = None,
    on_problem: ProblemSink | None = None,
) -> Leaderboard:
    """The leaderboard ``sopbench report`` lays out: with pass^k, every breakdown, and both floors
    (refuse-all and no-verify, the no-verify agent played here, not by the renderer)."""
    return leaderboard(
        sources,
        options,
        pass_hat_k=True,
        by=BREAKDOWN_ORDER,
        no_verify=True,
        progress=progress,
        on_problem=on_problem,
    )


def compare_protocols(
    files: list[Path],
    *,
    credit_cards: CardChoice | None = None,
    progress: Progress | None = None,
    cache: VerdictCache | None = None,
) -> Comparison:
    """Sound against sopbench, and each quirk toggled alone (``sopbench.scoring.compare``), over the
    first run of each record of ``files``, with a call to ``progress`` per file. With ``cache``, a
    file compared so before is read back."""
    if cache is None and progress is None:
        return compare_quirks(files, credit_cards=credit_cards, first_run_only=True)
    result = Comparison()
    for file in files:
        if progress is not None:
            progress(f"{file.parent.name}/{file.name}")
        compared: Iterable[ComparedRun | str]
        if cache is not None:
            cards = credit_cards(file) if credit_cards is not None else None
            compared = cache.compared_file(file, cards, first_run_only=True)
        else:
            compared = compared_runs([file], credit_cards=credit_cards, first_run_only=True)
        for item in compared:
            result.add(item)
    return result
