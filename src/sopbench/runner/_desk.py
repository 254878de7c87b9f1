"""The tool desk of an episode: answers an agent's tool calls on the episode's system.

Calls are answered with the text the published simulator showed (``str`` of the tool's value). A
malformed call (unknown tool, arguments that are not a JSON object, missing or unexpected arguments)
is the agent's mistake: it gets an error text as the tool result, the episode goes on, and the call
is kept with its raw text and counted as malformed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sopbench.agents import EpisodeSetup, ToolCallRequest
from sopbench.domains import (
    LenientSystem,
    StrictSystem,
    get_domain,
    parse_arguments,
    task_oracle,
    tool_not_found,
)
from sopbench.guard import Guard
from sopbench.guard import ToolCall as GuardedCall


@dataclass(frozen=True, slots=True)
class ExecutedCall:
    """One answered tool call: what the agent asked for and the text it got back."""

    id: str
    name: str
    arguments_text: str  # raw, as the agent wrote it
    arguments: dict[str, Any] | None  # None: the text is not a JSON object
    output: str
    problem: str | None = None  # why the call is malformed (None: well-formed)
    refused: bool = False  # env_mode guard: its SOP was not verified, so it was not executed
    failed: bool = False  # executed, and the tool failed (``ToolOutcome.ok`` false): it verifies nothing


class ToolDesk:
    """Answers an agent's tool calls on one system (lenient, or strict in env_mode ``program``);
    never raises. With a ``guard`` (env_mode ``guard``), a call whose SOP the calls executed so far
    did not verify is not executed: its answer is the guard's explanation."""

    def __init__(
        self, system: LenientSystem | StrictSystem, offered: set[str], guard: Guard | None = None
    ) -> None:
        self.system = system
        self.offered = offered
        self.guard = guard
        # The executed calls as the guard reads them, kept indexed (its checks cost the same at any length).
        self.session = guard.session() if guard is not None else None

    def answer(self, request: ToolCallRequest) -> ExecutedCall:
        call = self._answer(request)
        if request.problem is not None:  # malformed as sent (the agent says how): counted as such
            problem = request.problem if call.problem is None else f"{request.problem}; {call.problem}"
            call = ExecutedCall(
                call.id,
                call.name,
                call.arguments_text,
                call.arguments,
                call.output,
                problem,
                failed=call.failed,
            )
        return call

    def _answer(self, request: ToolCallRequest) -> ExecutedCall:
        name, text = request.name, request.arguments
        if name not in self.offered:
            return ExecutedCall(
                request.id, name, text, None, tool_not_found(name).content(), f"unknown tool {name!r}"
            )
        arguments, error = parse_arguments(name, text)
        if arguments is None:
            return ExecutedCall(request.id, name, text, None, error or "Error: bad arguments.", error)
        problem = _argument_problem(self.system, name, arguments)
        if self.session is not None and problem is None:
            decision = self.session.check(GuardedCall(name, arguments))
            if not decision.allowed:
                return ExecutedCall(
                    request.id, name, text, arguments, decision.explanation, None, refused=True
                )
        outcome = self.system.execute(name, arguments, offered_only=False)
        content = outcome.content("value")
        if self.session is not None:
            self.session.record(GuardedCall(name, arguments, content, outcome.ok))
        return ExecutedCall(request.id, name, text, arguments, content, problem, failed=not outcome.ok)


def _argument_problem(
    system: LenientSystem | StrictSystem, name: str, arguments: Mapping[str, Any]
) -> str | None:
    """Missing or unexpected arguments (the system answers them with the interpreter's own TypeError)."""
    parameters = system.domain.tools[name].signature.parameters
    named = {
        p: spec
        for p, spec in parameters.items()
        if spec.kind in (spec.POSITIONAL_OR_KEYWORD, spec.KEYWORD_ONLY)
    }
    takes_any = any(spec.kind is spec.VAR_KEYWORD for spec in parameters.values())
    unexpected = [] if takes_any else [a for a in arguments if a not in named]
    missing = [p for p, spec in named.items() if spec.default is spec.empty and p not in arguments]
    parts = []
    if unexpected:
        parts.append(f"unexpected argument(s) {', '.join(unexpected)}")
    if missing:
        parts.append(f"missing argument(s) {', '.join(missing)}")
    return f"{name}: {'; '.join(parts)}" if parts else None


def episode_system(setup: EpisodeSetup) -> LenientSystem | StrictSystem:
    """The system the agent talks to: lenient (env_mode ``prompt`` and ``guard``), or, in
    ``program``, the task's strict system, which refuses a call whose constraints do not hold
    (every tool's default SOP of the environment's ``default_sop``, the task's own for its goal)."""
    task = setup.task
    domain = get_domain(task.domain)
    if setup.env_mode == "program":
        return task_oracle(domain, task, option=setup.environment.default_sop, atomic=False)
    return LenientSystem(domain, task.initial_database, task.constraint_parameters, atomic=False)
