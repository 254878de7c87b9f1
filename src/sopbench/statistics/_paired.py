"""Two agents on the same tasks: McNemar's exact test and a paired bootstrap of the difference."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from fractions import Fraction
from math import comb
from typing import Any

__all__ = ["DEFAULT_RESAMPLES", "mcnemar_exact", "paired_bootstrap_difference"]

DEFAULT_RESAMPLES = 2000


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: the binomial test of the discordant pairs against 1/2.

    ``a_only``: pairs where only A passed; ``b_only``: where only B passed. No discordant pair: 1.0.
    """
    if a_only < 0 or b_only < 0:
        raise ValueError("discordant counts cannot be negative")
    n = a_only + b_only
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(a_only, b_only) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def paired_bootstrap_difference(
    pairs_by_task: Mapping[Any, Sequence[tuple[bool, bool]]],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile interval of pass rate A minus pass rate B, resampling tasks with replacement.

    ``pairs_by_task[task]`` holds the (A passed, B passed) pairs of the task's paired runs; a task's
    runs are resampled together (they are not independent of each other). Seeded: the same input
    and seed give the same interval. None when there is no pair.
    """
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    tasks = [(sum(a for a, _ in p) - sum(b for _, b in p), len(p)) for p in pairs_by_task.values() if p]
    if not tasks:
        return None
    rng = random.Random(seed)
    n = len(tasks)
    diffs = [d for d, _ in tasks]
    sizes = [s for _, s in tasks]
    estimates = []
    for _ in range(resamples):
        picks = rng.choices(range(n), k=n)
        estimates.append(sum(diffs[i] for i in picks) / sum(sizes[i] for i in picks))
    estimates.sort()
    tail = (1 - level) / 2
    low = estimates[int(tail * (resamples - 1))]
    high = estimates[int(round((1 - tail) * (resamples - 1)))]
    return (low, high)
