"""Confidence intervals on rates: Wilson's score interval, and the balanced score's interval.

Every interval here is a 95% interval (``Z95``) unless a caller asks for another ``z``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["Z95", "RateInterval", "balanced_interval", "wilson_interval"]

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
    p = passed / total
    z2 = z * z
    centre = (p + z2 / (2 * total)) / (1 + z2 / total)
    half = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total)) / (1 + z2 / total)
    # At 0% and 100% the bound is exactly 0 or 1; rounding must not move it.
    low = 0.0 if passed == 0 else max(0.0, centre - half)
    high = 1.0 if passed == total else min(1.0, centre + half)
    return (low, high)


def balanced_interval(
    succeed: tuple[int, int], refuse: tuple[int, int], z: float = Z95
) -> Interval | None:
    """Interval of the balanced score, the mean of two independent rates (must succeed, must refuse).

    Analytic, by Newcombe's MOVER method: each rate's Wilson bounds give its distance to the lower
    and upper limit, and the distances of the two rates add in quadrature (halved, for the mean).
    With only one kind of task the balanced score is that rate and so is its interval.
    ``succeed`` and ``refuse`` are (passed, total) pairs.
    """
    parts = [(p / n, wilson_interval(p, n, z)) for p, n in (succeed, refuse) if n]
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
    """A rate with its count and its 95% Wilson interval: what every verb prints for a rate."""

    passed: int
    total: int

    @property
    def rate(self) -> float | None:
        return self.passed / self.total if self.total else None

    @property
    def ci95(self) -> Interval | None:
        return wilson_interval(self.passed, self.total)

    def as_dict(self) -> dict[str, Any]:
        ci = self.ci95
        return {
            "passed": self.passed,
            "total": self.total,
            "rate": self.rate,
            "ci95": None if ci is None else [ci[0], ci[1]],
        }
