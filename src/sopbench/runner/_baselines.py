"""The two trivial baselines every report shows next to a real agent: refuse-all and no-verify,
played on the agent's tasks (first run only, nothing stored)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sopbench.scoring import RunScore, Summary, summarize
from sopbench.tasks import Task

from ._config import RunConfig
from ._plan import Episode, episode_seed, with_ids
from ._scored import episode_row, play, row_score

BASELINE_AGENTS = ("refuse-all", "no-verify")


def baseline_summaries(config: RunConfig, selected: list[tuple[Task, str]]) -> dict[str, Summary]:
    """refuse-all and no-verify on the same tasks (first run only, nothing stored): the two trivial
    scores every report shows next to a real agent."""
    return {
        name: summarize(asyncio.run(_baseline_scores(config, selected, name))) for name in BASELINE_AGENTS
    }


def baseline_scores(tasks: list[Task], name: str, protocol: str = "sound") -> list[RunScore]:
    """``name`` (one of ``BASELINE_AGENTS``) played on ``tasks`` as ``sopbench run`` plays it next
    to an agent (first run only, nothing stored), scored under ``protocol`` (sound or sopbench)."""
    if name not in BASELINE_AGENTS:
        raise ValueError(f"{name!r} is not a baseline ({', '.join(BASELINE_AGENTS)})")
    config = RunConfig(agent=name, output=Path("."), baselines=False)
    return asyncio.run(_baseline_scores(config, with_ids(tasks), name, protocol))


async def _baseline_scores(
    config: RunConfig, selected: list[tuple[Task, str]], name: str, protocol: str = "sound"
) -> list[RunScore]:
    baseline = config.model_copy(
        update={"agent": name, "agent_options": {}, "user": "none", "user_options": {}}
    )
    scores = []
    for task, task_id in selected:
        episode = Episode(task, task_id, 0, episode_seed(config.seed, task_id, 0))
        result, _ = await play(baseline, episode)
        row = episode_row(baseline, episode, result, None, 1)
        if row["status"] == "completed":
            scores.append(row_score(row, protocol))
    return scores
