"""Confidence intervals on rates: Wilson's score interval, and the balanced score's interval.

Every interval here is a 95% interval (``Z95``) unless a caller asks for another ``z``.

The unit of an interval is the task. With one run per task that is Wilson's interval over the
runs, as always. With K >= 2 runs of a task the runs are not independent samples (a deterministic
agent repeats itself), so the interval is clustered by task: Wilson's interval taken with the
effective number of tasks ``p(1-p) / V``, where ``V`` is the cluster-robust (sandwich) variance of
the pooled rate over the tasks' (passed, runs) counts (``effective_tasks``). A deterministic agent
run K times thus gets exactly the interval of the same agent run once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

__all__ = [
    "Z95",
    "RateInterval",
    "balanced_interval",
    "clustered",
    "effective_tasks",
    "task_interval",
    "wilson_interval",
]

Z95 = 1.959963984540054  # the two-sided 95% quantile of the standard normal

Interval = tuple[float, float]


def wilson_interval(passed: int, total: int, z: float = Z95) -> Interval | None:
    """Wilson's score interval for ``passed`` successes in ``total`` trials (None when ``total`` is 0).

    Unlike the normal ("Wald") interval it stays inside [0, 1] and does not collapse to a point at
    0% or 100%, which matters for the small per-domain samples of the benchmark.
    """
    if total < 0 or not 0 <= passed <= total:
        raise ValueError(f"need 0 <= passed <= total, got {passed}/{total}")
    if total == 0:
        return None
    return _wilson(passed, total, total, z)


def _wilson(passed: int, total: int, n: float, z: float) -> Interval:
    """Wilson's interval of the rate ``passed / total`` taken as if over ``n`` independent trials."""
    p = passed / total
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # At 0% and 100% the bound is exactly 0 or 1; rounding must not move it.
    low = 0.0 if passed == 0 else max(0.0, centre - half)
    high = 1.0 if passed == total else min(1.0, centre + half)
    return (low, high)


PerTask = Sequence[tuple[int, int]]  # (passed, runs) of each task


def clustered(per_task: PerTask) -> bool:
    """Whether some task has several runs (then an interval is clustered by task)."""
    return any(runs > 1 for _, runs in per_task)


def effective_tasks(per_task: PerTask) -> float:
    """The number of independent tasks the runs are worth: ``p(1-p) / V``, with ``V`` the
    cluster-robust variance of the pooled rate ``p = sum(passed) / sum(runs)``,
    ``V = sum((passed_i - p runs_i)^2) / (sum runs)^2``.

    Computed exactly (fractions), so that K identical runs of each of n tasks give exactly n. When
    ``V`` is 0 (a rate of 0 or 1, or every task at the pooled rate) it is the number of tasks; it is
    never more than the number of runs.
    """
    total = sum(runs for _, runs in per_task)
    passed = sum(p for p, _ in per_task)
    if total == 0:
        return 0.0
    p = Fraction(passed, total)
    variance = sum((Fraction(c) - p * n) ** 2 for c, n in per_task) / Fraction(total) ** 2
    tasks = sum(1 for _, runs in per_task if runs)
    if variance == 0 or p in (0, 1):
        return float(min(tasks, total)) if p in (0, 1) else float(total)
    return float(min(p * (1 - p) / variance, Fraction(total)))


def task_interval(per_task: PerTask, z: float = Z95) -> Interval | None:
    """The 95% interval of the pooled rate of tasks given as (passed, runs): Wilson's interval over
    the runs when no task has several, else Wilson's interval with ``effective_tasks`` (clustered by
    task). None when there is no run."""
    passed = sum(p for p, _ in per_task)
    total = sum(n for _, n in per_task)
    if not clustered(per_task):
        return wilson_interval(passed, total, z)
    if not 0 <= passed <= total:
        raise ValueError(f"need 0 <= passed <= total, got {passed}/{total}")
    return _wilson(passed, total, effective_tasks(per_task), z)


def balanced_interval(
    succeed: tuple[int, int] | RateInterval, refuse: tuple[int, int] | RateInterval, z: float = Z95
) -> Interval | None:
    """Interval of the balanced score, the mean of two independent rates (must succeed, must refuse).

    Analytic, by Newcombe's MOVER method: each rate's Wilson bounds give its distance to the lower
    and upper limit, and the distances of the two rates add in quadrature (halved, for the mean).
    With only one kind of task the balanced score is that rate and so is its interval.
    ``succeed`` and ``refuse`` are (passed, total) pairs, or rates (whose intervals are clustered
    by task when they hold several runs of a task).
    """
    rates = [r if isinstance(r, RateInterval) else RateInterval(*r) for r in (succeed, refuse)]
    parts = [(r.passed / r.total, r.interval(z)) for r in rates if r.total]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0][1]
    (p1, (l1, u1)), (p2, (l2, u2)) = parts  # type: ignore[misc]
    centre = (p1 + p2) / 2
    down = math.sqrt((p1 - l1) ** 2 + (p2 - l2) ** 2) / 2
    up = math.sqrt((u1 - p1) ** 2 + (u2 - p2) ** 2) / 2
    return (max(0.0, centre - down), min(1.0, centre + up))


@dataclass(frozen=True, slots=True)
class RateInterval:
    """A rate with its count and its 95% interval: what every verb prints for a rate.

    ``per_task`` holds each task's (passed, runs) when known: with several runs of a task the
    interval is clustered by task (``task_interval``), else it is Wilson's over the runs.
    """

    passed: int
    total: int
    per_task: tuple[tuple[int, int], ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def of_tasks(cls, per_task: PerTask) -> RateInterval:
        counts = tuple((int(p), int(n)) for p, n in per_task if n)
        return cls(sum(p for p, _ in counts), sum(n for _, n in counts), counts)

    @property
    def clustered(self) -> bool:
        return clustered(self.per_task)

    @property
    def method(self) -> str:
        return "wilson, clustered by task" if self.clustered else "wilson"

    def interval(self, z: float = Z95) -> Interval | None:
        if self.clustered:
            return task_interval(self.per_task, z)
        return wilson_interval(self.passed, self.total, z)

    @property
    def rate(self) -> float | None:
        return self.passed / self.total if self.total else None

    @property
    def ci95(self) -> Interval | None:
        return self.interval()

    def as_dict(self) -> dict[str, Any]:
        ci = self.ci95
        out: dict[str, Any] = {
            "passed": self.passed,
            "total": self.total,
            "rate": self.rate,
            "ci95": None if ci is None else [ci[0], ci[1]],
        }
        if self.clustered:
            out["ci95_method"] = self.method
            out["tasks"] = len(self.per_task)
        return out
