"""How an episode went, beyond its verdict: why it ended, tokens, time, cost, tries and the problems
the runner stored (malformed replies and calls, protocol violations), each placed at its step.

Read from what a run folder or an Inspect log keeps; a published trajectory file keeps none of it
(the page says so rather than showing zeros).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sopbench.statistics import UsageSummary, with_cost
from sopbench.traces import Message

__all__ = ["EpisodeFacts", "ProblemView", "episode_facts", "problem_steps"]

Prices = Mapping[str, tuple[float, float]]


@dataclass(frozen=True)
class ProblemView:
    text: str
    step: int | None  # the message it happened at; None: not tied to one message


@dataclass(frozen=True)
class EpisodeFacts:
    """What a live episode kept of how it went (a field is None when its source did not keep it)."""

    status: str = "completed"  # or infra_error
    end_reason: str | None = None  # exit_conversation, user_ended, max_turns, max_actions, context_length...
    reason: str | None = None  # infra_error: what went wrong
    agent_tokens: tuple[int, int] | None = None  # prompt, completion
    user_tokens: tuple[int, int] | None = None
    latency_s: float | None = None
    attempts: int | None = None
    cost_usd: float | None = None  # None: no price known for the model (--prices)
    problems: tuple[str, ...] = field(default_factory=tuple)


def _tokens(usage: Mapping[str, Any] | None) -> tuple[int, int] | None:
    if not isinstance(usage, Mapping) or not usage:
        return None
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


def episode_facts(
    *,
    status: str,
    end_reason: str | None,
    reason: str | None,
    usage: Mapping[str, Any] | None,
    user_usage: Mapping[str, Any] | None,
    latency_s: float | None,
    attempts: int | None,
    problems: Sequence[Any],
    model: str | None,
    prices: Prices | None,
) -> EpisodeFacts:
    agent = _tokens(usage)
    cost = None
    if agent is not None:
        one = UsageSummary(1, agent[0], agent[1], 0, 0, None, None, None)
        cost = with_cost(one, model, prices).cost_usd
    return EpisodeFacts(
        status=status,
        end_reason=end_reason,
        reason=reason,
        agent_tokens=agent,
        user_tokens=_tokens(user_usage),
        latency_s=latency_s,
        attempts=attempts,
        cost_usd=cost,
        problems=tuple(p if isinstance(p, str) else repr(p) for p in problems),
    )


def problem_steps(problems: Sequence[str], messages: Sequence[Message]) -> list[ProblemView]:
    """Each stored problem at the message it names: a malformed call at the assistant message that
    made it (its name and argument text), a refused call at the tool answer that refused it; a
    problem of the whole reply (its shape, its content) has no step of its own."""
    used: set[int] = set()
    placed = []
    for text in problems:
        step = None
        for index, message in enumerate(messages):
            if index in used:
                continue
            if text.startswith("malformed call ") and any(
                f"{call.name}({call.arguments_text})" in text for call in message.tool_calls
            ):
                step = index
                break
            refused = text.removeprefix("refused by the guard: ")
            if refused != text and message.is_tool and (message.content or "") == refused:
                step = index
                break
        if step is not None:
            used.add(step)
        placed.append(ProblemView(text, step))
    return placed
