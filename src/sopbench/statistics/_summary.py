"""Summaries over outcomes: rates with intervals, repeated runs, breakdowns, tokens and latency."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ._intervals import RateInterval, balanced_interval
from ._outcome import JUDGEMENT_NAMES, Configuration, Outcome
from ._repeated import RepeatedRuns, repeated_runs

__all__ = [
    "BREAKDOWNS",
    "OutcomeSummary",
    "UsageSummary",
    "breakdown",
    "by_configuration",
    "percentile",
    "rate_over_tasks",
    "summarize_outcomes",
    "summarize_usage",
    "with_cost",
]

BREAKDOWNS = ("goal", "constraint", "judgement")


def by_configuration(outcomes: Iterable[Outcome]) -> dict[Configuration, list[Outcome]]:
    """Outcomes grouped by configuration, configurations in sorted order (never pooled)."""
    groups: dict[Configuration, list[Outcome]] = {}
    for outcome in outcomes:
        groups.setdefault(outcome.configuration, []).append(outcome)
    return {c: groups[c] for c in sorted(groups, key=_config_key)}


def _config_key(config: Configuration) -> tuple[str, ...]:
    return tuple(
        x or ""
        for x in (config.model or config.agent, config.tool_mode, config.tool_list, config.user, config.agent)
    )


@dataclass(frozen=True, slots=True)
class OutcomeSummary:
    """Rates of one group of outcomes (one domain of one configuration, or all its domains)."""

    runs: RateInterval
    should_succeed: RateInterval
    should_refuse: RateInterval
    repeated: RepeatedRuns

    @property
    def balanced(self) -> float | None:
        rates = [r.rate for r in (self.should_succeed, self.should_refuse) if r.rate is not None]
        return sum(rates) / len(rates) if rates else None

    @property
    def balanced_ci95(self) -> tuple[float, float] | None:
        return balanced_interval(self.should_succeed, self.should_refuse)

    def as_dict(self) -> dict[str, Any]:
        ci = self.runs.ci95
        balanced_ci = self.balanced_ci95
        out: dict[str, Any] = {
            "runs": self.runs.total,
            "passed": self.runs.passed,
            "pass_rate": self.runs.rate,
            "pass_rate_ci95": None if ci is None else list(ci),
            "should_succeed": self.should_succeed.as_dict(),
            "should_refuse": self.should_refuse.as_dict(),
            "balanced": self.balanced,
            "balanced_ci95": None if balanced_ci is None else list(balanced_ci),
        }
        if self.repeated.max_runs >= 2:
            out.update(self.repeated.as_dict())
        return out


def summarize_outcomes(outcomes: Sequence[Outcome]) -> OutcomeSummary:
    tasks: dict[str, list[tuple[int, bool]]] = {}
    for o in outcomes:
        tasks.setdefault(o.task_id, []).append((o.run, o.passed))
    return OutcomeSummary(
        runs=rate_over_tasks(outcomes),
        should_succeed=rate_over_tasks([o for o in outcomes if o.should_succeed]),
        should_refuse=rate_over_tasks([o for o in outcomes if not o.should_succeed]),
        repeated=repeated_runs(tasks),
    )


def rate_over_tasks(outcomes: Iterable[Outcome]) -> RateInterval:
    """The pass rate of ``outcomes`` with each task's (passed, runs): its interval is clustered by
    task when a task has several runs."""
    per_task: dict[str, list[int]] = {}
    for o in outcomes:
        counts = per_task.setdefault(o.task_id, [0, 0])
        counts[0] += o.passed
        counts[1] += 1
    return RateInterval.of_tasks([(p, n) for p, n in per_task.values()])


# ---- breakdowns ----------------------------------------------------------------------------------
def breakdown(outcomes: Sequence[Outcome], by: str) -> dict[str, Any]:
    """One breakdown of ``BREAKDOWNS``:

    - ``goal``: pass rate (with interval) per goal;
    - ``judgement``: failed runs per judgement, as a share of the failed runs (a run can fail several);
    - ``constraint``: over what failed the procedures (the constraint each failing call left
      unverified, an invalid call, a violated constraint), the share of each kind and of each
      nesting depth (``none`` for what is not a constraint of the rule, or not classified).
    """
    if by == "goal":
        goals: dict[str, list[Outcome]] = {}
        for o in outcomes:
            goals.setdefault(o.goal, []).append(o)
        return {g: rate_over_tasks(of_goal).as_dict() for g, of_goal in sorted(goals.items())}
    if by == "judgement":
        failed = [o for o in outcomes if not o.passed]
        counts = Counter(j for o in failed for j in o.failed)
        return {
            "failed_runs": len(failed),
            "judgements": {j: RateInterval(counts[j], len(failed)).as_dict() for j in JUDGEMENT_NAMES},
        }
    if by == "constraint":
        # A procedure failure the evaluator did not attribute to a constraint is counted as one
        # unclassified item (``Outcome.findings``), so that no failure is lost.
        items = [u for o in outcomes for u in o.findings]
        procedure_failures = sum("procedure" in o.failed for o in outcomes)
        kinds = Counter(u.kind for u in items)
        depths = Counter("none" if u.depth is None else str(u.depth) for u in items)
        return {
            "procedure_failures": procedure_failures,
            "findings": len(items),
            "by_kind": {k: RateInterval(n, len(items)).as_dict() for k, n in sorted(kinds.items())},
            "by_depth": {d: RateInterval(n, len(items)).as_dict() for d, n in sorted(depths.items())},
        }
    raise ValueError(f"unknown breakdown {by!r}; choose {', '.join(BREAKDOWNS)}")


# ---- tokens and latency --------------------------------------------------------------------------
def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100) by linear interpolation between closest ranks."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True, slots=True)
class UsageSummary:
    """Tokens (agent and user apart) and latency over the live episodes of one configuration."""

    episodes: int
    agent_prompt_tokens: int
    agent_completion_tokens: int
    user_prompt_tokens: int
    user_completion_tokens: int
    latency_mean_s: float | None
    latency_p50_s: float | None
    latency_p95_s: float | None
    cost_usd: float | None = None  # None: no price known for the model

    @property
    def cost_per_episode_usd(self) -> float | None:
        return None if self.cost_usd is None or not self.episodes else self.cost_usd / self.episodes

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "episodes": self.episodes,
            "agent_tokens": {"prompt": self.agent_prompt_tokens, "completion": self.agent_completion_tokens},
            "user_tokens": {"prompt": self.user_prompt_tokens, "completion": self.user_completion_tokens},
            "latency_s": {"mean": self.latency_mean_s, "p50": self.latency_p50_s, "p95": self.latency_p95_s},
        }
        if self.cost_usd is not None:
            out["cost_usd"] = self.cost_usd
            out["cost_usd_per_episode"] = self.cost_per_episode_usd
        return out


def summarize_usage(
    outcomes: Sequence[Outcome], prices: Mapping[str, tuple[float, float]] | None = None
) -> UsageSummary | None:
    """Tokens and latency of the outcomes that carry usage (live runs); None when none does.

    ``prices[model] = (USD per million input tokens, USD per million output tokens)`` gives the
    agent's cost when the configuration's model is priced; never a guessed price.
    """
    live = [o for o in outcomes if o.usage is not None]
    if not live:
        return None
    usages = [o.usage for o in live if o.usage is not None]
    latencies = [u.latency_s for u in usages if u.latency_s is not None]
    prompt = sum(u.agent_prompt_tokens for u in usages)
    completion = sum(u.agent_completion_tokens for u in usages)
    summary = UsageSummary(
        episodes=len(usages),
        agent_prompt_tokens=prompt,
        agent_completion_tokens=completion,
        user_prompt_tokens=sum(u.user_prompt_tokens for u in usages),
        user_completion_tokens=sum(u.user_completion_tokens for u in usages),
        latency_mean_s=sum(latencies) / len(latencies) if latencies else None,
        latency_p50_s=percentile(latencies, 50),
        latency_p95_s=percentile(latencies, 95),
    )
    return with_cost(summary, live[0].configuration.model, prices)


def with_cost(
    usage: UsageSummary, model: str | None, prices: Mapping[str, tuple[float, float]] | None
) -> UsageSummary:
    """``usage`` with the agent's cost when ``prices`` names ``model`` (else unchanged)."""
    if prices is None or model is None or model not in prices:
        return usage
    per_input, per_output = prices[model]
    cost = (usage.agent_prompt_tokens * per_input + usage.agent_completion_tokens * per_output) / 1_000_000
    return replace(usage, cost_usd=cost)
