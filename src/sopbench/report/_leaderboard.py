"""``sopbench leaderboard``: the published table recomputed from trajectory files and run folders,
with the refuse-all (and no-verify) rows and the protocol comparison when asked for.

The rows and their ranking are computed by ``sopbench.scoring.leaderboard``; this module gathers
what goes into them. ``_leaderboard_text`` renders the result as markdown, CSV or JSON."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from sopbench.runner.baselines import BASELINE_AGENTS, baseline_rows, source_baselines
from sopbench.scoring import (
    Comparison,
    LeaderboardRow,
    Protocol,
    RunScore,
    ScoringReport,
    compare,
    leaderboard,
    leaderboard_domains,
    leaderboard_max_runs,
)
from sopbench.statistics import Outcome
from sopbench.tasks import Task

from ._cards import CardChoice
from ._sources import score_files, scores_of_run_folders

DEFAULT_MIN_CASES = 20


@dataclass
class LeaderboardReport:
    """The rows (ranked first, rows under ``min_cases`` last), and the comparison when asked for."""

    rows: list[LeaderboardRow]
    protocol: str
    justified: bool = False
    pass_hat_k: bool = False  # add pass^k columns, k = 2..K
    by: Sequence[str] = ()  # breakdowns shown under the table (JSON: always, per row)
    outcomes: dict[int, list[Outcome]] = field(default_factory=dict)  # by id() of the row
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


def build_leaderboard(
    files: list[Path],
    protocol: Protocol,
    *,
    run_folders: Sequence[Path] = (),
    runs: str = "all",
    pass_hat_k: bool = False,
    by: Sequence[str] = (),
    tasks: Iterable[Task] | None = None,
    credit_cards: CardChoice | None = None,
    justify_refusal: bool = False,
    compare_protocols: bool = False,
    min_cases: int = DEFAULT_MIN_CASES,
    no_verify: bool = False,
    rank_by: str = "pass",
    progress: Callable[[str], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
) -> LeaderboardReport:
    """Score every run of every record of ``files`` and read the stored verdicts of ``run_folders``
    (a row's rate is the mean pass rate over all its runs; ``runs="first"``: each task's first run
    only, as the published table counted), add the refuse-all floor (and with ``no_verify`` the
    no-verify one) played on the sources' own tasks (``sopbench.runner.baselines.source_baselines``: a run
    folder's manifest, a trajectory file's records; ``tasks`` when the user named task files), and
    with ``compare_protocols`` score the first run of every record under both protocols and each
    quirk toggled alone (``progress`` is called once per file for each pass). When a source's
    tasks cannot be found the floors show why instead of a figure, and ``on_problem`` hears it."""
    scoring = ScoringReport()
    scores = scores_of_run_folders(
        run_folders, protocol, on_problem, progress=progress, first_runs_only=runs == "first"
    )
    without_runs: list[tuple[str, int]] = []
    # Rows are keyed by the file's path as found, so that files of one configuration in two
    # different folders never pool into one row.
    scores += [
        replace(score, source=file.as_posix())
        for file, score in score_files(
            files,
            protocol,
            scoring,
            without_runs,
            runs=runs,
            credit_cards=credit_cards,
            justify_refusal=justify_refusal,
            progress=progress,
            on_problem=on_problem,
        )
    ]
    source = "the task files given" if tasks is not None else "the sources' own tasks"
    floor_names: tuple[str, ...] = BASELINE_AGENTS if no_verify else BASELINE_AGENTS[:1]
    baselines = source_baselines(
        floor_sources(scores),
        run_folders,
        protocol,
        names=floor_names,
        tasks=None if tasks is None else list(tasks),
        justify_refusal=justify_refusal,
    )
    if baselines.unavailable is not None and on_problem is not None:
        on_problem(f"refuse-all and no-verify not shown: {baselines.unavailable}")
    floors = {name: value for name, value in baseline_rows(baselines).items() if name in floor_names}
    rows = leaderboard(scores, floors=floors, min_cases=min_cases, first_run_only=False, rank_by=rank_by)
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
    if compare_protocols:
        comparison = compare_files(files, credit_cards=credit_cards, progress=progress)
        if on_problem is not None:
            for problem in comparison.errors:
                if problem not in scoring.errors:
                    on_problem(problem)
    return LeaderboardReport(
        rows=rows,
        protocol=str(protocol),
        justified=justify_refusal,
        min_cases=min_cases,
        comparison=comparison,
        baseline_tasks=source,
        baselines_unavailable=baselines.unavailable,
        rank_by=rank_by,
        records_without_runs=without_runs,
        pass_hat_k=pass_hat_k,
        by=by,
        outcomes=outcomes,
        scores=scores,
    )


DEFAULT_USERS = (None, "none", "default")


def floor_sources(scores: Sequence[RunScore]) -> list[RunScore]:
    """The scores whose tasks the floors are played on: those of the configurations with the
    default user when there are any. A published adversarial-user file holds other tasks (the same
    requests, pressed by the user), which would otherwise be pooled into the floors' Overall."""
    return [s for s in scores if s.config.user in DEFAULT_USERS] or list(scores)


def compare_files(
    files: list[Path],
    *,
    credit_cards: CardChoice | None = None,
    progress: Callable[[str], None] | None = None,
) -> Comparison:
    """``sopbench.scoring.compare`` over the first run of each record, with a call per file."""
    if progress is None:
        return compare(files, credit_cards=credit_cards, first_run_only=True)

    def choose_and_tell(path: Path) -> str | None:
        # compare() asks for the card reading once per loaded file, just before scoring it: the
        # one hook it offers to follow its progress.
        progress(f"{path.parent.name}/{path.name}")
        return credit_cards(path) if credit_cards is not None else None

    return compare(files, credit_cards=choose_and_tell, first_run_only=True)
