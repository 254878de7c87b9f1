"""How the runner scores a finished episode: as ``sopbench evaluate`` scores the same episode exported.

The episode becomes a record of the published trajectory layout (the one ``export --format sopbench``
writes) and goes through ``sopbench.scoring.score_run``, which decodes it into calls and calls
``score_episode``: the runner's verdicts and ``evaluate``'s verdicts on the export cannot drift.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sopbench.scoring import PUBLISHED_CHECKS, SOPBENCH, SOUND, RunScore, ScoringError, score_run
from sopbench.tasks import Task

from ._record import episode_record


@dataclass(frozen=True, slots=True)
class EpisodeScores:
    sound: RunScore  # the verdict (sound protocol) with its explanations
    # The published evaluator's seven checks (sopbench protocol); None where that evaluator itself
    # crashes on the episode (``compat_failure`` says why): the sound verdict still stands.
    compat: RunScore | None
    compat_failure: str | None = None

    def compat_fields(self) -> dict[str, Any] | None:
        return None if self.compat is None else self.compat.verdict


def score_finished_episode(
    task: Task,
    messages: Sequence[Mapping[str, Any]],
    final_database: Any,
    *,
    tool_list: str,
    ablations: Mapping[str, Any] | None = None,
    refused: Sequence[bool] = (),
) -> EpisodeScores:
    """Both verdicts of one finished episode (``ScoringError`` when the sound one cannot be made).

    ``ablations``: the run's environment settings (env_mode ``program`` is scored on the strict
    system the agent talked to); ``refused``: per answered call, whether the guard refused it (such
    a call was not executed and is not scored)."""
    record = episode_record(
        task, messages, final_database, tool_list=tool_list, ablations=ablations, refused=refused
    )
    sound = score_run(record, 0, SOUND, output_format="value")
    try:
        compat = score_run(record, 0, SOPBENCH, output_format="value")
    except ScoringError as exc:
        return EpisodeScores(sound, None, exc.message)
    return EpisodeScores(sound, compat)


__all__ = ["PUBLISHED_CHECKS", "EpisodeScores", "score_finished_episode"]
