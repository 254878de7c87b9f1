"""Figures over many scores: pass rates per domain and pooled, with the published checks' rates."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sopbench.statistics import RateInterval, RepeatedRuns, balanced_interval, repeated_runs
from sopbench.traces import (
    PUBLISHED_CHECKS,
)

from ._api import RunScore

ALL_DOMAINS = "all"
JUDGEMENTS = ("database", "permission", "procedure")


# A rate with its count and 95% Wilson interval (``as_dict`` gives passed, total, rate, ci95).
Rate = RateInterval

# Published checks a correct refusal is not expected to pass: it calls no goal, so counting it as a
# failure of ``action_successfully_called`` would count every correct refusal.
_ONLY_WHEN_SHOULD_SUCCEED = frozenset({"action_successfully_called"})


@dataclass
class DomainSummary:
    """Runs of one domain (or of all, ``domain == "all"``)."""

    domain: str
    runs: int = 0
    passed: int = 0
    failures: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys((*JUDGEMENTS, *PUBLISHED_CHECKS[:-1]), 0)
    )
    should_succeed: list[int] = field(default_factory=lambda: [0, 0])  # passed, runs
    should_refuse: list[int] = field(default_factory=lambda: [0, 0])
    justified: list[int] = field(default_factory=lambda: [0, 0])  # justified refusals, refusal runs judged
    task_runs: dict[str, list[tuple[int, bool]]] = field(default_factory=dict, repr=False)
    # (task, must succeed) -> [passed, runs]: the split rates' clusters. Keyed by both, because one
    # task id may be expected to succeed in one source and to be refused in another (pooled files),
    # and a split rate's clusters must hold exactly the runs that rate counts.
    task_split: dict[tuple[str, bool], list[int]] = field(default_factory=dict, repr=False)
    _repeated: RepeatedRuns | None = field(default=None, repr=False, compare=False)

    def add(self, score: RunScore) -> None:
        self._repeated = None
        self.runs += 1
        self.passed += score.passed
        self.task_runs.setdefault(score.task_key, []).append((score.run, score.passed))
        split = self.task_split.setdefault((score.task_key, score.should_succeed), [0, 0])
        split[0] += score.passed
        split[1] += 1
        for key in self.failures:
            if not score.verdict[key] and (score.should_succeed or key not in _ONLY_WHEN_SHOULD_SUCCEED):
                self.failures[key] += 1
        bucket = self.should_succeed if score.should_succeed else self.should_refuse
        bucket[0] += score.passed
        bucket[1] += 1
        if score.justified_refusal is not None:
            self.justified[0] += score.justified_refusal
            self.justified[1] += 1

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.runs if self.runs else None

    def per_task(self, should_succeed: bool | None = None) -> list[tuple[int, int]]:
        """(passed, runs) of each task (of those that must succeed, or must be refused): what a
        rate's interval is clustered by when a task has several runs."""
        if should_succeed is None:
            return [(sum(passed for _, passed in runs), len(runs)) for runs in self.task_runs.values()]
        return [
            (passed, runs)
            for (_, succeeds), (passed, runs) in self.task_split.items()
            if succeeds == should_succeed
        ]

    @property
    def rate(self) -> Rate:
        """The pass rate over every run, its interval clustered by task (K >= 2 runs per task)."""
        return Rate(self.passed, self.runs, tuple(self.per_task()))

    @property
    def succeed_rate(self) -> Rate:
        passed, total = self.should_succeed
        return Rate(passed, total, tuple(self.per_task(True)))

    @property
    def refuse_rate(self) -> Rate:
        passed, total = self.should_refuse
        return Rate(passed, total, tuple(self.per_task(False)))

    @property
    def balanced(self) -> float | None:
        """Mean of the should-succeed and should-refuse pass rates (50% for an agent that refuses all)."""
        rates = [r.rate for r in (self.succeed_rate, self.refuse_rate) if r.rate is not None]
        return sum(rates) / len(rates) if rates else None

    @property
    def pass_rate_ci95(self) -> tuple[float, float] | None:
        return self.rate.ci95

    @property
    def balanced_ci95(self) -> tuple[float, float] | None:
        return balanced_interval(self.succeed_rate, self.refuse_rate)

    @property
    def repeated(self) -> RepeatedRuns:
        """pass^k, pass@k and the published first-k pass@k over the tasks' runs (kept until the
        next ``add``)."""
        if self._repeated is None:
            self._repeated = repeated_runs(self.task_runs)
        return self._repeated

    @property
    def justified_refusal_rate(self) -> Rate | None:
        passed, total = self.justified
        return Rate(passed, total) if total else None

    @property
    def pass_rate_with_justified_refusals(self) -> float | None:
        """Pass rate when a correct refusal must also be justified (None unless it was judged)."""
        if not self.justified[1] or not self.runs:
            return None
        return (self.should_succeed[0] + self.justified[0]) / self.runs

    def as_dict(self) -> dict[str, Any]:
        justified = self.justified_refusal_rate
        out = {
            "domain": self.domain,
            "runs": self.runs,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "pass_rate_ci95": listed_interval(self.pass_rate_ci95),
            "ci95_method": self.rate.method,
            "failures": dict(self.failures),
            "should_succeed": self.succeed_rate.as_dict(),
            "should_refuse": self.refuse_rate.as_dict(),
            "balanced": self.balanced,
            "balanced_ci95": listed_interval(self.balanced_ci95),
            "justified_refusal": None if justified is None else justified.as_dict(),
            "pass_rate_with_justified_refusals": self.pass_rate_with_justified_refusals,
        }
        repeated = self.repeated
        if repeated.max_runs >= 2:
            out.update(repeated.as_dict())
        return out


def listed_interval(interval: tuple[float, float] | None) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


@dataclass
class Summary:
    """Per-domain summaries and the pooled one (``domains["all"]``)."""

    domains: dict[str, DomainSummary] = field(default_factory=dict)

    @property
    def overall(self) -> DomainSummary:
        return self.domains.get(ALL_DOMAINS, DomainSummary(ALL_DOMAINS))

    def as_dict(self) -> dict[str, Any]:
        return {name: summary.as_dict() for name, summary in self.domains.items()}


def summarize(scores: Iterable[RunScore]) -> Summary:
    """Runs, pass rate, failures by judgement, rates split by expected outcome, balanced score."""
    per_domain: dict[str, DomainSummary] = {}
    pooled = DomainSummary(ALL_DOMAINS)
    for score in scores:
        per_domain.setdefault(score.domain, DomainSummary(score.domain)).add(score)
        pooled.add(score)
    ordered = {name: per_domain[name] for name in sorted(per_domain)}
    ordered[ALL_DOMAINS] = pooled
    return Summary(ordered)
