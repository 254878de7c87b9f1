"""``sopbench leaderboard``: the published table recomputed from trajectory files and run folders,
with the refuse-all (and no-verify) rows and the protocol comparison when asked for.

The rows and their ranking are computed by ``sopbench.scoring.leaderboard``; this module gathers
what goes into them. ``_leaderboard_text`` renders the result as markdown, CSV or JSON."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from sopbench.runner import baseline_scores
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
    refuse_all_scores,
)
from sopbench.statistics import Outcome
from sopbench.tasks import Task
from sopbench.traces import iter_records

from ._cards import CardChoice
from ._sources import score_files, scores_of_run_folders, stored_protocol_name

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
    baseline_tasks: str = ""  # where the refuse-all row's tasks came from
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
    progress: Callable[[str], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
) -> LeaderboardReport:
    """Score every run of every record of ``files`` and read the stored verdicts of ``run_folders``
    (a row's rate is the mean pass rate over all its runs; ``runs="first"``: each task's first run
    only, as the published table counted), add the refuse-all row over ``tasks``
    (default: the tasks inside the records), and with ``compare_protocols`` score the first run of
    every record under both protocols and each quirk toggled alone (``progress`` is called once per
    file for each pass). ``no_verify``: add the no-verify baseline as a row, played as ``sopbench run``
    plays it on the refuse-all row's tasks of the domains the agents' rows cover."""
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
    source = "the task files"
    if tasks is None:
        tasks, source = tasks_in_records(files), "the tasks inside the records"
    if no_verify:
        covered = {score.domain for score in scores}
        tasks = list(tasks)
        scores += baseline_scores(
            [t for t in tasks if t.domain in covered], "no-verify", stored_protocol_name(protocol)
        )
    baseline = refuse_all_scores(tasks, protocol, justify_refusal=justify_refusal)
    # no task to refuse (run folders alone): no row rather than an empty one
    rows = leaderboard(scores, baseline=baseline or None, min_cases=min_cases, first_run_only=False)
    outcomes: dict[int, list[Outcome]] = {}
    if by:
        # Each source (a file or a run folder) is behind exactly one row.
        row_of = {name: id(row) for row in rows for names in row.files.values() for name in names}
        for score in scores:
            if score.source in row_of:
                outcomes.setdefault(row_of[score.source], []).append(score.outcome())
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
        records_without_runs=without_runs,
        pass_hat_k=pass_hat_k,
        by=by,
        outcomes=outcomes,
        scores=scores,
    )


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


def tasks_in_records(files: Iterable[Path]) -> list[Task]:
    """Each distinct task (domain, goal, prompt) of the records, in order of first appearance."""
    seen: dict[tuple[str, str, str], Task] = {}
    for record in iter_records(list(files), keep_going=True, on_error=lambda _error: None):
        seen.setdefault((record.domain, record.task.goal, record.task.user_prompt), record.task)
    return list(seen.values())
