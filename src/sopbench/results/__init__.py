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
"""

from ._breakdowns import BREAKDOWN_ORDER, breakdowns
from ._cards import CARD_READINGS, CardChoice, read_card_choices
from ._compare import AgentComparison, CompareError, compare
from ._evaluate import ConfigurationSummary, Evaluation, configuration_summaries, evaluate
from ._leaderboard import Leaderboard, compare_protocols, leaderboard, report_leaderboard
from ._options import DEFAULT_MIN_CASES, RUN_CHOICES, Prices, ScoringOptions
from ._prices import read_prices
from ._sources import RunFolder, RunFolderError, Sources, read_run_folder

__all__ = [
    "BREAKDOWN_ORDER",
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
]
