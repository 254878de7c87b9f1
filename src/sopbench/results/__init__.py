"""What the verbs that read results compute, as plain typed values: the evaluation of runs, the
leaderboard, the paired comparison of two agents, the breakdowns, and the floors (refuse-all,
no-verify) beside them. Each use case is a function of ``Sources`` (what is read: run folders and
trajectory files) and ``ScoringOptions`` (how it is scored, counted, ranked and priced);
``sopbench.report`` renders what they return, ``sopbench.sweep`` and the command line call them.

>>> from pathlib import Path
>>> from sopbench.results import ScoringOptions, Sources, leaderboard
>>> from sopbench.scoring import SOPBENCH
>>> sources = Sources.of([Path("../shared/sopbench/trajectories/dmv")])  # doctest: +SKIP
>>> board = leaderboard(sources, ScoringOptions(protocol=SOPBENCH, min_cases=0))  # doctest: +SKIP
>>> [row.model for row in board.ranked][:2]  # doctest: +SKIP
['gpt-4o-mini', 'gpt-4o']

Nothing here prints or writes a file: each use case hands problems to ``on_problem`` and each
source's name, once read, to ``progress``.

With the optional extra ``frames`` (``pip install 'sopbench[frames]'``: pandas and pyarrow),
``episodes_frame`` and ``configurations_frame`` give the same results as ``pandas.DataFrame``
objects (one row per episode, one per leaderboard row), and ``write_parquet`` writes one; these
names load pandas on first use, and without the extra raise an ``ImportError`` naming it.

>>> from sopbench.results import episodes_frame
>>> frame = episodes_frame("../shared/sopbench/trajectories/dmv", "sopbench")  # doctest: +SKIP
>>> frame.groupby("model")["passed"].mean()  # doctest: +SKIP
"""

from sopbench._extras import lazy_names

from ._breakdowns import BREAKDOWN_ORDER, breakdowns
from ._cards import CARD_READINGS, CardChoice, read_card_choices
from ._compare import AgentComparison, CompareError, compare
from ._evaluate import ConfigurationSummary, Evaluation, configuration_summaries, evaluate
from ._frame_rows import CONFIGURATION_COLUMNS, DOMAIN_COLUMNS, EPISODE_COLUMNS
from ._leaderboard import Leaderboard, compare_protocols, leaderboard, report_leaderboard
from ._options import DEFAULT_MIN_CASES, RUN_CHOICES, Prices, ScoringOptions
from ._prices import read_prices
from ._sources import RunFolder, RunFolderError, Sources, read_run_folder

# The names that need pandas (the extra ``frames``), loaded on first use.
_LAZY = {
    "configurations_frame": "_frames",
    "episodes_frame": "_frames",
    "evaluate_to_frame": "_frames",
    "scores_frame": "_frames",
    "write_parquet": "_frames",
}
__getattr__ = lazy_names(__name__, _LAZY, "frames", ("pandas", "pyarrow"))

__all__ = [
    "BREAKDOWN_ORDER",
    "CONFIGURATION_COLUMNS",
    "DOMAIN_COLUMNS",
    "EPISODE_COLUMNS",
    "CARD_READINGS",
    "DEFAULT_MIN_CASES",
    "RUN_CHOICES",
    "AgentComparison",
    "CardChoice",
    "CompareError",
    "ConfigurationSummary",
    "Evaluation",
    "Leaderboard",
    "Prices",
    "RunFolder",
    "RunFolderError",
    "ScoringOptions",
    "Sources",
    "breakdowns",
    "compare",
    "compare_protocols",
    "configuration_summaries",
    "evaluate",
    "leaderboard",
    "read_card_choices",
    "read_prices",
    "read_run_folder",
    "report_leaderboard",
    *_LAZY,
]
