"""The calls of an episode: the public call record, how a protocol reads it, and the recorded-run decoder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from sopbench.constraints import clip
from sopbench.domains import LenientSystem, StrictSystem, is_placeholder, replay_calls, tool_not_found_text
from sopbench.tasks import Task
from sopbench.traces import Run, ToolCallRecord, decode_arguments

from ._tables import DomainTables
from ._values import fresh, read_arguments


class PublishedCrash(Exception):
    """The published evaluator raises on this run (so it has no published verdict)."""


class EpisodeCall(NamedTuple):
    """One tool call of an episode as the agent's environment executed it.

    ``arguments`` is what the agent sent: the raw text (which may be malformed JSON) or a mapping.
    ``output`` is the content the agent was shown. ``step`` labels the call in explanations and
    identifies it: the index of the message that holds its output in the conversation.
    """

    name: str
    arguments: str | Mapping[str, Any]
    output: str
    step: int


@dataclass(slots=True)  # not frozen: built for every call of every run, and never changed after
class ScoredCall:
    """One call as a protocol scores it."""

    step: int  # the call's label (see EpisodeCall.step)
    name: str
    arguments: Any  # as the protocol reads them: a dict, or whatever eval made of the text
    json_arguments: dict[str, Any] | None  # the JSON object the agent sent (None: not one)
    output_text: str
    arguments_text: str  # the text the agent sent, which ``arguments`` was read from

    def describe(self) -> str:
        args = self.arguments if isinstance(self.arguments, dict) else self.json_arguments
        if not isinstance(args, dict):
            return f"{self.name}(<arguments {clip(self.arguments_text, 40)!r}>)"
        inner = ", ".join(f"{k}={clip(repr(v), 40)}" for k, v in args.items())
        return f"{self.name}({inner})"


def scored_calls(calls: Sequence[EpisodeCall], python_eval: bool) -> list[ScoredCall]:
    """The calls as a protocol reads them (quirk ``python_eval``: the published ``eval`` reading)."""
    out = []
    for call in calls:
        arguments = call.arguments
        if type(arguments) is str:
            text = arguments
            decoded = decode_arguments(text)[0]
        else:
            decoded = dict(arguments)  # type: ignore[arg-type]
            try:
                text = orjson.dumps(decoded).decode()
            except TypeError:
                text = repr(decoded)
        out.append(
            ScoredCall(
                call.step,
                call.name,
                read_arguments(text, decoded, python_eval),
                decoded,
                call.output
                if type(call.output) is str
                else ("" if call.output is None else str(call.output)),
                text,
            )
        )
    return out


# ---- recorded runs ---------------------------------------------------------------------------------
def executed_calls(run: Run) -> list[EpisodeCall]:
    """Every call the simulator executed, in the order of the answers (``Run.executed_calls``)."""
    messages = run.messages
    return [
        EpisodeCall(call.name, call.arguments_text, messages[answer].content or "", answer)
        for call, answer in run.executed_calls()
    ]


def published_calls(run: Run) -> list[EpisodeCall]:
    """Spec §7.1: per assistant message, its first call, named by the *next* message (quirk Q4)."""
    messages = run.messages
    calls: list[EpisodeCall] = []
    for index in range(len(messages) - 1):
        message = messages[index]
        if not message.tool_calls:
            continue
        first = _first_published_call(message.tool_calls)
        if first is None:
            continue
        answer = messages[index + 1]
        if answer.tool_name is None:
            raise PublishedCrash(
                f"message {index + 1} calls {first.name} but message {index + 2} is not a tool output "
                "(the published evaluator reads its tool_name and raises KeyError)"
            )
        calls.append(EpisodeCall(answer.tool_name, first.arguments_text, answer.content or "", index + 1))
    return calls


def _first_published_call(tool_calls: Sequence[ToolCallRecord]) -> ToolCallRecord | None:
    """The first call left by the published "N/A" filter (None when nothing is left).

    The published filter removed items from the list it iterated, so it skips the item after each
    removed one (two adjacent "N/A" calls leave the second): the first survivor is the first call,
    or the second one when the first is a placeholder.
    """
    first = tool_calls[0]
    if not is_placeholder(first.name):
        return first
    return tool_calls[1] if len(tool_calls) > 1 else None


# ---- the agent's environment -----------------------------------------------------------------------
def environment_outcomes(
    executed: Sequence[ScoredCall],
    tables: DomainTables,
    task: Task,
    database: dict[str, Any] | None,
    system: LenientSystem | StrictSystem | None = None,
) -> list[bool]:
    """Replays what the agent's environment executed: whether each call succeeded, in order.

    Calls are run in order on a fresh lenient system (``domains.replay_calls``), with the JSON
    arguments the agent sent; a call answered "not found", or whose arguments are not a JSON object,
    was not executed. ``database`` is a private copy of the task's
    database (None: the system makes its own). ``system``: the environment to replay on instead
    (the task's strict system, for env_mode ``program``).
    """
    if system is None:
        system = LenientSystem(
            tables.domain,
            task.initial_database if database is None else database,
            task.constraint_parameters,
            copy=database is None,
            atomic=False,
            options=tables.options,
        )
    outcomes = replay_calls(
        system,
        (
            (
                call.name,
                None
                if call.json_arguments is None or call.output_text == tool_not_found_text(call.name)
                else fresh(call.json_arguments),
            )
            for call in executed
        ),
    )
    system.close()
    return outcomes
