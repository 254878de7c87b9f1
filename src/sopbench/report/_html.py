"""``sopbench report``: one self-contained HTML file of what the other verbs compute.

The leaderboard (``build_leaderboard``), the breakdowns and pass^k (``sopbench.statistics``) and the
paired comparisons (``compare_outcomes``) are computed by the library and only laid out here, with
matplotlib figures embedded as SVG. Every number links to the episodes behind it: the viewer's list
with the matching filters (``sopbench view`` on the same sources), or, with ``embed_episodes``, a
section of the file listing them, each episode drawn as the viewer draws it.

The file asks for nothing over the network: the CSS, the figures and the one small script (sorting
the per-goal table) are inline, and a Content-Security-Policy lets only that script (by its hash)
run, so even a missed escape of what a model wrote could not run one. Pages come from jinja2
templates with autoescaping; ``matplotlib`` and ``jinja2`` are the optional extra ``report``.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from sopbench.scoring import Protocol, RunScore
from sopbench.statistics import (
    JUDGEMENT_NAMES,
    Outcome,
    PairedComparison,
    breakdown,
    compare_outcomes,
    summarize_usage,
    wilson_interval,
)
from sopbench.tasks import Task

from ._compare import _p_text
from ._leaderboard import LeaderboardReport, build_leaderboard

if TYPE_CHECKING:
    from sopbench.scoring import LeaderboardRow
    from sopbench.view import Episode

__all__ = ["DEFAULT_VIEWER_URL", "HtmlReport", "build_html_report"]

DEFAULT_VIEWER_URL = "http://127.0.0.1:8765/"  # where ``sopbench view`` listens by default
BASELINES = ("refuse-all", "no-verify")
ALL_PAIRS_UP_TO = 6  # with more agents' rows, each is compared with the next one in the ranking

# Sorts the per-goal table by the clicked header (numbers by their data-v value). The only script:
# the page's Content-Security-Policy allows it by its hash and nothing else.
SORT_SCRIPT = (
    "document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',"
    "function(){var t=th.closest('table'),b=t.tBodies[0],i=th.cellIndex,d=th.dataset.dir==='asc'?-1:1;"
    "t.querySelectorAll('th').forEach(function(h){delete h.dataset.dir});th.dataset.dir=d>0?'asc':'desc';"
    "function v(r){var c=r.cells[i];return c.dataset.v!==undefined?parseFloat(c.dataset.v):c.textContent}"
    "Array.from(b.rows).sort(function(x,y){var p=v(x),q=v(y);return d*(typeof p==='number'?p-q:"
    "p.localeCompare(q))}).forEach(function(r){b.appendChild(r)})})});"
)


@dataclass(frozen=True)
class Number:
    """A number as shown, where its episodes are (None: nowhere to go), and its sort value."""

    text: str
    href: str | None = None
    sort: float | None = None
    title: str = ""


@dataclass
class EpisodeGroup:
    anchor: str
    title: str
    episodes: list[int]  # embedded episode numbers


@dataclass
class _Links:
    """Where the episodes behind a number are shown: the viewer's list, or a section of the file."""

    viewer_url: str
    embedded: dict[tuple[str, str, int], int] | None  # (source, task, run) -> embedded episode number
    groups: dict[tuple[tuple[str, str], ...], EpisodeGroup] = field(default_factory=dict)

    def href(self, filters: Mapping[str, str], outcomes: Sequence[Outcome], title: str) -> str | None:
        key = tuple(sorted(filters.items()))
        if self.embedded is None:
            return self.viewer_url + "?" + urlencode(dict(key))
        if key not in self.groups:
            numbers = [
                self.embedded[k] for o in outcomes if (k := (o.source, o.task_id, o.run)) in self.embedded
            ]
            if not numbers:
                return None
            self.groups[key] = EpisodeGroup(f"g{len(self.groups)}", title, sorted(numbers))
        return "#" + self.groups[key].anchor


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}"


def _interval(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f"[{100 * ci[0]:.1f}–{100 * ci[1]:.1f}]"


def _rate_number(passed: int, total: int, href: str | None, what: str) -> Number:
    if not total:
        return Number("-")
    ci = wilson_interval(passed, total)
    return Number(
        f"{100 * passed / total:.1f} {_interval(ci)} ({total})",
        href,
        passed / total,
        f"{what}: {passed} of {total} passed",
    )


@dataclass
class Row:
    """One leaderboard row as shown."""

    number: int
    row: LeaderboardRow
    label: str
    configuration: str | None  # the viewer's name of it (its filter value); None for a baseline
    outcomes: list[Outcome]
    domains: list[Number]
    overall: Number
    hats: list[Number]
    succeed: Number
    refuse: Number
    balanced: Number
    baseline: bool
    ranked: bool


@dataclass
class Figure:
    anchor: str
    title: str
    svg: Any  # markupsafe.Markup: matplotlib's SVG, every label escaped by it
    caption: str


@dataclass
class HtmlReport:
    """The page, and what it was made of (for the verb's summary line and for tests)."""

    html: str
    leaderboard: LeaderboardReport
    rows: list[Row]
    comparisons: list[tuple[Row, Row, PairedComparison]]
    episodes: int  # agents' runs behind the rows
    embedded: int  # episodes drawn inside the file


def _is_baseline(row: LeaderboardRow) -> bool:
    """The refuse-all or no-verify row the report adds (not an agent's run of the same name)."""
    sources = {name for names in row.files.values() for name in names}
    return row.model in BASELINES and sources <= set(BASELINES)


def _label(row: LeaderboardRow) -> str:
    parts = [row.model] + [p for p in (row.mode, row.tool_list) if p and p != "-"]
    if row.user and row.user != "none":
        parts.append(f"user {row.user}")
    return " ".join(parts)


def build_html_report(
    files: list[Path],
    protocol: Protocol,
    *,
    run_folders: Sequence[Path] = (),
    tasks: Sequence[Task] | None = None,
    tasks_source: str = "",
    prices: Mapping[str, tuple[float, float]] | None = None,
    embed_episodes: bool = False,
    viewer_url: str = DEFAULT_VIEWER_URL,
    progress: Callable[[str], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
) -> HtmlReport:
    """The report of ``files`` (trajectory files, scored under ``protocol``) and ``run_folders``
    (their stored verdicts). The refuse-all and no-verify rows are played on ``tasks`` (default:
    the tasks inside the records; ``tasks_source`` says where they came from, for the captions)."""
    from markupsafe import Markup

    from sopbench.statistics import Configuration
    from sopbench.view import configuration_name

    from . import _plots

    report = build_leaderboard(
        files,
        protocol,
        run_folders=run_folders,
        pass_hat_k=True,
        by=("goal", "judgement", "constraint"),
        tasks=tasks,
        no_verify=True,
        progress=progress,
        on_problem=on_problem,
    )
    agent_scores = [s for s in report.scores if s.source not in BASELINES]
    embedded_episodes = _episodes(agent_scores, run_folders, on_problem) if embed_episodes else None
    links = _Links(
        viewer_url,
        None
        if embedded_episodes is None
        else {(e.score.source, e.score.task_key, e.score.run): e.id for e in embedded_episodes},
    )
    hat_ks = report.hat_ks
    rows: list[Row] = []
    for number, lb_row in enumerate(report.rows, start=1):
        outcomes = report.outcomes.get(id(lb_row), [])
        baseline = _is_baseline(lb_row)
        config: Configuration | None = outcomes[0].configuration if outcomes and not baseline else None
        name = None if config is None else configuration_name(config)
        label = _label(lb_row)

        def link(filters: dict[str, str], chosen: Sequence[Outcome], title: str, name: str | None = name) -> str | None:
            if name is None:
                return None
            return links.href({"configuration": name, **filters}, chosen, title)

        domains = []
        for domain in report.domains:
            cell = lb_row.cells.get(domain)
            chosen = [o for o in outcomes if o.domain == domain]
            domains.append(
                Number("")
                if cell is None
                else _rate_number(cell.passed, cell.cases, link({"domain": domain}, chosen, f"{label}: {domain}"), f"{label}, {domain}")
            )
        overall = lb_row.overall
        pooled = lb_row.pooled
        hats = []
        for k in hat_ks:
            repeated = None if pooled is None else pooled.repeated
            if repeated is None or k not in repeated.pass_hat_k:
                hats.append(Number(""))
            else:
                value = repeated.pass_hat_k[k]
                hats.append(
                    Number(
                        f"{100 * value:.1f} ({repeated.tasks_with_k[k]})",
                        link({}, outcomes, label),
                        value,
                        f"pass^{k} over {repeated.tasks_with_k[k]} tasks with at least {k} runs",
                    )
                )
        if pooled is None:
            succeed = refuse = balanced = Number("")
        else:
            succeed = _rate_number(pooled.should_succeed[0], pooled.should_succeed[1], link({}, [o for o in outcomes if o.should_succeed], f"{label}: must succeed"), f"{label}, must succeed")
            refuse = _rate_number(pooled.should_refuse[0], pooled.should_refuse[1], link({}, [o for o in outcomes if not o.should_succeed], f"{label}: must refuse"), f"{label}, must refuse")
            balanced = (
                Number("-")
                if pooled.balanced is None
                else Number(f"{100 * pooled.balanced:.1f} {_interval(pooled.balanced_ci95)}", link({}, outcomes, label), pooled.balanced, "mean of the must-succeed and must-refuse rates")
            )
        rows.append(
            Row(
                number,
                lb_row,
                label,
                name,
                outcomes,
                domains,
                _rate_number(overall.passed, overall.cases, link({}, outcomes, label), f"{label}, overall"),
                hats,
                succeed,
                refuse,
                balanced,
                baseline,
                not lb_row.below_min_cases,
            )
        )
    agents = [r for r in rows if not r.baseline and r.outcomes]
    comparisons = _comparisons(agents)
    tasks_text = tasks_source or report.baseline_tasks
    runs = len(agent_scores)
    task_count = len({s.task_key for s in agent_scores})
    what = (
        f"{runs} runs of {task_count} tasks in {len(report.domains)} domains ({', '.join(report.domains)}), "
        f"scored under the {report.protocol} protocol"
    )
    figures = _figures(_plots, Markup, rows, agents, report, hat_ks, what, tasks_text)
    goal_rows = _goal_rows(agents, links)
    failure_rows = _failure_rows(agents, links)
    usage_rows = []
    for row in agents:
        usage = summarize_usage(row.outcomes, prices)
        if usage is not None:
            usage_rows.append((row, usage))
    comparison_rows = [
        (a, b, result, _comparison_numbers(a, b, result, links)) for a, b, result in comparisons
    ]
    from sopbench.view import episode_view

    embedded_views: Iterator[tuple[str, Any]] | None = None
    if embedded_episodes is not None:
        embedded_views = ((f"e{e.id}-", episode_view(e)) for e in embedded_episodes)
    environment = _environment()
    style = _stylesheet()
    html = environment.get_template("report.html").render(
        protocol=report.protocol,
        what=what,
        tasks_text=tasks_text,
        domains=report.domains,
        hat_ks=hat_ks,
        rows=rows,
        figures=figures,
        comparisons=comparison_rows,
        all_pairs=len(agents) <= ALL_PAIRS_UP_TO,
        goal_rows=goal_rows,
        failure_rows=failure_rows,
        judgements=JUDGEMENT_NAMES,
        usage_rows=usage_rows,
        priced=prices is not None,
        embedded=embedded_views,
        groups=list(links.groups.values()),
        episode_titles={} if embedded_episodes is None else {e.id: _episode_title(e) for e in embedded_episodes},
        viewer_url=viewer_url,
        style=style,
        script=SORT_SCRIPT,
        policy=_policy(),
        min_cases=report.min_cases,
    )
    return HtmlReport(
        html, report, rows, comparisons, runs, 0 if embedded_episodes is None else len(embedded_episodes)
    )


# ---- pieces --------------------------------------------------------------------------------------
def _comparisons(agents: list[Row]) -> list[tuple[Row, Row, PairedComparison]]:
    pairs = (
        list(itertools.combinations(agents, 2))
        if len(agents) <= ALL_PAIRS_UP_TO
        else [(a, b) for a, b in itertools.pairwise([r for r in agents if r.ranked])]
    )
    out = []
    for a, b in pairs:
        result = compare_outcomes(a.outcomes, b.outcomes)
        if result.overall.paired_runs:
            out.append((a, b, result))
    return out


def _comparison_numbers(a: Row, b: Row, result: PairedComparison, links: _Links) -> dict[str, Number]:
    overall = result.overall
    difference = overall.difference
    paired = {(f.task_id, f.run) for f in (*overall.a_only_passed, *overall.b_only_passed)}
    flipped_a = [o for o in a.outcomes if (o.task_id, o.run) in paired]
    flipped_b = [o for o in b.outcomes if (o.task_id, o.run) in paired]

    def side(row: Row, rate: Any, flipped: list[Outcome], only: int) -> tuple[Number, Number]:
        href = None if row.configuration is None else links.href({"configuration": row.configuration}, row.outcomes, row.label)
        flips = Number(str(only))
        if row.configuration is not None and links.embedded is not None:
            # The discordant runs themselves exist only as a set of episodes: in the file, not the viewer.
            flips = Number(str(only), links.href({"configuration": row.configuration, "flipped": f"{a.number}-{b.number}"}, flipped, f"{row.label}: runs that differ from the other side"), only)
        return Number(f"{_percent(rate.rate)} {_interval(rate.ci95)}", href, rate.rate), flips

    rate_a, flips_a = side(a, overall.a, flipped_a, overall.a_only)
    rate_b, flips_b = side(b, overall.b, flipped_b, overall.b_only)
    return {
        "a": rate_a,
        "b": rate_b,
        "difference": Number(
            "-" if difference is None else f"{100 * difference:+.1f} {_interval(overall.difference_ci95)}",
            None,
            difference,
        ),
        "p": Number(_p_text(overall.mcnemar_p), None, overall.mcnemar_p),
        "a_only": flips_a,
        "b_only": flips_b,
    }


def _goal_rows(agents: list[Row], links: _Links) -> list[dict[str, Any]]:
    out = []
    for row in agents:
        domain_of = {o.goal: o.domain for o in row.outcomes}
        for goal, rate in breakdown(row.outcomes, "goal").items():
            domain = domain_of[goal]
            chosen = [o for o in row.outcomes if o.goal == goal]
            failed = [o for o in chosen if not o.passed]
            name = row.configuration or ""
            out.append(
                {
                    "row": row,
                    "domain": domain,
                    "goal": goal,
                    "rate": _rate_number(rate["passed"], rate["total"], links.href({"configuration": name, "goal": goal}, chosen, f"{row.label}: {goal}"), f"{row.label}, {goal}"),
                    "runs": Number(str(rate["total"]), None, rate["total"]),
                    "failed": Number(
                        str(len(failed)),
                        links.href({"configuration": name, "goal": goal, "outcome": "failed"}, failed, f"{row.label}: {goal}, failed") if failed else None,
                        len(failed),
                    ),
                }
            )
    return out


def _failure_rows(agents: list[Row], links: _Links) -> list[dict[str, Any]]:
    out = []
    for row in agents:
        name = row.configuration or ""
        judgement = breakdown(row.outcomes, "judgement")
        constraint = breakdown(row.outcomes, "constraint")
        judged = {}
        for name_j, rate in judgement["judgements"].items():
            chosen = [o for o in row.outcomes if name_j in o.failed]
            judged[name_j] = Number(
                f"{rate['passed']} ({_percent(rate['rate'])}%)",
                links.href({"configuration": name, "judgement": name_j}, chosen, f"{row.label}: failed {name_j}") if chosen else None,
                rate["passed"],
            )
        kinds = {}
        for kind, rate in constraint["by_kind"].items():
            chosen = [o for o in row.outcomes if kind in {f.kind for f in o.findings}]
            kinds[kind] = Number(
                f"{rate['passed']} ({_percent(rate['rate'])}%)",
                links.href({"configuration": name, "kind": kind}, chosen, f"{row.label}: procedure failed on a {kind} constraint"),
                rate["passed"],
            )
        failed = [o for o in row.outcomes if not o.passed]
        out.append(
            {
                "row": row,
                "failed": Number(
                    str(judgement["failed_runs"]),
                    links.href({"configuration": name, "outcome": "failed"}, failed, f"{row.label}: failed") if failed else None,
                ),
                "judgements": judged,
                "procedure_failures": constraint["procedure_failures"],
                "findings": constraint["findings"],
                "kinds": kinds,
            }
        )
    return out


def _figures(plots: Any, markup: Any, rows: list[Row], agents: list[Row], report: LeaderboardReport,
             hat_ks: list[int], what: str, tasks_text: str) -> list[Figure]:
    names = [f"#{r.number}" for r in rows]
    columns: dict[str, list[Any]] = {}
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
            f"with 95% Wilson intervals. Measured: {what}; {baselines}.",
        )
    ]
    points = []
    for r in rows:
        pooled = r.row.pooled
        if pooled is None:
            continue
        bars = []
        for passed, total in (pooled.should_succeed, pooled.should_refuse):
            ci = wilson_interval(passed, total)
            bars.append(plots.RateBar(passed / total if total else None, *(ci or (None, None))))
        points.append(plots.Point(r.row.model if r.baseline else f"#{r.number}", bars[0], bars[1], r.baseline))
    figures.append(
        Figure(
            "fig-split",
            "Must succeed against must refuse",
            markup(plots.split_scatter_svg(points)),
            "Pass rate on the tasks that must succeed (x) against the tasks that must be refused (y), "
            "with 95% Wilson intervals; the refuse-all and no-verify rows are marked (squares), as are the "
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


def _episodes(scores: list[RunScore], run_folders: Sequence[Path], on_problem: Callable[[str], None] | None) -> list[Episode]:
    """The agents' runs as the viewer's episodes (records of trajectory files read when drawn)."""
    from sopbench.runner import StoreError, read_run_folder
    from sopbench.view import Episode, configuration_name, failing_constraint_kinds

    stored: dict[tuple[str, str, int], Any] = {}
    for folder in run_folders:
        try:
            run = read_run_folder(folder)
        except StoreError as exc:
            if on_problem is not None:
                on_problem(f"{folder}: its episodes cannot be embedded ({exc})")
            continue
        for item in run.episodes:
            if item.record is not None:
                stored[(folder.as_posix(), item.task_id, item.run)] = item.record
    episodes: list[Episode] = []
    for score in scores:
        record = stored.get((score.source, score.task_id, score.run))
        from_folder = score.configuration is not None
        if from_folder and record is None:
            continue
        episodes.append(
            Episode(
                len(episodes),
                score.source,
                configuration_name(score.config),
                0 if from_folder else score.run,  # a stored episode's record holds its one run
                score,
                failing_constraint_kinds(score),
                record,
            )
        )
    return episodes


def _episode_title(episode: Episode) -> str:
    outcome = "passed" if episode.passed else "failed " + ", ".join(episode.failing)
    return f"{episode.configuration} · {episode.score.task_key} run {episode.score.run} · {outcome}"


def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(
            [jinja2.PackageLoader("sopbench.report", "templates"), jinja2.PackageLoader("sopbench.view", "templates")]
        ),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _stylesheet() -> str:
    from sopbench.view import stylesheet

    return stylesheet() + (Path(__file__).with_name("templates") / "report.css").read_text(encoding="utf-8")


def _policy() -> str:
    digest = base64.b64encode(hashlib.sha256(SORT_SCRIPT.encode()).digest()).decode()
    return (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
