"""The figures of the HTML report: matplotlib SVG of numbers the report already holds."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sopbench.cache import VerdictCache
from sopbench.results import Leaderboard
from sopbench.statistics import JUDGEMENT_NAMES, breakdown

from ._html_rows import Row

if TYPE_CHECKING:
    from markupsafe import Markup

    from ._plots import RateBar, Series


@dataclass
class Figure:
    anchor: str
    title: str
    svg: Markup  # matplotlib's SVG, every label escaped by it
    caption: str


def series_of(row: Row) -> Series:
    """The row as every figure names and colours it (greyed, without a bar, under the threshold)."""
    from ._plots import Series, colour_of

    return Series(row.name, colour_of(row.number), faint=not row.ranked)


def figures_of(
    rows: list[Row],
    agents: list[Row],
    report: Leaderboard,
    hat_ks: list[int],
    what: str,
    tasks_text: str,
    cache: VerdictCache | None = None,
) -> list[Figure]:
    """The report's figures; with ``cache``, each SVG drawn once for the numbers it shows (matplotlib
    takes most of a warm report's time) and read back after."""
    from markupsafe import Markup as markup  # noqa: N813 - the optional extra, imported when drawn

    from . import _plots as plots

    def drawn(draw: Callable[..., str], *numbers: Any) -> str:
        if cache is None:
            return draw(*numbers)
        return cache.drawn(_drawing_key(draw, numbers), lambda: draw(*numbers))

    every = [series_of(r) for r in rows]
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
    apart = (
        f" Greyed and drawn without a bar: fewer than {report.min_cases} cases, too few to rank."
        if any(not r.ranked for r in rows)
        else ""
    )
    figures = [
        Figure(
            "fig-domains",
            "Pass rate by domain",
            markup(drawn(plots.domain_rates_svg, every, columns)),
            f"Pass rate (% of runs) per domain and overall for each configuration, in the leaderboard's "
            f"order, with 95% intervals whose unit is the task (Wilson's; clustered by task with repeated "
            f"runs); a configuration has one colour in every figure.{apart} "
            f"Measured: {what}; {baselines}.",
        )
    ]
    points = []
    for r, s in zip(rows, every, strict=True):
        pooled = r.row.pooled
        if pooled is None:
            continue
        bars = []
        for rate in (pooled.succeed_rate, pooled.refuse_rate):
            ci = rate.ci95
            bars.append(plots.RateBar(rate.rate, *(ci or (None, None))))
        points.append(plots.Point(s, bars[0], bars[1], r.baseline))
    figures.append(
        Figure(
            "fig-split",
            "Must succeed against must refuse",
            markup(drawn(plots.split_scatter_svg, points)),
            "Pass rate on the tasks that must succeed (x) against the tasks that must be refused (y), "
            "with 95% intervals (unit: the task), each configuration named in the legend; the refuse-all "
            "and no-verify rows are squares, the corners of refusing everything and of doing everything "
            f"asked are crosses; the dotted line is a balanced score of 50.{apart.replace(' and drawn without a bar', ', not drawn')} "
            f"Measured: {what}; {baselines}.",
        )
    )
    agent_series = [series_of(r) for r in agents]
    judgement_shares: dict[str, list[float | None]] = {j: [] for j in JUDGEMENT_NAMES}
    kinds = sorted({k for r in agents for k in breakdown(r.outcomes, "constraint")["by_kind"]})
    kind_shares: dict[str, list[float | None]] = {k: [] for k in kinds}
    for r in agents:
        judged = breakdown(r.outcomes, "judgement")["judgements"]
        constraint = breakdown(r.outcomes, "constraint")
        runs = len(r.outcomes)
        for j in JUDGEMENT_NAMES:
            judgement_shares[j].append(judged[j]["passed"] / runs if runs else None)
        items = constraint["findings"]
        for k in kinds:
            found = constraint["by_kind"].get(k, {}).get("passed", 0)
            kind_shares[k].append(found / items if items else None)
    figures.append(
        Figure(
            "fig-failures",
            "Failures by judgement and by constraint kind",
            markup(
                drawn(
                    plots.failures_svg,
                    agent_series,
                    {
                        "runs failed, by judgement (% of runs)": judgement_shares,
                        "procedure failures by constraint kind (% of items)": kind_shares,
                    },
                )
            ),
            "Left: the share of each configuration's runs that each judgement failed (a run can fail "
            "several, so a bar can pass the share of failed runs). Right: what failed the procedure, as "
            "shares of the configuration's failing calls: the kind of the constraint each left unverified "
            "(unclassified: not attributed to a constraint, e.g. an invalid call, or a run read from a run "
            f"folder's stored verdicts); a configuration with no procedure failure has no bar.{apart} "
            f"Measured: {what}.",
        )
    )
    series = [
        (series_of(r), dict(r.row.pooled.repeated.pass_hat_k))
        for r in agents
        if r.row.pooled is not None and r.row.pooled.repeated.max_runs >= 2
    ]
    if series:
        figures.append(
            Figure(
                "fig-pass-hat-k",
                "pass^k against k",
                markup(drawn(plots.pass_hat_k_svg, series)),
                "pass^k: the share of tasks all of whose k runs pass (unbiased estimate from each task's "
                f"runs, averaged over the tasks with at least k runs), for the configurations run more than "
                f"once per task, each in its colour.{apart.replace(' and drawn without a bar', ', not drawn')} "
                f"Measured: {what}.",
            )
        )
    return figures


def _drawing_key(draw: Callable[..., str], numbers: tuple[Any, ...]) -> str:
    """What decides a figure's SVG: the drawing function and its source, matplotlib's version, and
    the numbers drawn (their repr: dataclasses, floats written exactly)."""
    import matplotlib

    source = Path(__file__).with_name("_plots.py").read_bytes()
    text = f"{draw.__name__}\0{matplotlib.__version__}\0{numbers!r}"
    return hashlib.sha256(hashlib.sha256(source).digest() + text.encode()).hexdigest()
