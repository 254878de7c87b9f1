"""What each ``sopbench`` verb computes and how it is shown: one library function per verb, and the
renderers of its results (rich tables on a terminal, markdown elsewhere; CSV and JSON documents).

>>> from pathlib import Path
>>> from sopbench.report import build_leaderboard, render_leaderboard
>>> from sopbench.scoring import SOUND
>>> from sopbench.traces import iter_trajectory_files
>>> files = list(iter_trajectory_files("../shared/sopbench/trajectories/dmv"))  # doctest: +SKIP
>>> print(render_leaderboard(build_leaderboard(files, SOUND), "markdown"))  # doctest: +SKIP

The command line only parses options, checks paths and calls these; tests call them directly.
"""

from ._breakdowns import breakdown_tables, usage_table
from ._cards import CARD_READINGS, CardChoice, read_card_choices
from ._compare import COMPARE_FORMATS, CompareError, CompareReport, compare_sources, render_compare
from ._diagnosis import DiagnosisReport, load_domain_tasks, run_diagnosis
from ._evaluation import ConfigurationReport, EvaluationReport, configuration_reports, evaluate_files
from ._generation import GenerationSummary, generation_table, summarise_generation
from ._html import DEFAULT_VIEWER_URL, EMBED_WARN_AT, HtmlReport, build_html_report
from ._leaderboard import (
    DEFAULT_MIN_CASES,
    LeaderboardReport,
    build_leaderboard,
    compare_files,
)
from ._leaderboard_text import LEADERBOARD_FORMATS, comparison_tables, render_leaderboard
from ._prices import read_prices
from ._replay import ReplayReport, replay_files
from ._run import RunResult, run_tables
from ._site import SITE_MARK, SiteError, SitePage, episode_page_path, write_site
from ._sources import (
    RunFolder,
    RunFolderError,
    is_run_folder,
    outside_run_folders,
    read_run_folder,
    split_sources,
    stored_protocol_name,
)
from ._table import (
    TextTable,
    interval_text,
    percent,
    rate_text,
    records_without_trajectory,
    summary_table,
)

__all__ = [
    "DEFAULT_VIEWER_URL",
    "EMBED_WARN_AT",
    "SITE_MARK",
    "SiteError",
    "SitePage",
    "episode_page_path",
    "write_site",
    "GenerationSummary",
    "HtmlReport",
    "build_html_report",
    "stored_protocol_name",
    "CARD_READINGS",
    "COMPARE_FORMATS",
    "CompareError",
    "CompareReport",
    "ConfigurationReport",
    "RunFolder",
    "RunFolderError",
    "breakdown_tables",
    "compare_sources",
    "configuration_reports",
    "interval_text",
    "is_run_folder",
    "outside_run_folders",
    "read_prices",
    "read_run_folder",
    "render_compare",
    "split_sources",
    "usage_table",
    "DEFAULT_MIN_CASES",
    "LEADERBOARD_FORMATS",
    "CardChoice",
    "DiagnosisReport",
    "EvaluationReport",
    "LeaderboardReport",
    "ReplayReport",
    "RunResult",
    "TextTable",
    "build_leaderboard",
    "compare_files",
    "comparison_tables",
    "evaluate_files",
    "generation_table",
    "summarise_generation",
    "load_domain_tasks",
    "percent",
    "rate_text",
    "read_card_choices",
    "records_without_trajectory",
    "render_leaderboard",
    "replay_files",
    "run_diagnosis",
    "run_tables",
    "summary_table",
]
