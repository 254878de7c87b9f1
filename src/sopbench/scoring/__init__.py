"""Scoring recorded trajectories under two protocols, with summaries, baseline and leaderboard.

>>> from sopbench.scoring import SOPBENCH, SOUND, score_paths, summarize
>>> scores = list(score_paths("../shared/sopbench/trajectories/dmv", SOPBENCH))  # doctest: +SKIP
>>> summarize(scores).overall.pass_rate  # doctest: +SKIP

``SOUND`` (the default) judges database, permission and procedure with the strict oracle;
``SOPBENCH`` reproduces the published evaluator's verdicts check for check. The two differ only by
the named quirks of ``QUIRKS`` (see ``sopbench.scoring._protocol`` and docs/protocols.md).
"""

from sopbench.traces import PUBLISHED_CHECKS

from ._api import (
    RunScore,
    ScoringError,
    ScoringReport,
    file_configuration,
    load_records,
    score_paths,
    score_record,
    score_run,
)
from ._artefacts import ARTEFACTS, recording_artefacts
from ._caches import cold_caches
from ._calls import EpisodeCall, PublishedCrash
from ._checks import VERDICT_KEYS, EpisodeScore
from ._comparison import ComparedRun, Comparison, compare, compared_runs
from ._episode import UnknownGoal, episode_calls, score_episode
from ._judgements import procedure_calls, procedure_sop
from ._leaderboard import (
    RANK_BY,
    LeaderboardCell,
    LeaderboardRow,
    leaderboard,
    leaderboard_domains,
    leaderboard_max_runs,
)
from ._protocol import QUIRKS, SOPBENCH, SOUND, Protocol, Quirk, QuirkSwitches, protocol_by_name, quirk_names
from ._states import ConstraintState, GoalStates, goal_constraint_states
from ._summary import ALL_DOMAINS, DomainSummary, Rate, Summary, summarize

__all__ = [
    "RANK_BY",
    "ARTEFACTS",
    "ALL_DOMAINS",
    "PUBLISHED_CHECKS",
    "QUIRKS",
    "SOPBENCH",
    "SOUND",
    "VERDICT_KEYS",
    "ComparedRun",
    "Comparison",
    "ConstraintState",
    "DomainSummary",
    "EpisodeCall",
    "EpisodeScore",
    "GoalStates",
    "LeaderboardCell",
    "LeaderboardRow",
    "Protocol",
    "PublishedCrash",
    "Quirk",
    "QuirkSwitches",
    "Rate",
    "RunScore",
    "ScoringError",
    "ScoringReport",
    "Summary",
    "UnknownGoal",
    "cold_caches",
    "compare",
    "compared_runs",
    "episode_calls",
    "file_configuration",
    "goal_constraint_states",
    "leaderboard",
    "leaderboard_domains",
    "leaderboard_max_runs",
    "load_records",
    "procedure_calls",
    "procedure_sop",
    "protocol_by_name",
    "quirk_names",
    "score_paths",
    "score_episode",
    "score_record",
    "recording_artefacts",
    "score_run",
    "summarize",
]
