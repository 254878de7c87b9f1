"""One episode: the published conversation loop (SPEC §6.1) between an agent, a user and a lenient system.

The runner owns the transcript and the environment. The user opens; the agent answers with text or
tool calls. Tool calls are executed in order on the lenient system and answered with the text the
published simulator showed (``str`` of the tool's value); a call of ``exit_conversation`` ends the
episode without being executed. Whenever the agent answers without a tool call, the user replies.
The loop stops at the message limit (``max_turns``) or once ``max_actions`` calls were answered.

A malformed call (unknown tool, arguments that are not a JSON object, missing or unexpected
arguments) is the agent's mistake: it gets an error text as the tool result, the episode goes on,
and the call is kept with its raw text and counted. An agent that raises, an ``AgentInfraError``
or a timeout make the episode an ``infra_error`` (not scored, retried on resume); a
``ContextLengthExceeded`` ends it as the agent's failure (scored as it stands).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sopbench.agents import (
    EXIT_TOOL,
    NO_ACTION_NAMES,
    Agent,
    AgentInfraError,
    AgentTurn,
    ContextLengthExceeded,
    EpisodeSetup,
    ToolCallRequest,
    Usage,
    User,
)
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

Status = Literal["completed", "infra_error"]


@dataclass(frozen=True, slots=True)
class Limits:
    max_turns: int = 20  # messages in the transcript, the opening included
    max_actions: int = 10  # answered tool calls


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


@dataclass
class EpisodeResult:
    status: Status
    end: str  # exit_conversation, user_ended, max_turns, max_actions, context_length, infra_error
    messages: list[dict[str, Any]] = field(default_factory=list)
    calls: list[ExecutedCall] = field(default_factory=list)
    final_database: Any = None
    usage: Usage = Usage()
    user_usage: Usage = Usage()
    problems: list[str] = field(default_factory=list)  # malformed calls and replies, raw text kept
    raw_replies: list[dict[str, Any]] = field(default_factory=list)  # {message index, the model's raw text}
    reason: str | None = None  # infra_error: what went wrong
    agent_steps: int = 0
    latency_s: float = 0.0


def _call_message(turn: AgentTurn, calls: tuple[ToolCallRequest, ...]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.content}
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
    return message


class ToolDesk:
    """Answers an agent's tool calls on one system (lenient, or strict in env_mode ``program``);
    never raises. With a ``guard`` (env_mode ``guard``), a call whose SOP the calls executed so far
    did not verify is not executed: its answer is the guard's explanation."""

    def __init__(self, system: LenientSystem | StrictSystem, offered: set[str], guard: Guard | None = None) -> None:
        self.system = system
        self.offered = offered
        self.guard = guard
        self.history: list[GuardedCall] = []  # executed calls, as the guard reads them

    def answer(self, request: ToolCallRequest) -> ExecutedCall:
        name, text = request.name, request.arguments
        if name not in self.offered:
            return ExecutedCall(
                request.id, name, text, None, tool_not_found(name).content(), f"unknown tool {name!r}"
            )
        arguments, error = parse_arguments(name, text)
        if arguments is None:
            return ExecutedCall(request.id, name, text, None, error or "Error: bad arguments.", error)
        problem = _argument_problem(self.system, name, arguments)
        if self.guard is not None and problem is None:
            decision = self.guard.check(GuardedCall(name, arguments), self.history)
            if not decision.allowed:
                return ExecutedCall(request.id, name, text, arguments, decision.explanation, None, refused=True)
        outcome = self.system.execute(name, arguments, offered_only=False)
        content = outcome.content("value")
        if self.guard is not None:
            self.history.append(GuardedCall(name, arguments, content, outcome.ok))
        return ExecutedCall(request.id, name, text, arguments, content, problem)


def _argument_problem(system: LenientSystem | StrictSystem, name: str, arguments: Mapping[str, Any]) -> str | None:
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


def episode_system(setup: EpisodeSetup, default_sop: str = "full") -> LenientSystem | StrictSystem:
    """The system the agent talks to: lenient (env_mode ``prompt`` and ``guard``), or, in
    ``program``, the task's strict system, which refuses a call whose constraints do not hold
    (every tool's default SOP of option ``default_sop``, the task's own for its goal)."""
    task = setup.task
    domain = get_domain(task.domain)
    if setup.env_mode == "program":
        return task_oracle(domain, task, option=default_sop, atomic=False)  # type: ignore[arg-type]
    return LenientSystem(domain, task.initial_database, task.constraint_parameters, atomic=False)


async def run_episode(
    setup: EpisodeSetup, agent: Agent, user: User, limits: Limits, *, default_sop: str = "full"
) -> EpisodeResult:
    """Play one episode to its end. Exceptions of the agent or user become an ``infra_error``."""
    started = time.perf_counter()
    system = episode_system(setup, default_sop)
    offered = {tool["function"]["name"] for tool in setup.tools} - {EXIT_TOOL}
    desk = ToolDesk(system, offered, Guard.for_task(setup.task) if setup.env_mode == "guard" else None)
    result = EpisodeResult(status="completed", end="max_turns")
    messages = result.messages
    try:
        await agent.start(setup)
        await user.start(setup)
        opening = await user.opening()
        result.user_usage += opening.usage
        messages.append({"role": "user", "content": opening.content})
        executed = 0
        while len(messages) < limits.max_turns and executed < limits.max_actions:
            try:
                turn = await agent.act(messages)
            except ContextLengthExceeded as exc:
                result.end = "context_length"
                result.problems.append(f"context length exceeded: {exc}")
                break
            result.agent_steps += 1
            result.usage += turn.usage
            result.problems.extend(turn.problems)
            calls = turn.tool_calls
            if any(c.name.strip().lower() in NO_ACTION_NAMES for c in calls):
                calls = ()  # published: a message with a no-action call has no tool calls at all
            messages.append(_call_message(turn, calls))
            if turn.raw is not None:
                result.raw_replies.append({"message": len(messages) - 1, "raw": turn.raw})
            if not calls:
                if len(messages) >= limits.max_turns:
                    break
                reply = await user.reply(messages)
                result.user_usage += reply.usage
                messages.append({"role": "user", "content": reply.content})
                if reply.ends:
                    result.end = "user_ended"
                    break
                continue
            if any(c.name == EXIT_TOOL for c in calls):
                result.end = "exit_conversation"
                break
            for request in calls:
                call = desk.answer(request)
                result.calls.append(call)
                if call.problem is not None:
                    result.problems.append(
                        f"malformed call {call.name}({call.arguments_text}): {call.problem}"
                    )
                if call.refused:
                    result.problems.append(f"refused by the guard: {call.output}")
                messages.append({"role": "tool", "tool_call_id": call.id, "content": call.output})
                executed += 1
        else:
            result.end = "max_actions" if executed >= limits.max_actions else "max_turns"
    except AgentInfraError as exc:
        _infra(result, f"agent infrastructure error: {exc}")
    except Exception as exc:  # noqa: BLE001 - an agent or user bug must not stop the other episodes
        _infra(result, f"{type(exc).__name__}: {exc}")
    finally:
        for side in (agent, user):
            try:
                await side.close()
            except Exception as exc:  # noqa: BLE001
                if result.status == "completed":
                    _infra(result, f"closing failed: {type(exc).__name__}: {exc}")
    result.final_database = system.db
    system.close()
    result.latency_s = time.perf_counter() - started
    return result


def _infra(result: EpisodeResult, reason: str) -> None:
    result.status = "infra_error"
    result.end = "infra_error"
    result.reason = reason
