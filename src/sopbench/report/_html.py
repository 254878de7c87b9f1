"""``sopbench report``: one self-contained HTML file of what the other verbs compute.

The leaderboard (``build_leaderboard``), the breakdowns and pass^k (``sopbench.statistics``) and the
paired comparisons (``compare_outcomes``) are computed by the library and only laid out here, with
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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sopbench.scoring import Protocol
from sopbench.statistics import JUDGEMENT_NAMES, PairedComparison, summarize_usage
from sopbench.tasks import Task

from ._html_figures import figures_of
from ._html_numbers import Links
from ._html_page import (
    SORT_SCRIPT,
    episode_title,
    episodes_to_embed,
    jinja_environment,
    page_stylesheet,
    policy,
)
from ._html_rows import (
    ALL_PAIRS_UP_TO,
    BASELINES,
    Row,
    comparison_numbers,
    failure_table,
    goal_table,
    html_rows,
    paired_comparisons,
)
from ._leaderboard import LeaderboardReport, build_leaderboard

__all__ = ["DEFAULT_VIEWER_URL", "HtmlReport", "build_html_report"]

DEFAULT_VIEWER_URL = "http://127.0.0.1:8765/"  # where ``sopbench view`` listens by default

@dataclass
class HtmlReport:
    """The page, and what it was made of (for the verb's summary line and for tests)."""

    html: str
    leaderboard: LeaderboardReport
    rows: list[Row]
    comparisons: list[tuple[Row, Row, PairedComparison]]
    episodes: int  # agents' runs behind the rows
    embedded: int  # episodes drawn inside the file


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
    rank_by: str = "pass",
    progress: Callable[[str], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
) -> HtmlReport:
    """The report of ``files`` (trajectory files, scored under ``protocol``) and ``run_folders``
    (their stored verdicts). The refuse-all and no-verify floors are played on ``tasks`` (default:
    the sources' own tasks, ``sopbench.runner.source_baselines``; ``tasks_source`` says where they
    came from, for the captions) and ranked where they score (``rank_by``)."""
    report = build_leaderboard(
        files,
        protocol,
        run_folders=run_folders,
        pass_hat_k=True,
        by=("goal", "judgement", "constraint"),
        tasks=tasks,
        no_verify=True,
        rank_by=rank_by,
        progress=progress,
        on_problem=on_problem,
    )
    agent_scores = [s for s in report.scores if s.source not in BASELINES]
    embedded_episodes = episodes_to_embed(agent_scores, run_folders, on_problem) if embed_episodes else None
    links = Links(
        viewer_url,
        None
        if embedded_episodes is None
        else {(e.score.source, e.score.task_key, e.score.run): e.id for e in embedded_episodes},
    )
    hat_ks = report.hat_ks
    rows = html_rows(report, links)
    agents = [r for r in rows if not r.baseline and r.outcomes]
    comparisons = paired_comparisons(agents)
    tasks_text = tasks_source or report.baseline_tasks
    runs = len(agent_scores)
    task_count = len({s.task_key for s in agent_scores})
    what = (
        f"{runs} runs of {task_count} tasks in {len(report.domains)} domains ({', '.join(report.domains)}), "
        f"scored under the {report.protocol} protocol"
    )
    figures = figures_of(rows, agents, report, hat_ks, what, tasks_text)
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

    embedded_views: Iterator[tuple[str, Any]] | None = None
    if embedded_episodes is not None:
        embedded_views = ((f"e{e.id}-", episode_view(e)) for e in embedded_episodes)
    environment = jinja_environment()
    style = page_stylesheet()
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
        episode_titles={} if embedded_episodes is None else {e.id: episode_title(e) for e in embedded_episodes},
        viewer_url=viewer_url,
        style=style,
        script=SORT_SCRIPT,
        policy=policy(),
        min_cases=report.min_cases,
        artefacts=Counter(name for score in agent_scores for name in score.artefacts),
    )
    return HtmlReport(
        html, report, rows, comparisons, runs, 0 if embedded_episodes is None else len(embedded_episodes)
    )


