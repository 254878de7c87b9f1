"""The baselines a run is read against: the no-verify and refuse-all agents played on the same tasks,
and the floors they give (docs/runner.md, "Baselines").
"""

from ._baselines import (
    BASELINE_AGENTS,
    Baselines,
    TaskSetMissing,
    baseline_rows,
    baseline_scores,
    play_baselines,
    run_folder_tasks,
    source_baselines,
    source_tasks,
    stored_verdict_name,
)

__all__ = [
    "BASELINE_AGENTS",
    "Baselines",
    "TaskSetMissing",
    "baseline_rows",
    "baseline_scores",
    "play_baselines",
    "run_folder_tasks",
    "source_baselines",
    "source_tasks",
    "stored_verdict_name",
]
