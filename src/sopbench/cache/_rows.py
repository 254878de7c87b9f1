"""A verdict (``RunScore``) as a compact JSON row and back: what the verbs that read results use of
it, not the transcript (the episode's ``EpisodeScore`` and the ``Task`` are not kept; their digest,
artefacts and what a failed procedure left unverified are)."""

from __future__ import annotations

from typing import Any

from sopbench.evaluation import UnverifiedConstraint
from sopbench.scoring import VERDICT_KEYS, RunScore
from sopbench.statistics import Configuration, Usage
from sopbench.tasks import Task

__all__ = ["row_digest", "score_from_row", "score_to_row"]

_DIGEST = 13  # where a row keeps its task's digest


def row_digest(row: list[Any]) -> str:
    """The digest of the task a row's score is about."""
    return str(row[_DIGEST])


def score_to_row(score: RunScore) -> list[Any]:
    """The row of ``score`` (its ``source`` is not kept: the reader knows where it read it)."""
    unverified: Any = None
    if score.episode is not None:
        unverified = [[u.kind, u.depth] for u in score.episode.verdict.procedure.unverified]
    elif score.unverified is not None:
        unverified = [[u.kind, u.depth] for u in score.unverified]
    digest = score.task_digest
    usage = score.usage
    return [
        score.domain,
        score.record,
        score.run,
        score.protocol,
        [score.verdict[key] for key in VERDICT_KEYS],
        list(score.explanations),
        score.justified_refusal,
        score.should_succeed,
        score.goal,
        score.task_id,
        None if score.configuration is None else list(score.configuration.as_dict().values()),
        None
        if usage is None
        else [
            usage.agent_prompt_tokens,
            usage.agent_completion_tokens,
            usage.user_prompt_tokens,
            usage.user_completion_tokens,
            usage.latency_s,
        ],
        unverified,
        digest,
        score.by_default,
        list(score.artefacts),
    ]


def score_from_row(row: list[Any], source: str, *, task: Task | None = None) -> RunScore:
    """The score a row keeps, read from ``source`` (about ``task``, when the reader has it);
    ``ValueError`` for a row of another shape."""
    (
        domain,
        record,
        run,
        protocol,
        verdict,
        explanations,
        justified,
        should_succeed,
        goal,
        task_id,
        configuration,
        usage,
        unverified,
        digest,
        by_default,
        artefacts,
    ) = row
    if len(verdict) != len(VERDICT_KEYS):
        raise ValueError("a verdict of another shape")
    return RunScore(
        source=source,
        domain=domain,
        record=record,
        run=run,
        protocol=protocol,
        verdict=dict(zip(VERDICT_KEYS, verdict, strict=True)),
        explanations=tuple(explanations),
        justified_refusal=justified,
        should_succeed=should_succeed,
        goal=goal,
        task_id=task_id,
        configuration=None if configuration is None else Configuration(*configuration),
        usage=None if usage is None else Usage(*usage),
        unverified=None if unverified is None else tuple(UnverifiedConstraint(k, d) for k, d in unverified),
        stored_digest=digest,
        by_default=by_default,
        stored_artefacts=tuple(artefacts),
        task=task,
    )
