"""The runner's only door into scoring.

# adapter: the lead switches this to the public API at merge
(``sopbench.scoring.score_episode`` is being added by the core issue; until then an episode is
scored as a record of the published layout with the public ``score_record``, which is exactly what
``sopbench evaluate`` does with an exported file.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sopbench.scoring import SOPBENCH, SOUND, RunScore, ScoringError, Summary, score_run, summarize
from sopbench.scoring._engine import (
    PUBLISHED_CHECKS,  # adapter: the lead switches this to the public API at merge
)
from sopbench.tasks import Task

from ._record import episode_record

# The runner's summaries are the scoring package's own (public) ones, passed through this one door.
__all__ = [
    "PUBLISHED_CHECKS",
    "EpisodeScore",
    "RunScore",
    "ScoringError",
    "Summary",
    "score_episode",
    "summarize",
]


@dataclass(frozen=True, slots=True)
class EpisodeScore:
    sound: RunScore  # the verdict (sound protocol) with its explanations
    compat: RunScore  # the published evaluator's seven checks (sopbench protocol)


def score_episode(
    task: Task, messages: Sequence[Mapping[str, Any]], final_database: Any, *, tool_list: str
) -> EpisodeScore:
    """Both verdicts of one finished episode (raises ``ScoringError`` when it cannot be scored)."""
    record = episode_record(task, messages, final_database, tool_list=tool_list)
    return EpisodeScore(
        sound=score_run(record, 0, SOUND, output_format="value"),
        compat=score_run(record, 0, SOPBENCH, output_format="value"),
    )
