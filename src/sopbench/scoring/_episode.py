"""Scoring one episode, live or recorded: ``score_episode`` is the one entry point.

A live runner hands over the task, the calls its agent's environment executed (with the outputs
the agent was shown) and the final database; ``sopbench evaluate`` decodes each recorded run into
the same calls (``episode_calls``) and calls the same function, so the two cannot drift.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sopbench.tasks import Task
from sopbench.traces import Run

from ._calls import EpisodeCall, executed_calls, published_calls
from ._checks import EpisodeScore
from ._engine import needs_environment, score_calls
from ._protocol import SOUND, Protocol
from ._tables import domain_tables


class UnknownGoal(ValueError):
    """The task's goal is not a tool of its domain: no episode of it can be scored."""


def score_episode(
    task: Task,
    calls: Sequence[EpisodeCall],
    final_database: Any,
    protocol: Protocol = SOUND,
    *,
    executed: Sequence[EpisodeCall] | None = None,
    domain: str | None = None,
    output_format: str = "value",
    credit_cards: str | None = None,
    justify_refusal: bool = False,
    program: str | None = None,
) -> EpisodeScore:
    """The verdict on one episode of ``task``.

    ``calls``: the calls to score, in order (each with its output and step); ``final_database``:
    the database of the system the agent talked to, at the end. ``executed``: the calls the
    agent's environment executed, when the protocol scores a selection of them (the published
    ``first_call_only`` reading of a recorded run; default: ``calls``). ``domain`` overrides the
    task's; ``output_format`` is how outputs were shown ("value", or "tuple" for older recorded
    runs); ``credit_cards`` ("list"/"dict") overrides the bank card reading that the
    ``credit_cards_as_shipped`` quirk implies; ``justify_refusal`` also decides
    ``justified_refusal`` for tasks that must be refused. ``program``: the agent's environment was
    the task's strict system (published env_mode ``program``) with this default-SOP option ("full"
    or "required"), not a lenient one; whether each call succeeded is asked of that system.

    Raises ``KeyError`` for an unknown domain, ``UnknownGoal`` when the task's goal is not one
    of its tools, and ``PublishedCrash`` where the published
    evaluator failed; a malformed call (unknown tool, arguments that are not JSON) is a finding
    of the verdict, never an exception.
    """
    if credit_cards is None:
        credit_cards = "dict" if protocol.switches.credit_cards_as_shipped else "list"
    tables = domain_tables(domain or task.domain, credit_cards)
    if task.goal not in tables.domain.tools:
        raise UnknownGoal(f"user_goal {task.goal!r} is not a tool of domain {tables.domain.name}")
    return score_calls(
        task,
        calls,
        calls if executed is None else executed,
        final_database,
        protocol,
        tables,
        output_format,
        justify_refusal,
        program,
    )


def episode_calls(
    run: Run, protocol: Protocol = SOUND, *, justify_refusal: bool = False
) -> tuple[list[EpisodeCall], list[EpisodeCall]]:
    """A recorded run as ``score_episode`` takes it: the calls to score and the calls executed.

    Under quirk ``first_call_only`` the scored calls are the published selection (the first call
    of each assistant message, named by the next message); otherwise every executed call. Steps
    are the indexes of the tool messages that answered the calls. Raises ``PublishedCrash``
    where the published selection failed.
    """
    if protocol.switches.first_call_only:
        published = published_calls(run)
        # The executed calls matter only when the agent's environment is replayed.
        return published, executed_calls(run) if needs_environment(protocol, justify_refusal) else published
    executed = executed_calls(run)
    return executed, executed
