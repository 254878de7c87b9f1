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
from ._judgements import (
    judge_constraint_not_violated,
    judge_no_tool_call_error,
    procedure_calls,
    procedure_sop,
)
from ._leaderboard import (
    RANK_BY,
    LeaderboardCell,
    LeaderboardRow,
    leaderboard,
    leaderboard_domains,
    leaderboard_max_runs,
)
from ._oracle_replay import OracleReplay
from ._protocol import QUIRKS, SOPBENCH, SOUND, Protocol, Quirk, QuirkSwitches, protocol_by_name, quirk_names
from ._pyeval import OPAQUE, literal_value, python_value
from ._states import ConstraintState, GoalStates, goal_constraint_states
from ._summary import ALL_DOMAINS, DomainSummary, Rate, Summary, summarize
from ._tables import bind_strict_arguments
from ._values import read_arguments

__all__ = [
    "RANK_BY",
    "ARTEFACTS",
    "ALL_DOMAINS",
    "OPAQUE",
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
    "OracleReplay",
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
    "bind_strict_arguments",
    "cold_caches",
    "compare",
    "compared_runs",
    "episode_calls",
    "file_configuration",
    "goal_constraint_states",
    "judge_constraint_not_violated",
    "judge_no_tool_call_error",
    "leaderboard",
    "leaderboard_domains",
    "leaderboard_max_runs",
    "literal_value",
    "load_records",
    "procedure_calls",
    "procedure_sop",
    "protocol_by_name",
    "python_value",
    "quirk_names",
    "read_arguments",
    "score_paths",
    "score_episode",
    "score_record",
    "recording_artefacts",
    "score_run",
    "summarize",
]
