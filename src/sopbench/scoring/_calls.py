"""Which tool calls of a recorded run are scored, and what the agent's environment made of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sopbench.domains import LenientSystem
from sopbench.traces import Message, Run, ToolCallRecord

from ._tables import DomainTables
from ._values import fresh, read_arguments

# The published evaluator dropped calls with these names (spec §7.1); the simulator treated a
# message holding a call named "none" or "n/a" as a message without calls (spec §6.1).
EVALUATOR_PLACEHOLDER_NAMES = frozenset({"n/a", "na", "none", "null"})


class PublishedCrash(Exception):
    """The published evaluator raises on this run (so it has no published verdict)."""


@dataclass(frozen=True, slots=True)
class ScoredCall:
    """One call as a protocol scores it."""

    step: int  # 1-based position among the scored calls
    name: str
    arguments: Any  # as the protocol reads them: a dict, or whatever eval made of the text
    json_arguments: dict[str, Any] | None  # the JSON object the agent sent (None: not one)
    output_text: str
    answer: int  # index of the tool message that answered it (the agent's environment's reply)

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
        remaining = _published_placeholder_filter(message.tool_calls)
        if not remaining:
            continue
        answer = messages[index + 1]
        if answer.tool_name is None:
            raise PublishedCrash(
                f"message {index + 1} calls {remaining[0].name} but message {index + 2} is not a tool output "
                "(the published evaluator reads its tool_name and raises KeyError)"
            )
        first = remaining[0]
        calls.append(
            ScoredCall(
                step=len(calls) + 1,
                name=answer.tool_name,
                arguments=read_arguments(first.arguments_text, first.arguments, python_eval),
                json_arguments=first.arguments,
                output_text=answer.content or "",
                answer=index + 1,
            )
        )
    return calls


def _published_placeholder_filter(tool_calls: Sequence[ToolCallRecord]) -> list[ToolCallRecord]:
    """The published filter removed items from the list it iterated, so it skips the item after each
    removed one (two adjacent "N/A" calls leave the second)."""
    remaining = list(tool_calls)
    position = 0
    while position < len(remaining):
        if remaining[position].name.lower() in EVALUATOR_PLACEHOLDER_NAMES:
            del remaining[position]
        position += 1
    return remaining


def executed_calls(run: Run) -> list[tuple[ToolCallRecord, int]]:
    """Every call the simulator executed, with the index of the tool message that answered it.

    A call takes the answer with its ``tool_call_id``, else the first answer not yet taken; calls
    without an answer (``exit_conversation``, "N/A" pseudo-calls) were never executed.
    """
    messages = run.messages
    out: list[tuple[ToolCallRecord, int]] = []
    for index, message in enumerate(messages):
        if not message.tool_calls:
            continue
        answers = _answers_after(messages, index)
        unclaimed = list(answers)
        for call in message.tool_calls:
            chosen = next(
                (a for a in unclaimed if call.id is not None and messages[a].tool_call_id == call.id), None
            )
            if chosen is None and unclaimed:
                chosen = unclaimed[0]
            if chosen is not None:
                unclaimed.remove(chosen)
                out.append((call, chosen))
    out.sort(key=lambda pair: pair[1])
    return out


def _answers_after(messages: Sequence[Message], index: int) -> list[int]:
    answers = []
    for position in range(index + 1, len(messages)):
        if not messages[position].is_tool:
            break
        answers.append(position)
    return answers


def every_call(run: Run, python_eval: bool) -> list[ScoredCall]:
    """Sound extraction: every executed call under its own name, with the output it got."""
    calls = []
    for call, answer in executed_calls(run):
        calls.append(
            ScoredCall(
                step=len(calls) + 1,
                name=call.name,
                arguments=read_arguments(call.arguments_text, call.arguments, python_eval),
                json_arguments=call.arguments,
                output_text=run.messages[answer].content or "",
                answer=answer,
            )
        )
    return calls


def not_found_text(name: str) -> str:
    return f"Error: Tool {name} not found."


def environment_outcomes(run: Run, tables: DomainTables, task: Any) -> dict[int, bool]:
    """Replays what the agent's environment executed: answer index -> whether that call succeeded.

    Calls are run in the order they were answered on a fresh lenient system, with the JSON
    arguments the agent sent; a call answered "not found" was not executed.
    """
    domain = tables.domain
    system = LenientSystem(
        domain, task.initial_database, task.constraint_parameters, atomic=False, options=tables.options
    )
    outcomes: dict[int, bool] = {}
    for call, answer in executed_calls(run):
        if run.messages[answer].content == not_found_text(call.name) or call.arguments is None:
            outcomes[answer] = False
            continue
        outcome = system.execute(call.name, fresh(call.arguments), offered_only=False)
        outcomes[answer] = outcome.ok
    return outcomes
