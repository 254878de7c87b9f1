"""``sopbench leaderboard``: the published table recomputed from trajectory files, rendered as
markdown, CSV or JSON (one document, the protocol comparison inside it when asked for)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sopbench.domains import PUBLISHED_DOMAINS
from sopbench.runner import baseline_scores
from sopbench.scoring import (
    Comparison,
    LeaderboardRow,
    Protocol,
    RunScore,
    ScoringReport,
    compare,
    leaderboard,
    refuse_all_scores,
    score_paths,
)
from sopbench.statistics import Outcome, breakdown, wilson_interval
from sopbench.tasks import Task
from sopbench.traces import iter_records

from ._breakdowns import breakdown_tables
from ._cards import CardChoice
from ._sources import scores_of_run_folders, stored_protocol_name
from ._table import TextTable, interval_text, percent

LEADERBOARD_FORMATS = ("markdown", "csv", "json")
DEFAULT_MIN_CASES = 20
COVERAGE_MARK = "†"
SPLIT_COLUMNS = ["should succeed", "should refuse", "balanced"]


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
        return max((row.pooled.repeated.max_runs for row in self.rows if row.pooled is not None), default=0)

    @property
    def domains(self) -> list[str]:
        present = {d for row in self.rows for d in row.cells}
        return [d for d in PUBLISHED_DOMAINS if d in present] + sorted(present - set(PUBLISHED_DOMAINS))


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
    for file in files:
        before, before_empty = len(scoring.errors), len(scoring.records_without_runs)
        # Rows are keyed by the file's path as found, so that files of one configuration in two
        # different folders never pool into one row.
        scores += [
            replace(score, source=file.as_posix())
            for score in score_paths(
                [file],
                protocol,
                report=scoring,
                credit_cards=credit_cards,
                runs=runs,
                justify_refusal=justify_refusal,
            )
        ]
        for problem in scoring.errors[before:]:
            if on_problem is not None:
                on_problem(problem)
        label = f"{file.parent.name}/{file.name}"
        without_runs += [(label, index) for _name, index in scoring.records_without_runs[before_empty:]]
        if progress is not None:
            progress(label)
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
    rows = leaderboard(scores, baseline=baseline, min_cases=min_cases, first_run_only=False)
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


# ---- rendering -----------------------------------------------------------------------------------
def render_leaderboard(report: LeaderboardReport, output_format: str = "markdown") -> str:
    """The leaderboard as one markdown, CSV or JSON document.

    JSON: the list of rows; with a comparison, an object ``{"leaderboard": [...], "comparison": {...}}``.
    CSV cannot hold the comparison (``ValueError``).
    """
    if output_format == "json":
        rows = [_row_json(report, row) for row in report.rows]
        if report.comparison is None:
            return json.dumps(rows, indent=2) + "\n"
        return json.dumps({"leaderboard": rows, "comparison": report.comparison.as_dict()}, indent=2) + "\n"
    if output_format == "csv":
        if report.comparison is not None:
            raise ValueError("the protocol comparison does not fit in one CSV table")
        return _csv(report)
    if output_format == "markdown":
        return _markdown(report)
    raise ValueError(f"unknown format {output_format!r} (expected {', '.join(LEADERBOARD_FORMATS)})")


def _row_json(report: LeaderboardReport, row: LeaderboardRow) -> dict[str, Any]:
    data = row.as_dict()
    if report.by:
        outcomes = report.outcomes.get(id(row), [])
        data["breakdowns"] = {by: breakdown(outcomes, by) for by in report.by}
    return data


def _hat_ks(report: LeaderboardReport) -> list[int]:
    return list(range(2, report.max_runs + 1)) if report.pass_hat_k else []


def _header(report: LeaderboardReport, *, csv_form: bool = False) -> list[str]:
    split = SPLIT_COLUMNS + (["justified refusals"] if report.justified else [])
    hats = [f"pass^{k}" for k in _hat_ks(report)]
    intervals = ["Overall ci95 low", "Overall ci95 high", "balanced ci95 low", "balanced ci95 high"]
    return ["model", "mode", "tool list", "user", *report.domains, "Overall", *hats, *split] + (
        intervals if csv_form else []
    )


def _values(report: LeaderboardReport, row: LeaderboardRow, *, csv_form: bool) -> list[str]:
    def cell(passed: int | None, cases: int | None) -> str:
        if not cases or passed is None:
            return ""
        if csv_form:
            return f"{passed}/{cases}"
        return f"{100 * passed / cases:.2f} {interval_text(wilson_interval(passed, cases))} ({cases})"

    model = row.model
    if not csv_form:
        if _ambiguous(report, row):
            model += f" [{row.folder or '.'}]"
        if row.coverage_differs:
            model += f" {COVERAGE_MARK}"
    values = [model, row.mode, row.tool_list, row.user or ("" if csv_form else "-")]
    values += [
        cell(row.cells[d].passed, row.cells[d].cases) if d in row.cells else "" for d in report.domains
    ]
    values.append(cell(row.overall.passed, row.overall.cases))
    pooled = row.pooled
    repeated = None if pooled is None else pooled.repeated
    for k in _hat_ks(report):
        if repeated is None or k not in repeated.pass_hat_k:
            values.append("")
        elif csv_form:
            values.append(f"{repeated.pass_hat_k[k]:.6f}")
        else:
            values.append(f"{100 * repeated.pass_hat_k[k]:.2f} ({repeated.tasks_with_k[k]})")
    if pooled is None:
        values += [""] * (len(SPLIT_COLUMNS) + report.justified)
        return values + (["", "", "", ""] if csv_form else [])
    values += [cell(*pooled.should_succeed), cell(*pooled.should_refuse)]
    if pooled.balanced is None:
        values.append("")
    elif csv_form:
        values.append(f"{100 * pooled.balanced:.2f}")
    else:
        values.append(f"{100 * pooled.balanced:.2f} {interval_text(pooled.balanced_ci95)}")
    if report.justified:
        values.append(cell(*pooled.justified))
    if csv_form:
        for interval in (row.overall.ci95, pooled.balanced_ci95):
            values += ["", ""] if interval is None else [f"{interval[0]:.6f}", f"{interval[1]:.6f}"]
    return values


def _ambiguous(report: LeaderboardReport, row: LeaderboardRow) -> bool:
    key = (row.model, row.mode, row.tool_list, row.user)
    return sum((r.model, r.mode, r.tool_list, r.user) == key for r in report.rows) > 1


def _csv(report: LeaderboardReport) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    # Columns after the published ones: where the row's files are, and how it was ranked.
    writer.writerow([*_header(report, csv_form=True), "folder", "coverage", "ranked"])
    for row in report.rows:
        coverage = "partial: " + " ".join(sorted(row.cells)) if row.coverage_differs else "full"
        ranked = f"no: fewer than {report.min_cases} cases" if row.below_min_cases else "yes"
        writer.writerow([*_values(report, row, csv_form=True), row.folder, coverage, ranked])
    return buffer.getvalue()


def _markdown_rows(report: LeaderboardReport, rows: list[LeaderboardRow]) -> list[str]:
    header = _header(report)
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(_values(report, row, csv_form=False)) + " |" for row in rows]


def _markdown(report: LeaderboardReport) -> str:
    out = _markdown_rows(report, report.ranked)
    note = (
        "\n\nCells: pass rate % [95% Wilson interval] (cases: every run of every task, so the rate is the "
        "mean pass rate over runs). Overall is pooled over all cases of the row; should succeed and "
        "should refuse split it by the task's expected outcome, and balanced is their mean (50 for refusing "
        "everything; its interval is Newcombe's for a mean of two rates)."
    )
    if _hat_ks(report):
        note += " pass^k: the share of tasks whose k runs all pass (unbiased estimate over each task's runs; (tasks))."
    if report.justified:
        note += (
            " Justified refusals: correct refusals made once the agent had called the helpers that reveal a "
            "violated constraint (none, when the request itself shows it)."
        )
    if any(row.coverage_differs for row in report.rows):
        note += (
            f" {COVERAGE_MARK} The row covers other domains than the agents' rows together: its Overall "
            "pools other cases, so it is ranked after the rows that cover those domains exactly, among rows "
            "covering the same domains."
        )
    text = "\n".join(out) + note + "\n"
    if report.apart:
        text += (
            f"\nRows with fewer than {report.min_cases} cases (not ranked):\n\n"
            + "\n".join(_markdown_rows(report, report.apart))
            + "\n"
        )
    for row in report.rows if report.by else ():
        label = " ".join(x for x in (row.model, row.mode, row.tool_list, row.user or "") if x and x != "-")
        tables = breakdown_tables(report.outcomes.get(id(row), []), report.by, label)
        text += "".join("\n" + table.markdown() for table in tables)
    if report.comparison is not None:
        text += "\n" + "\n".join(table.markdown() for table in comparison_tables(report.comparison))
    return text


def comparison_tables(comparison: Comparison) -> list[TextTable]:
    """Pass rates under both protocols per domain, and how many verdicts each quirk flips."""
    data = comparison.as_dict()
    rates = TextTable(
        f"sound vs sopbench on {data['runs']} runs ({data['verdicts_that_differ']} verdicts differ)",
        ["domain", "sound", "sopbench"],
    )
    for domain, sound in data["sound"].items():
        rates.add_row(
            [
                domain,
                percent(sound.get("pass_rate")),
                percent(data["sopbench"].get(domain, {}).get("pass_rate")),
            ]
        )
    flips = TextTable(
        "verdicts each quirk flips", ["quirk", "turned off from sopbench", "turned on from sound"]
    )
    for name, counts in data["quirk_flips"].items():
        flips.add_row([name, str(counts["off_from_compat"]), str(counts["on_from_sound"])])
    return [rates, flips]
