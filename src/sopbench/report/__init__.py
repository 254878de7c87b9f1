"""How each ``sopbench`` verb's results are shown: rich tables on a terminal, markdown elsewhere,
CSV and JSON documents, the HTML report and its static site. What they show is computed by
``sopbench.results`` (evaluation, leaderboard, comparison, breakdowns, floors) and handed here
as plain values: nothing here scores a run or plays an agent. (The HTML report still reads the
episodes it embeds, and ``run_diagnosis``, ``replay_files`` and ``summarise_generation`` still
compute the diagnose, replay and generate verbs' results here.)

>>> from pathlib import Path
>>> from sopbench.report import render_leaderboard
>>> from sopbench.results import ScoringOptions, Sources, leaderboard
>>> board = leaderboard(Sources.of([Path("../shared/sopbench/trajectories/dmv")]), ScoringOptions())  # doctest: +SKIP
>>> print(render_leaderboard(board, "markdown"))  # doctest: +SKIP

The command line only parses options, checks paths, calls ``sopbench.results`` and these. The HTML
report's figures on their own are in a public submodule, ``sopbench.report.plots`` (it needs
matplotlib, the ``report`` extra; this package does not).
"""

from ._breakdowns import breakdown_tables, usage_table
from ._compare import COMPARE_FORMATS, CompareReport, render_compare
from ._diagnosis import DiagnosisReport, load_domain_tasks, run_diagnosis
from ._evaluation import EvaluationReport, configuration_json
from ._generation import GenerationSummary, generation_table, summarise_generation
from ._html import DEFAULT_VIEWER_URL, EMBED_WARN_AT, HtmlReport, build_html_report
from ._leaderboard_text import LEADERBOARD_FORMATS, comparison_tables, render_leaderboard
from ._replay import ReplayReport, replay_files
from ._run import RunResult, run_tables
from ._site import SITE_MARK, SiteError, SitePage, episode_page_path, write_site
from ._table import (
    TextTable,
    interval_text,
    percent,
    rate_text,
    records_without_trajectory,
    summary_table,
)

__all__ = [
    "COMPARE_FORMATS",
    "DEFAULT_VIEWER_URL",
    "EMBED_WARN_AT",
    "LEADERBOARD_FORMATS",
    "SITE_MARK",
    "CompareReport",
    "DiagnosisReport",
    "EvaluationReport",
    "GenerationSummary",
    "HtmlReport",
    "ReplayReport",
    "RunResult",
    "SiteError",
    "SitePage",
    "TextTable",
    "breakdown_tables",
    "build_html_report",
    "comparison_tables",
    "configuration_json",
    "episode_page_path",
    "generation_table",
    "interval_text",
    "load_domain_tasks",
    "percent",
    "rate_text",
    "records_without_trajectory",
    "render_compare",
    "render_leaderboard",
    "replay_files",
    "run_diagnosis",
    "run_tables",
    "summarise_generation",
    "summary_table",
    "usage_table",
    "write_site",
]
