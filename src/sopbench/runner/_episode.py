"""One episode: the published conversation loop (SPEC §6.1) between an agent, a user and a lenient system.

The runner owns the transcript and the environment. The user opens; the agent answers with text or
tool calls. Tool calls are answered in order by the episode's tool desk (``_desk.py``); a call of
``exit_conversation`` ends the episode without being executed. Whenever the agent answers without a
tool call, the user replies. The loop stops at the message limit (``max_turns``) or once
``max_actions`` calls were answered; ``max_actions`` holds within one reply too (calls beyond it
are dropped: a counted problem).

An agent that raises, an ``AgentInfraError`` or a timeout make the episode an ``infra_error`` (not
scored, retried on resume); a ``ContextLengthExceeded`` ends it as the agent's failure (scored as
it stands). An ``AgentRequestError`` (a request no retry can fix) and ``AgentContractError`` (an
agent whose ``act`` returns something else than an ``AgentTurn``) are raised on: the run stops.
The timeout that bounds an episode whatever the agent does is ``_bounded.py``'s.
"""

from __future__ import annotations

import time
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
from sopbench.constraints import clip
from sopbench.domains import EXIT_TOOL, MAX_CALLS, MAX_MESSAGES, is_no_action
from sopbench.guard import Guard

from ._desk import ExecutedCall, ToolDesk, episode_system
from ._row import EndReason, Status


@dataclass(frozen=True, slots=True)
class Limits:
    max_turns: int = MAX_MESSAGES  # messages in the transcript, the opening included
    max_actions: int = MAX_CALLS  # answered tool calls


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
    timed_out_requests: int = 0  # of which abandoned at the request timeout (retried within the retry budget)
    # Seconds the agent's (user's) requests waited for an endpoint slot, and took to be answered.
    queue_s: float = 0.0
    model_s: float = 0.0
    user_queue_s: float = 0.0
    user_model_s: float = 0.0
    # Replies the agent's (user's) endpoint took from the cache (``--cache``), and their tokens.
    cache: tuple[int, Usage] = (0, Usage())
    user_cache: tuple[int, Usage] = (0, Usage())

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
            cache=self.cache,
            user_cache=self.user_cache,
        )


def _call_message(turn: AgentTurn, calls: tuple[ToolCallRequest, ...]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.content}
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
    return message


async def run_episode(
    setup: EpisodeSetup,
    agent: Agent,
    user: User,
    limits: Limits,
    *,
    result: EpisodeResult | None = None,
) -> EpisodeResult:
    """Play one episode to its end, into ``result`` (a fresh one by default) as it goes.
    Exceptions of the agent or user become an ``infra_error``; ``AgentRequestError`` is raised."""
    started = time.perf_counter()
    system = episode_system(setup)
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
            if any(is_no_action(c.name, setup.no_action) for c in calls):
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
                # the parser's problems with this reply: it broke the text protocol (counted per episode)
                broke = {"problems": list(turn.problems)} if turn.problems else {}
                result.raw_replies.append({"message": len(messages) - 1, "raw": turn.raw, **broke})
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
                    # the raw text is in the call's own column: here a clip (it may be megabytes)
                    result.problems.append(
                        f"malformed call {call.name}({clip(call.arguments_text, 200)}): {call.problem}"
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
        mark_infra_error(result, f"{side} endpoint error: {exc}")
    except Exception as exc:  # noqa: BLE001 - an agent or user bug must not stop the other episodes
        mark_infra_error(result, f"{side} raised {type(exc).__name__}: {exc}")
    finally:
        for closing in (agent, user):
            try:
                await closing.close()
            except Exception as exc:  # noqa: BLE001
                if result.status == "completed":
                    mark_infra_error(result, f"closing failed: {type(exc).__name__}: {exc}")
        count_requests(result, agent, user)
        result.final_database = system.db
        system.close()
        result.latency_s = time.perf_counter() - started
    return result


class AgentContractError(Exception):
    """An agent broke the ``Agent`` contract (``act`` returned something that is not an
    ``AgentTurn``): a bug of the agent's code, an error of the invocation, not of one episode."""


def count_requests(result: EpisodeResult, agent: Agent, user: User) -> None:
    """The requests the agent's endpoint sent (retries included), how many timed out, and the
    seconds the agent's and the user's requests waited for a slot and took to be answered."""
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
        hits, usage = getattr(endpoint, "cache_hits", 0), getattr(endpoint, "cached_usage", None)
        if isinstance(hits, int) and isinstance(usage, Usage):
            setattr(result, f"{prefix}cache", (hits, usage))


def _as_text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _checked_turn(turn: object, problems: list[str]) -> AgentTurn:
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
    if (
        content is turn.content
        and len(calls) == len(turn.tool_calls)
        and usage is turn.usage
        and all(a is b for a, b in zip(calls, turn.tool_calls, strict=False))
    ):
        return turn
    return AgentTurn(content, tuple(calls), usage, turn.raw, turn.problems)


def mark_infra_error(result: EpisodeResult, reason: str) -> None:
    """Make ``result`` an ``infra_error`` for ``reason`` (not scored, played again on resume)."""
    result.status = "infra_error"
    result.end = "infra_error"
    result.reason = reason
