"""``sopbench report``: one self-contained HTML file of what the other verbs compute.

The leaderboard (``sopbench.results.report_leaderboard``: its rows, floors, breakdowns and pass^k)
and the paired comparisons (``compare_outcomes``) are computed by the library and only laid out here, with
matplotlib figures embedded as SVG. Every number links to the episodes behind it: the viewer's list
with the matching filters (``sopbench view`` on the same sources), or, with ``embed_episodes``, a
section of the file listing them, each episode drawn as the viewer draws it.

The pieces: ``_html_numbers`` (each number as shown and where it links), ``_html_rows`` (the
tables), ``_html_figures`` (the SVG figures) and ``_html_page`` (templates, style, the policy and
the embedded episodes); this module puts them together.

The file asks for nothing over the network: the CSS, the figures and the one small script (sorting
the per-goal table) are inline, and a Content-Security-Policy lets only that script (by its hash)
run, so even a missed escape of what a model wrote could not run one. Pages come from jinja2
templates with autoescaping; ``matplotlib`` and ``jinja2`` are the optional extra ``report``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sopbench.cache import VerdictCache
from sopbench.results import Leaderboard, Prices, Sources
from sopbench.statistics import JUDGEMENT_NAMES, PairedComparison, summarize_usage

from ._compare import _p_text
from ._html_figures import figures_of
from ._html_numbers import Links
from ._html_page import (
    SORT_SCRIPT,
    episode_title,
    episodes_to_embed,
    jinja_environment,
    page_stylesheet,
    policy,
    site_pages,
)
from ._html_rows import (
    BASELINES,
    Row,
    comparison_numbers,
    difference_number,
    failure_table,
    floor_comparisons,
    goal_table,
    html_rows,
    paired_comparisons,
)
from ._site import SitePage

__all__ = ["DEFAULT_VIEWER_URL", "EMBED_WARN_AT", "HtmlReport", "build_html_report"]

DEFAULT_VIEWER_URL = "http://127.0.0.1:8765/"  # where ``sopbench view`` listens by default

EMBED_WARN_AT = 300  # embedded episodes above which the verb warns and suggests --site
EMBEDDED_EPISODE_BYTES = 9_000  # about what one embedded episode adds to the file (published runs)


@dataclass
class HtmlReport:
    """The page, and what it was made of (for the verb's summary line and for tests)."""

    html: str
    leaderboard: Leaderboard
    rows: list[Row]
    comparisons: list[tuple[Row, Row, PairedComparison]]
    episodes: int  # agents' runs behind the rows
    embedded: int  # episodes drawn inside the file (or as pages of the site)
    floors: list[tuple[Row, list[PairedComparison | None]]] = field(default_factory=list)
    pages: Iterator[SitePage] | None = None  # with ``site``: every page, the index first, made when read


def build_html_report(
    report: Leaderboard,
    sources: Sources,
    *,
    prices: Prices | None = None,
    embed_episodes: bool = False,
    site: bool = False,
    viewer_url: str = DEFAULT_VIEWER_URL,
    on_problem: Callable[[str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
    embed_warn_at: int = EMBED_WARN_AT,
    cache: VerdictCache | None = None,
) -> HtmlReport:
    """The page of ``report`` (``sopbench.results.report_leaderboard`` of ``sources``: its rows, with
    the refuse-all and no-verify floors ranked where they score, every breakdown and pass^k), with
    the usage of live runs priced by ``prices``.

    Numbers link to the viewer at ``viewer_url``; with ``embed_episodes``, to lists of episodes
    drawn inside the file (``on_warning`` is told when there are more than ``embed_warn_at``); with
    ``site``, to the pages of a static site (``HtmlReport.pages``, written by ``write_site``).
    Episodes that cannot be drawn are named to ``on_problem``. With ``cache`` (the verdict cache),
    each figure is drawn once for the numbers it shows."""
    agent_scores = [s for s in report.scores if s.source not in BASELINES]
    shown = embed_episodes or site
    episodes = episodes_to_embed(agent_scores, sources.run_folders, on_problem) if shown else None
    if embed_episodes and episodes is not None and len(episodes) > embed_warn_at and on_warning is not None:
        on_warning(
            f"--embed-episodes: {len(episodes)} episodes make a file of about "
            f"{len(episodes) * EMBEDDED_EPISODE_BYTES / 1e6:.0f} MB, slow to open; --site DIR shares them "
            "as pages opened one at a time"
        )
    links = Links(
        viewer_url,
        None
        if episodes is None
        else {(e.score.source, e.score.task_key, e.score.run): e.id for e in episodes},
        group_page="lists/{}.html" if site else "#{}",
    )
    hat_ks = report.hat_ks
    rows = html_rows(report, links)
    agents = [r for r in rows if not r.baseline and r.outcomes]
    floors = [r for r in rows if r.baseline and r.outcomes]
    comparisons = paired_comparisons(agents)
    against_floors = floor_comparisons(agents, floors)
    tasks_text = report.baseline_tasks
    runs = len(agent_scores)
    task_count = len({s.task_key for s in agent_scores})
    what = (
        f"{runs} runs of {task_count} tasks in {len(report.domains)} domains ({', '.join(report.domains)}), "
        f"scored under the {report.protocol} protocol"
    )
    figures = figures_of(rows, agents, report, hat_ks, what, tasks_text, cache)
    goal_rows = goal_table(agents, links)
    failure_rows = failure_table(agents, links)
    usage_rows = []
    for row in agents:
        usage = summarize_usage(row.outcomes, prices)
        if usage is not None:
            usage_rows.append((row, usage))
    comparison_rows = [
        (a, b, result, comparison_numbers(a, b, result, links)) for a, b, result in comparisons
    ]
    from sopbench.view import episode_view

    from ._plots import colour_of

    embedded_views: Iterator[tuple[str, Any]] | None = None
    if embed_episodes and episodes is not None:
        embedded_views = ((f"e{e.id}-", episode_view(e)) for e in episodes)
    environment = jinja_environment()
    html = environment.get_template("report.html").render(
        protocol=report.protocol,
        what=what,
        tasks_text=tasks_text,
        domains=report.domains,
        hat_ks=hat_ks,
        rows=rows,
        figures=figures,
        comparisons=comparison_rows,
        floors=[r.label for r in floors],
        against_floors=[
            (row, [None if c is None else difference_number(c, interval=False) for c in results], results)
            for row, results in against_floors
        ],
        goal_rows=goal_rows,
        failure_rows=failure_rows,
        judgements=JUDGEMENT_NAMES,
        usage_rows=usage_rows,
        priced=prices is not None,
        embedded=embedded_views,
        site=site,
        groups=list(links.groups.values()),
        episode_titles={}
        if not embed_episodes or episodes is None
        else {e.id: episode_title(e) for e in episodes},
        viewer_url=viewer_url,
        style=page_stylesheet(),
        script=SORT_SCRIPT,
        policy=policy(),
        min_cases=report.min_cases,
        colour=colour_of,
        p_text=_p_text,
        artefacts=Counter(name for score in agent_scores for name in score.artefacts),
    )
    pages = None
    if site and episodes is not None:
        goals = environment.get_template("site_goals.html").render(
            goal_rows=goal_rows,
            protocol=report.protocol,
            what=what,
            script=SORT_SCRIPT,
            root="",
            policy=policy(linked_styles=True),
        )
        index = [SitePage("index.html", html), SitePage("goals.html", goals)]
        pages = site_pages(index, episodes, list(links.groups.values()), environment, report.protocol)
    return HtmlReport(
        html, report, rows, comparisons, runs, 0 if episodes is None else len(episodes), against_floors, pages
    )
