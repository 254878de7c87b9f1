"""Which tool calls of a recorded run are scored, and what the agent's environment made of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sopbench.domains import LenientSystem
from sopbench.domains._system import succeeded
from sopbench.traces import Run, ToolCallRecord

from ._tables import DomainTables
from ._values import fresh, read_arguments

# The published evaluator dropped calls with these names (spec §7.1); the simulator treated a
# message holding a call named "none" or "n/a" as a message without calls (spec §6.1).
EVALUATOR_PLACEHOLDER_NAMES = frozenset({"n/a", "na", "none", "null"})


class PublishedCrash(Exception):
    """The published evaluator raises on this run (so it has no published verdict)."""


@dataclass(slots=True)  # not frozen: built for every call of every run, and never changed after
class ScoredCall:
    """One call as a protocol scores it."""

    step: int  # 1-based position among the scored calls
    name: str
    arguments: Any  # as the protocol reads them: a dict, or whatever eval made of the text
    json_arguments: dict[str, Any] | None  # the JSON object the agent sent (None: not one)
    output_text: str
    answer: int  # index of the tool message that answered it (the agent's environment's reply)
    arguments_text: str = ""  # the text the agent sent, which ``arguments`` was read from

    def describe(self) -> str:
        args = self.arguments if isinstance(self.arguments, dict) else self.json_arguments
        if not isinstance(args, dict):
            return f"{self.name}(<arguments {str(self.arguments)[:40]!r}>)"
        inner = ", ".join(f"{k}={_short(v)}" for k, v in args.items())
        return f"{self.name}({inner})"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def published_calls(run: Run, python_eval: bool) -> list[ScoredCall]:
    """Spec §7.1: per assistant message, its first call, named by the *next* message (quirk Q4)."""
    messages = run.messages
    calls: list[ScoredCall] = []
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
        calls.append(
            ScoredCall(
                step=len(calls) + 1,
                name=answer.tool_name,
                arguments=read_arguments(first.arguments_text, first.arguments, python_eval),
                json_arguments=first.arguments,
                output_text=answer.content or "",
                answer=index + 1,
                arguments_text=first.arguments_text,
            )
        )
    return calls


def _first_published_call(tool_calls: Sequence[ToolCallRecord]) -> ToolCallRecord | None:
    """The first call left by the published "N/A" filter (None when nothing is left).

    The published filter removed items from the list it iterated, so it skips the item after each
    removed one (two adjacent "N/A" calls leave the second): the first survivor is the first call,
    or the second one when the first is a placeholder.
    """
    first = tool_calls[0]
    if first.name.lower() not in EVALUATOR_PLACEHOLDER_NAMES:
        return first
    return tool_calls[1] if len(tool_calls) > 1 else None


def executed_calls(run: Run) -> list[tuple[ToolCallRecord, int]]:
    """Every call the simulator executed, with the index of the tool message that answered it.

    A call takes the answer with its ``tool_call_id``, else the first answer not yet taken; calls
    without an answer (``exit_conversation``, "N/A" pseudo-calls) were never executed.
    """
    messages = run.messages
    count = len(messages)
    out: list[tuple[ToolCallRecord, int]] = []
    for index, message in enumerate(messages):
        if not message.tool_calls:
            continue
        unclaimed = []  # the tool messages right after this one
        position = index + 1
        while position < count and messages[position].sender is None:
            unclaimed.append(position)
            position += 1
        for call in message.tool_calls:
            if not unclaimed:
                break
            chosen = unclaimed[0]
            if call.id is not None:
                for answer in unclaimed:
                    if messages[answer].tool_call_id == call.id:
                        chosen = answer
                        break
            unclaimed.remove(chosen)
            out.append((call, chosen))
    out.sort(key=_answer_position)
    return out


def _answer_position(pair: tuple[ToolCallRecord, int]) -> int:
    return pair[1]


def every_call(
    run: Run, python_eval: bool, executed: Sequence[tuple[ToolCallRecord, int]] | None = None
) -> list[ScoredCall]:
    """Sound extraction: every executed call under its own name, with the output it got.

    ``executed`` is ``executed_calls(run)`` when the caller has it already.
    """
    calls = []
    for call, answer in executed_calls(run) if executed is None else executed:
        calls.append(
            ScoredCall(
                step=len(calls) + 1,
                name=call.name,
                arguments=read_arguments(call.arguments_text, call.arguments, python_eval),
                json_arguments=call.arguments,
                output_text=run.messages[answer].content or "",
                answer=answer,
                arguments_text=call.arguments_text,
            )
        )
    return calls


def not_found_text(name: str) -> str:
    return f"Error: Tool {name} not found."


def environment_outcomes(
    run: Run,
    tables: DomainTables,
    task: Any,
    *,
    executed: Sequence[tuple[ToolCallRecord, int]] | None = None,
    database: dict[str, Any] | None = None,
) -> dict[int, bool]:
    """Replays what the agent's environment executed: answer index -> whether that call succeeded.

    Calls are run in the order they were answered on a fresh lenient system, with the JSON
    arguments the agent sent; a call answered "not found" was not executed. ``executed`` is
    ``executed_calls(run)`` and ``database`` a private copy of the task's database, when the
    caller has them already.
    """
    domain = tables.domain
    system = LenientSystem(
        domain,
        task.initial_database if database is None else database,
        task.constraint_parameters,
        copy=database is None,
        atomic=False,
        options=tables.options,
    )
    tools = domain.tools
    outcomes: dict[int, bool] = {}
    for call, answer in executed_calls(run) if executed is None else executed:
        name = call.name
        if (
            name not in tools
            or call.arguments is None
            or run.messages[answer].content == not_found_text(name)
        ):
            outcomes[answer] = False
            continue
        # What ``system.execute(name, arguments, offered_only=False).ok`` says, without the copies
        # execute makes of the arguments (already fresh) and of the result (only its success is read).
        try:
            outcomes[answer] = succeeded(system.invoke(name, fresh(call.arguments)))
        except Exception:  # noqa: BLE001 - as execute: a failing call is an unsuccessful one
            outcomes[answer] = False
    system.close()
    return outcomes
