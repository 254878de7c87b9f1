"""One episode in process: its setup (the offered tools, the system prompt), the published loop,
its scoring and record, and the row a remote worker sends back. For front ends that drive episodes
themselves (the Inspect task, a Ray worker) and for tests; ``sopbench.runner.run`` does all of it.
"""

from ._bounded import play_episode as play_bounded
from ._desk import ExecutedCall
from ._episode import AgentContractError, EpisodeResult, run_episode
from ._plan import Episode, Plan, episode_seed, select_tasks
from ._record import episode_record, record_json
from ._row import never_replied, row_of_score, score_metadata
from ._scored import EpisodePlayer, PlayedEpisode, episode_row, play, play_row, row_score, verdict_column
from ._scoring import EpisodeScores, score_finished_episode
from ._setup import episode_setup, tool_schema

__all__ = [
    "episode_setup",
    "tool_schema",
    "run_episode",
    "play_bounded",
    "EpisodeResult",
    "AgentContractError",
    "ExecutedCall",
    "play",
    "score_finished_episode",
    "EpisodeScores",
    "episode_record",
    "record_json",
    "Episode",
    "Plan",
    "episode_seed",
    "select_tasks",
    "play_row",
    "episode_row",
    "PlayedEpisode",
    "EpisodePlayer",
    "row_score",
    "verdict_column",
    "row_of_score",
    "score_metadata",
    "never_replied",
]
