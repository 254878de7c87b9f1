"""The figures of the HTML report: matplotlib SVG of numbers the report already holds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sopbench.statistics import JUDGEMENT_NAMES, breakdown

from ._html_rows import Row
from ._leaderboard import LeaderboardReport

if TYPE_CHECKING:
    from markupsafe import Markup

    from ._plots import RateBar


@dataclass
class Figure:
    anchor: str
    title: str
    svg: Markup  # matplotlib's SVG, every label escaped by it
    caption: str


def figures_of(rows: list[Row], agents: list[Row], report: LeaderboardReport,
               hat_ks: list[int], what: str, tasks_text: str) -> list[Figure]:
    from markupsafe import Markup as markup  # noqa: N813 - the optional extra, imported when drawn

    from . import _plots as plots

    names = [f"#{r.number}" for r in rows]
    columns: dict[str, list[RateBar]] = {}
    for d in [*report.domains, "Overall"]:
        bars = []
        for r in rows:
            cell = r.row.overall if d == "Overall" else r.row.cells.get(d)
            if cell is None or not cell.cases:
                bars.append(plots.RateBar(None))
            else:
                ci = cell.ci95
                bars.append(plots.RateBar(cell.rate, *(ci or (None, None))))
        columns[d] = bars
    baselines = f"refuse-all and no-verify played on {tasks_text} (their first run)"
    figures = [
        Figure(
            "fig-domains",
            "Pass rate by domain",
            markup(plots.domain_rates_svg(names, columns)),
            f"Pass rate (% of runs) per domain and overall for each configuration (#: its leaderboard row), "
            f"with 95% intervals whose unit is the task (Wilson's; clustered by task with repeated runs). "
            f"Measured: {what}; {baselines}.",
        )
    ]
    points = []
    for r in rows:
        pooled = r.row.pooled
        if pooled is None:
            continue
        bars = []
        for rate in (pooled.succeed_rate, pooled.refuse_rate):
            ci = rate.ci95
            bars.append(plots.RateBar(rate.rate, *(ci or (None, None))))
        points.append(plots.Point(r.row.model if r.baseline else f"#{r.number}", bars[0], bars[1], r.baseline))
    figures.append(
        Figure(
            "fig-split",
            "Must succeed against must refuse",
            markup(plots.split_scatter_svg(points)),
            "Pass rate on the tasks that must succeed (x) against the tasks that must be refused (y), "
            "with 95% intervals (unit: the task); the refuse-all and no-verify rows are marked (squares), as are the "
            "corners of refusing everything and of doing everything asked; the dotted line is a balanced "
            f"score of 50. Measured: {what}; {baselines}.",
        )
    )
    agent_names = [f"#{r.number}" for r in agents]
    judgement_counts: dict[str, list[int]] = {j: [] for j in JUDGEMENT_NAMES}
    kinds = sorted({k for r in agents for k in breakdown(r.outcomes, "constraint")["by_kind"]})
    kind_counts: dict[str, list[int]] = {k: [] for k in kinds}
    for r in agents:
        judged = breakdown(r.outcomes, "judgement")["judgements"]
        by_kind = breakdown(r.outcomes, "constraint")["by_kind"]
        for j in JUDGEMENT_NAMES:
            judgement_counts[j].append(judged[j]["passed"])
        for k in kinds:
            kind_counts[k].append(by_kind[k]["passed"] if k in by_kind else 0)
    figures.append(
        Figure(
            "fig-failures",
            "Failures by judgement and by constraint kind",
            markup(plots.failures_svg(agent_names, {"failed runs by judgement": judgement_counts, "procedure failures by constraint kind": kind_counts})),
            "Left: the failed runs of each configuration by the judgement that failed them (a run can fail "
            "several, so a bar can be longer than the failed runs). Right: what failed the procedure, one "
            "item per failing call: the kind of the constraint it left unverified (unclassified: not "
            f"attributed to a constraint, e.g. an invalid call, or a run read from a run folder's stored "
            f"verdicts). Measured: {what}.",
        )
    )
    series = {
        f"#{r.number}": dict(r.row.pooled.repeated.pass_hat_k)
        for r in agents
        if r.row.pooled is not None and r.row.pooled.repeated.max_runs >= 2
    }
    if series:
        figures.append(
            Figure(
                "fig-pass-hat-k",
                "pass^k against k",
                markup(plots.pass_hat_k_svg(series)),
                "pass^k: the share of tasks all of whose k runs pass (unbiased estimate from each task's "
                f"runs, averaged over the tasks with at least k runs), for the configurations run more than "
                f"once per task. Measured: {what}.",
            )
        )
    return figures
