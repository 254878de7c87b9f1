"""The leaderboard rendered: one markdown, CSV or JSON document (the protocol comparison inside it
when asked for). What the rows hold is computed by ``sopbench.results.leaderboard``; nothing is
computed here but the text of each cell."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from sopbench.results import Leaderboard
from sopbench.scoring import Comparison, LeaderboardCell, LeaderboardRow
from sopbench.statistics import RateInterval

from ._breakdowns import breakdown_tables
from ._table import TextTable, interval_text, percent

LEADERBOARD_FORMATS = ("markdown", "csv", "json")
COVERAGE_MARK = "†"
FLOOR_MARK = "(floor)"
UNAVAILABLE_CELL = "no figure: its tasks were not found"
SPLIT_COLUMNS = ["should succeed", "should refuse", "balanced"]


def render_leaderboard(report: Leaderboard, output_format: str = "markdown") -> str:
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


def _row_json(report: Leaderboard, row: LeaderboardRow) -> dict[str, Any]:
    data = row.as_dict()
    if report.by:
        data["breakdowns"] = report.row_breakdowns(row)
    return data


def _header(report: Leaderboard, *, csv_form: bool = False) -> list[str]:
    split = SPLIT_COLUMNS + (["justified refusals"] if report.justified else [])
    hats = [f"pass^{k}" for k in report.hat_ks]
    intervals = ["Overall ci95 low", "Overall ci95 high", "balanced ci95 low", "balanced ci95 high"]
    # The rank leads the markdown table; CSV keeps the published columns first and adds it at the end.
    return [
        *([] if csv_form else ["#"]),
        "model",
        "mode",
        "tool list",
        "user",
        *report.domains,
        "Overall",
    ] + [
        *hats,
        *split,
        *(intervals if csv_form else []),
    ]


def _values(report: Leaderboard, row: LeaderboardRow, *, csv_form: bool) -> list[str]:
    def cell(rate: RateInterval | LeaderboardCell) -> str:
        passed, cases = rate.passed, rate.total if isinstance(rate, RateInterval) else rate.cases
        if not cases:
            return ""
        if csv_form:
            return f"{passed}/{cases}"
        return f"{100 * passed / cases:.2f} {interval_text(rate.ci95)} ({cases})"

    model = row.model
    if not csv_form:
        if _ambiguous(report, row):
            model += f" [{row.folder or '.'}]"
        if row.floor:
            model += f" {FLOOR_MARK}"
        if row.coverage_differs:
            model += f" {COVERAGE_MARK}"
    values = [
        *([] if csv_form else [row.rank or "-"]),
        model,
        row.mode,
        row.tool_list,
        row.user or ("" if csv_form else "-"),
    ]
    if row.unavailable is not None:
        blanks = len(_header(report, csv_form=csv_form)) - len(values) - 1
        return [
            *values,
            *[""] * len(report.domains),
            UNAVAILABLE_CELL,
            *[""] * (blanks - len(report.domains)),
        ]
    values += [cell(row.cells[d]) if d in row.cells else "" for d in report.domains]
    values.append(cell(row.overall))
    pooled = row.pooled
    repeated = None if pooled is None else pooled.repeated
    for k in report.hat_ks:
        if repeated is None or k not in repeated.pass_hat_k:
            values.append("")
        elif csv_form:
            values.append(f"{repeated.pass_hat_k[k]:.6f}")
        else:
            values.append(f"{100 * repeated.pass_hat_k[k]:.2f} ({repeated.tasks_with_k[k]})")
    if pooled is None:
        values += [""] * (len(SPLIT_COLUMNS) + report.justified)
        return values + (["", "", "", ""] if csv_form else [])
    values += [cell(pooled.succeed_rate), cell(pooled.refuse_rate)]
    if pooled.balanced is None:
        values.append("")
    elif csv_form:
        values.append(f"{100 * pooled.balanced:.2f}")
    else:
        values.append(f"{100 * pooled.balanced:.2f} {interval_text(pooled.balanced_ci95)}")
    if report.justified:
        values.append(cell(RateInterval(pooled.justified[0], pooled.justified[1])))
    if csv_form:
        for interval in (row.overall.ci95, pooled.balanced_ci95):
            values += ["", ""] if interval is None else [f"{interval[0]:.6f}", f"{interval[1]:.6f}"]
    return values


def _ambiguous(report: Leaderboard, row: LeaderboardRow) -> bool:
    key = (row.model, row.mode, row.tool_list, row.user)
    return sum((r.model, r.mode, r.tool_list, r.user) == key for r in report.rows) > 1


def _csv(report: Leaderboard) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    # Columns after the published ones: where the row's files are, and how it was ranked.
    writer.writerow([*_header(report, csv_form=True), "folder", "coverage", "ranked", "rank", "floor"])
    for row in report.rows:
        coverage = "partial: " + " ".join(sorted(row.cells)) if row.coverage_differs else "full"
        ranked = f"no: fewer than {report.min_cases} cases" if row.below_min_cases else "yes"
        if row.unavailable is not None:
            ranked = f"no: {row.unavailable}"
        writer.writerow(
            [
                *_values(report, row, csv_form=True),
                row.folder,
                coverage,
                ranked,
                row.rank,
                "yes" if row.floor else "",
            ]
        )
    return buffer.getvalue()


def _markdown_rows(report: Leaderboard, rows: list[LeaderboardRow]) -> list[str]:
    header = _header(report)
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(_values(report, row, csv_form=False)) + " |" for row in rows]


def _markdown(report: Leaderboard) -> str:
    out = _markdown_rows(report, report.ranked)
    by = "balanced score" if report.rank_by == "balanced" else "Overall pass rate"
    note = (
        "\n\nCells: pass rate % [95% interval] (cases: every run of every task, so the rate is the "
        "mean pass rate over runs). The unit of every interval is the task: Wilson's interval, taken "
        "with the effective number of tasks (clustered by task) when tasks ran several times. Overall is "
        "pooled over all cases of the row; should succeed and should refuse split it by the task's "
        "expected outcome, and balanced is their mean (50 for refusing everything; its interval is "
        f"Newcombe's for a mean of two rates). Ranked by {by}; #: rows whose difference from the row "
        "above is not significant (exact sign test over their shared tasks, at 0.05) share a rank, "
        f"shown as 3–5. {FLOOR_MARK}: refuse-all and no-verify, played on {report.baseline_tasks}, ranked "
        "where they score: a row below a floor does worse than doing nothing."
    )
    if report.hat_ks:
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
        tables = breakdown_tables(report.row_outcomes(row), report.by, label)
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
