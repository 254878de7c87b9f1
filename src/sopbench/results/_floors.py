"""The floors (refuse-all, no-verify) beside a use case's figures: which scores' tasks they are
played on, and the one call that plays them.

Playing them is the runner's (``sopbench.runner``'s baselines: the one baselines module, which
also finds a source's tasks and says why they are unavailable); this module only chooses what to
hand it, so that every use case asks for the floors the same way."""

from __future__ import annotations

from collections.abc import Sequence

from sopbench.runner.baselines import BASELINE_AGENTS, Baselines, source_baselines
from sopbench.scoring import RunScore

from ._options import ScoringOptions
from ._sources import Sources

__all__ = ["floor_sources", "floors_beside"]

DEFAULT_USERS = (None, "none", "default")


def floor_sources(scores: Sequence[RunScore]) -> list[RunScore]:
    """The scores whose tasks the floors are played on: those of the configurations with the
    default user when there are any. A published adversarial-user file holds other tasks (the same
    requests, pressed by the user), which would otherwise be pooled into the floors' Overall."""
    return [s for s in scores if s.config.user in DEFAULT_USERS] or list(scores)


def floors_beside(
    scores: Sequence[RunScore],
    sources: Sources,
    options: ScoringOptions,
    names: Sequence[str] = BASELINE_AGENTS,
) -> Baselines:
    """The floors of ``names`` played once on the tasks of ``scores`` (looked up in the manifests of
    ``sources``' run folders when the scores do not carry them), or on ``options.floor_tasks``,
    scored as ``options`` says. When some source's tasks cannot be found they are unavailable and
    say why (``Baselines.unavailable``): a floor on other tasks than the agents' is never shown."""
    return source_baselines(
        scores,
        sources.run_folders,
        options.protocol,
        names=names,
        tasks=options.floor_tasks,
        justify_refusal=options.justify_refusal,
    )
