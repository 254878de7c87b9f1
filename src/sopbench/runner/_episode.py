"""One episode: the published conversation loop (SPEC §6.1) between an agent, a user and a lenient system.

The runner owns the transcript and the environment. The user opens; the agent answers with text or
tool calls. Tool calls are executed in order on the lenient system and answered with the text the
published simulator showed (``str`` of the tool's value); a call of ``exit_conversation`` ends the
episode without being executed. Whenever the agent answers without a tool call, the user replies.
The loop stops at the message limit (``max_turns``) or once ``max_actions`` calls were answered;
``max_actions`` holds within one reply too (calls beyond it are dropped: a counted problem).

A malformed call (unknown tool, arguments that are not a JSON object, missing or unexpected
arguments) is the agent's mistake: it gets an error text as the tool result, the episode goes on,
and the call is kept with its raw text and counted. An agent that raises, an ``AgentInfraError``
or a timeout make the episode an ``infra_error`` (not scored, retried on resume); a
``ContextLengthExceeded`` ends it as the agent's failure (scored as it stands). An
``AgentRequestError`` (a request no retry can fix) and ``AgentContractError`` (an agent whose
``act`` returns something else than an ``AgentTurn``) are raised on: the run stops.

``play_episode`` bounds an episode by a timeout whatever the agent does: agents and users of this
package run on the caller's event loop (they never block it); any other (a plugin) runs in a thread
of its own that the timeout can abandon. A timed-out episode keeps what it had: the transcript so
far, its usage, and the request it was waiting on.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sopbench.agents import (
    Agent,
    AgentInfraError,
    AgentRequestError,
    AgentTurn,
    ContextLengthExceeded,
    EpisodeSetup,
    ToolCallRequest,
    Usage,
    User,
)
from sopbench.domains import (
    EXIT_TOOL,
    MAX_CALLS,
    MAX_MESSAGES,
    LenientSystem,
    StrictSystem,
    get_domain,
    is_no_action,
    parse_arguments,
    task_oracle,
    tool_not_found,
)
from sopbench.guard import Guard
from sopbench.guard import ToolCall as GuardedCall

from ._row import EndReason, Status


@dataclass(frozen=True, slots=True)
class Limits:
    max_turns: int = MAX_MESSAGES  # messages in the transcript, the opening included
    max_actions: int = MAX_CALLS  # answered tool calls


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
    end: EndReason
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
    requests: int = 0  # requests the agent sent to its endpoint (retries included)
    timed_out_requests: int = 0  # of which abandoned at the request timeout and sent again
    # Seconds the agent's (user's) requests waited for an endpoint slot, and took to be answered.
    queue_s: float = 0.0
    model_s: float = 0.0
    user_queue_s: float = 0.0
    user_model_s: float = 0.0

    def snapshot(self) -> EpisodeResult:
        """A copy that an abandoned episode still running elsewhere cannot change."""
        return EpisodeResult(
            status=self.status,
            end=self.end,
            messages=[dict(m) for m in list(self.messages)],
            calls=list(self.calls),
            usage=self.usage,
            user_usage=self.user_usage,
            problems=list(self.problems),
            raw_replies=list(self.raw_replies),
            reason=self.reason,
            agent_steps=self.agent_steps,
            requests=self.requests,
            timed_out_requests=self.timed_out_requests,
            queue_s=self.queue_s,
            model_s=self.model_s,
            user_queue_s=self.user_queue_s,
            user_model_s=self.user_model_s,
        )


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
        call = self._answer(request)
        if request.problem is not None:  # malformed as sent (the agent says how): counted as such
            problem = request.problem if call.problem is None else f"{request.problem}; {call.problem}"
            call = ExecutedCall(call.id, call.name, call.arguments_text, call.arguments, call.output, problem)
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
    setup: EpisodeSetup,
    agent: Agent,
    user: User,
    limits: Limits,
    *,
    default_sop: str = "full",
    result: EpisodeResult | None = None,
) -> EpisodeResult:
    """Play one episode to its end, into ``result`` (a fresh one by default) as it goes.
    Exceptions of the agent or user become an ``infra_error``; ``AgentRequestError`` is raised."""
    started = time.perf_counter()
    system = episode_system(setup, default_sop)
    offered = {tool["function"]["name"] for tool in setup.tools} - {EXIT_TOOL}
    desk = ToolDesk(system, offered, Guard.for_task(setup.task) if setup.env_mode == "guard" else None)
    if result is None:
        result = EpisodeResult(status="completed", end="max_turns")
    messages = result.messages
    side = "agent"
    try:
        await agent.start(setup)
        side = "user"
        await user.start(setup)
        opening = await user.opening()
        result.user_usage += opening.usage
        messages.append({"role": "user", "content": _as_text(opening.content)})
        executed = 0
        while len(messages) < limits.max_turns and executed < limits.max_actions:
            side = "agent"
            try:
                turn = await agent.act(messages)
            except ContextLengthExceeded as exc:
                result.end = "context_length"
                result.problems.append(f"context length exceeded: {exc}")
                break
            result.agent_steps += 1
            turn = _checked_turn(turn, result.problems)
            result.usage += turn.usage
            result.problems.extend(turn.problems)
            calls = turn.tool_calls
            if any(is_no_action(c.name) for c in calls):
                calls = ()  # published: a message with a no-action call has no tool calls at all
            # max_actions holds within one reply too: calls beyond it are not executed (nor kept in
            # the message, whose every call must have its answer). max_turns is checked before each
            # reply, as published: the answers of the last reply's calls may pass it (ten calls
            # after the opening make 21 messages, the published runs included).
            room = limits.max_actions - executed
            if len(calls) > room:
                result.problems.append(
                    f"reply has {len(calls)} tool calls; only {room} fit --max-actions "
                    f"({limits.max_actions}): the others were not executed"
                )
                calls = calls[:room]
            messages.append(_call_message(turn, calls))
            if turn.raw is not None:
                result.raw_replies.append({"message": len(messages) - 1, "raw": turn.raw})
            if not calls:
                if len(messages) >= limits.max_turns:
                    break
                side = "user"
                reply = await user.reply(messages)
                result.user_usage += reply.usage
                messages.append({"role": "user", "content": _as_text(reply.content)})
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
    except (AgentRequestError, AgentContractError):
        raise
    except AgentInfraError as exc:
        # which endpoint failed: the agent's, or the user's (the ``llm`` user has its own)
        _infra(result, f"{side} endpoint error: {exc}")
    except Exception as exc:  # noqa: BLE001 - an agent or user bug must not stop the other episodes
        _infra(result, f"{side} raised {type(exc).__name__}: {exc}")
    finally:
        for closing in (agent, user):
            try:
                await closing.close()
            except Exception as exc:  # noqa: BLE001
                if result.status == "completed":
                    _infra(result, f"closing failed: {type(exc).__name__}: {exc}")
        _count_requests(result, agent, user)
        result.final_database = system.db
        system.close()
        result.latency_s = time.perf_counter() - started
    return result


async def play_episode(
    setup: EpisodeSetup,
    agent: Agent,
    user: User,
    limits: Limits,
    timeout: float | None,
    *,
    default_sop: str = "full",
) -> EpisodeResult:
    """``run_episode`` bounded by ``timeout`` seconds (module docstring). A timed-out episode is an
    ``infra_error`` that keeps its transcript, usage and the request it was waiting on."""
    started = time.perf_counter()
    result = EpisodeResult(status="completed", end="max_turns")
    episode = run_episode(setup, agent, user, limits, default_sop=default_sop, result=result)
    try:
        if _cooperative(agent) and _cooperative(user):
            return await asyncio.wait_for(episode, timeout)
        return await asyncio.wait_for(_in_own_thread(episode), timeout)
    except TimeoutError:
        waiting = _waiting_on(agent) or _waiting_on(user)
        partial = result.snapshot()
        _count_requests(partial, agent, user)
        reason = f"the episode timed out after {timeout:g} s"
        if waiting is not None:
            reason += (
                f" while waiting {time.monotonic() - waiting['sent']:.0f} s for a reply from "
                f"{waiting['url']} (model {waiting['model']}, request of {waiting['messages']} messages, "
                f"attempt {waiting['attempt']})"
            )
        _infra(partial, reason)
        partial.latency_s = time.perf_counter() - started
        return partial


class AgentContractError(Exception):
    """An agent broke the ``Agent`` contract (``act`` returned something that is not an
    ``AgentTurn``): a bug of the agent's code, an error of the invocation, not of one episode."""


def _cooperative(side: object) -> bool:
    """Agents and users of this package never block the event loop; plugins may."""
    return type(side).__module__.startswith("sopbench.")


async def _in_own_thread(coroutine: Any) -> Any:
    """Run ``coroutine`` on an event loop in a daemon thread: a timeout can abandon it even when
    it blocks (a blocked plugin keeps its thread until it returns or the process ends)."""
    loop = asyncio.get_running_loop()
    outcome: asyncio.Future[Any] = loop.create_future()

    def deliver(setter: str, value: Any) -> None:
        if not outcome.done():
            getattr(outcome, setter)(value)

    def target() -> None:
        try:
            value = asyncio.run(coroutine)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting loop
            setter, value = "set_exception", exc
        else:
            setter = "set_result"
        with contextlib.suppress(RuntimeError):  # the waiting loop is gone: nobody wants it any more
            loop.call_soon_threadsafe(deliver, setter, value)

    threading.Thread(target=target, name="sopbench-episode", daemon=True).start()
    return await outcome


def _waiting_on(side: object) -> dict[str, Any] | None:
    waiting = getattr(getattr(side, "endpoint", None), "waiting_on", None)
    return waiting if isinstance(waiting, dict) else None


def _count_requests(result: EpisodeResult, agent: Agent, user: User) -> None:
    endpoint = getattr(agent, "endpoint", None)
    for name in ("requests", "timed_out_requests"):
        value = getattr(endpoint, name, 0)
        if isinstance(value, int):
            setattr(result, name, value)
    for side, prefix in ((agent, ""), (user, "user_")):
        endpoint = getattr(side, "endpoint", None)
        for name in ("queue_s", "model_s"):
            value = getattr(endpoint, name, 0.0)
            if isinstance(value, float):
                setattr(result, prefix + name, value)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _checked_turn(turn: Any, problems: list[str]) -> AgentTurn:
    """The agent's turn with text where text belongs: an agent (a plugin, say) that hands over
    anything else made a mistake, named here, instead of a transcript no scorer can read."""
    if not isinstance(turn, AgentTurn):
        raise AgentContractError(f"act() returned {type(turn).__name__}, not an AgentTurn")
    content = turn.content
    if content is not None and not isinstance(content, str):
        problems.append(f"the agent's content is {type(content).__name__}, not text")
        content = str(content)
    calls = []
    for c in turn.tool_calls or ():
        if not isinstance(c, ToolCallRequest):
            problems.append(f"the agent returned a tool call of type {type(c).__name__}")
            continue
        fields = (c.id, c.name, c.arguments)
        if all(isinstance(v, str) for v in fields):
            calls.append(c)
            continue
        problems.append(f"the agent's tool call {c.name!r} has a field that is not text")
        ident, name, arguments = ("" if v is None else v if isinstance(v, str) else str(v) for v in fields)
        calls.append(ToolCallRequest(ident, name, arguments, c.problem or "a field was not text"))
    usage = turn.usage if isinstance(turn.usage, Usage) else Usage()
    if content is turn.content and len(calls) == len(turn.tool_calls) and usage is turn.usage and all(
        a is b for a, b in zip(calls, turn.tool_calls, strict=False)
    ):
        return turn
    return AgentTurn(content, tuple(calls), usage, turn.raw, turn.problems)


def _infra(result: EpisodeResult, reason: str) -> None:
    result.status = "infra_error"
    result.end = "infra_error"
    result.reason = reason
