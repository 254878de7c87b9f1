"""The refuse-all baseline: every task answered with one refusal and no tool call, scored."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from sopbench.tasks import Task
from sopbench.traces import (
    Message,
    Record,
    Run,
    Setup,
)

from ._api import RunScore, score_run
from ._protocol import SOUND, Protocol
from ._summary import Rate, summarize

# ---- the refuse-all baseline ---------------------------------------------------------------------
REFUSE_ALL_MODEL = "refuse-all"  # the baseline's row in a leaderboard
REFUSAL_TEXT = "I am sorry, but I cannot help with this request."


def refuse_all_record(task: Task, index: int = 0) -> Record:
    """A record of the agent that calls no tool and refuses: the database is left as it was."""
    messages = (Message("user", task.user_prompt), Message(f"{task.domain} assistant", REFUSAL_TEXT))
    run = Run(0, "", messages, task.initial_database)
    return Record(None, index, task.domain, Setup(), task, (run,), (), None)


def refuse_all_scores(
    tasks: Iterable[Task], protocol: Protocol = SOUND, *, justify_refusal: bool = False
) -> list[RunScore]:
    """The score of the agent that does nothing and refuses, on each task (source ``refuse-all``)."""
    scores = []
    for index, task in enumerate(tasks):
        score = score_run(
            refuse_all_record(task, index), 0, protocol, output_format="value", justify_refusal=justify_refusal
        )
        scores.append(replace(score, source=REFUSE_ALL_MODEL))
    return scores


def refuse_all_baseline(tasks: Iterable[Task], protocol: Protocol = SOUND) -> dict[str, Rate]:
    """Pass rate per domain (and ``"all"``, pooled) of the agent that does nothing and refuses."""
    summary = summarize(refuse_all_scores(tasks, protocol))
    if summary.overall.runs == 0:
        return {}
    return {key: Rate(domain.passed, domain.runs) for key, domain in summary.domains.items()}
