"""The verdict rows every statistic is computed over: one ``Outcome`` per scored run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sopbench.evaluation import UNCLASSIFIED
from sopbench.evaluation import UnverifiedConstraint as Unverified

__all__ = ["JUDGEMENT_NAMES", "Configuration", "Outcome", "Unverified", "Usage"]

JUDGEMENT_NAMES = ("database", "permission", "procedure")


@dataclass(frozen=True, slots=True, order=True)
class Configuration:
    """What was measured: the agent (or published model) and how it was run."""

    agent: str
    model: str | None
    tool_mode: str | None
    tool_list: str | None
    user: str | None

    @property
    def label(self) -> str:
        """A short name: model (or agent), mode, tool list and, when not the default, user."""
        parts = [self.model or self.agent]
        parts += [p for p in (self.tool_mode, self.tool_list) if p]
        if self.user and self.user not in ("none", "default"):
            parts.append(f"user {self.user}")
        return " ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "model": self.model,
            "tool_mode": self.tool_mode,
            "tool_list": self.tool_list,
            "user": self.user,
        }


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens and latency of one live episode (None for a published trajectory, which has none)."""

    agent_prompt_tokens: int = 0
    agent_completion_tokens: int = 0
    user_prompt_tokens: int = 0
    user_completion_tokens: int = 0
    latency_s: float | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """One scored run: where it comes from, what it was, and its verdict.

    ``failed`` names the judgements (of ``JUDGEMENT_NAMES``) that failed; ``unverified`` the
    constraints a procedure failure left unverified, one per failing call.
    """

    configuration: Configuration
    domain: str
    goal: str
    task_id: str
    run: int
    passed: bool
    should_succeed: bool
    failed: tuple[str, ...] = ()
    unverified: tuple[Unverified, ...] = ()
    usage: Usage | None = None
    source: str = ""
    task_digest: str = ""  # sha256 of the task's content ("" when unknown): same digest, same task
    by_default: bool | None = None  # a pass with no well-formed action by the agent (None: not known)

    @property
    def first_failing_judgement(self) -> str | None:
        return self.failed[0] if self.failed else None

    @property
    def findings(self) -> tuple[Unverified, ...]:
        """What failed the procedure: the constraint each failing call left unverified, or one
        unclassified item when the evaluator attributed the failure to none (an invalid call, a run
        read from a store); nothing when the procedure passed."""
        if "procedure" not in self.failed:
            return ()
        return self.unverified or (UNCLASSIFIED,)
