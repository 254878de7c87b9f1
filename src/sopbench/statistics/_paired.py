"""Two agents on the same tasks: an exact sign test over tasks and a paired bootstrap of the difference.

The unit of both is the task. The test counts the tasks on which A's pass rate over its runs is
above B's and those on which it is below, and tests them against 1/2 (exact, two-sided); with one
run per task that is McNemar's exact test of the discordant pairs. The bootstrap resamples tasks
with all their runs. So K identical runs of a task weigh exactly as one.
"""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Any, Literal

__all__ = [
    "DEFAULT_RESAMPLES",
    "SignTest",
    "mcnemar_exact",
    "paired_bootstrap_difference",
    "resampled_differences",
    "sign_test_over_tasks",
]

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
    differences, runs = _task_counts(pairs_by_task)
    return difference_interval(differences, runs, resamples=resamples, seed=seed, level=level)


def _task_counts(pairs_by_task: Mapping[Any, Sequence[tuple[bool, bool]]]) -> tuple[list[int], list[int]]:
    """Each task with pairs: its A passed - B passed over its paired runs, and how many runs."""
    tasks = [p for p in pairs_by_task.values() if p]
    return [sum(a for a, _ in p) - sum(b for _, b in p) for p in tasks], [len(p) for p in tasks]


def difference_interval(
    differences: Sequence[int],
    runs: Sequence[int],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """``paired_bootstrap_difference`` of tasks given as counts: each task's (A passed - B passed)
    over its paired runs, and the number of those runs (at least 1)."""
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    if not differences:
        return None
    diffs, sizes = list(differences), list(runs)
    estimates = _resampled(diffs, sizes, resamples, seed)
    estimates.sort()
    tail = (1 - level) / 2
    low = estimates[int(tail * (resamples - 1))]
    high = estimates[int(round((1 - tail) * (resamples - 1)))]
    return (low, high)


_DRAWS_AT_ONCE = 200_000
# Below this many draws setting numpy's generator up costs more than drawing here (a floor's
# one-resample comparison: ~0.3 ms against ~0.05 ms for 300 tasks)
_DRAWS_HERE = 1_000


def resampled_differences(
    differences: Sequence[int],
    runs: Sequence[int],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    draw: Literal["auto", "numpy", "python"] = "auto",
    draws_at_once: int = _DRAWS_AT_ONCE,
) -> list[float]:
    """The difference of each bootstrap resample, in the order drawn, of the tasks given as
    ``difference_interval`` takes them (its interval is their percentiles).

    ``draw``: "auto" as ``difference_interval`` draws (numpy when it is there and the draws are
    many), "python" with ``random`` alone, "numpy" with numpy (which must be installed), at most
    about ``draws_at_once`` draws at a time. Every way gives the very same list.
    """
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    if not differences:
        return []
    diffs, sizes = list(differences), list(runs)
    if draw == "auto":
        return _resampled(diffs, sizes, resamples, seed)
    if draw == "numpy":
        return _resampled_with_numpy(diffs, sizes, resamples, random.Random(seed), draws_at_once)
    if draw == "python":
        return _resampled_here(diffs, sizes, resamples, random.Random(seed))
    raise ValueError(f"draw must be auto, numpy or python, not {draw!r}")


def _resampled(diffs: list[int], sizes: list[int], resamples: int, seed: int) -> list[float]:
    """The difference of each resample: ``random.Random(seed).choices(range(n), k=n)`` per resample,
    drawn with numpy when it is there (the report's figures bring it) and the draws are many, from
    the same Mersenne Twister state, so the draws, and the interval, are the very same as without
    it; about 10x faster."""
    rng = random.Random(seed)
    if len(diffs) * resamples > _DRAWS_HERE and importlib.util.find_spec("numpy") is not None:
        return _resampled_with_numpy(diffs, sizes, resamples, rng)
    return _resampled_here(diffs, sizes, resamples, rng)


def _resampled_with_numpy(
    diffs: list[int],
    sizes: list[int],
    resamples: int,
    rng: random.Random,
    draws_at_once: int = _DRAWS_AT_ONCE,
) -> list[float]:
    import numpy as np

    n = len(diffs)
    _version, internal, _gauss = rng.getstate()
    state = np.random.RandomState()
    state.set_state(("MT19937", np.array(internal[:-1], dtype=np.uint32), internal[-1], 0, 0.0))
    # Gathered as bytes when they fit (a task's difference is within its runs): the gathers, not the
    # draws, are most of the time; the sums are still taken in int64.
    narrow = min(diffs) >= -128 and max(diffs) <= 127
    by_task = np.asarray(diffs, dtype=np.int8 if narrow else np.int64)
    # With as many runs for every task (one, mostly) a resample's runs are always n times that.
    uniform = min(sizes) == max(sizes)
    runs_by_task = np.asarray(sizes, dtype=np.int64)
    estimates: list[float] = []
    step = max(1, draws_at_once // n)  # resamples drawn at once: a few MB, whatever n
    for start in range(0, resamples, step):
        count = min(step, resamples - start)
        # random() is genrand_res53 in both; choices() picks floor(random() * n), which the cast
        # to integers gives as well (it truncates, and random() * n is never negative)
        draws = state.random_sample(count * n)
        draws *= float(n)
        picks = draws.astype(np.intp).reshape(count, n)
        found = by_task[picks].sum(axis=1, dtype=np.int64)
        runs = np.float64(n * sizes[0]) if uniform else runs_by_task[picks].sum(axis=1).astype(np.float64)
        # int64 sums are exact; each converts to float64 exactly (far below 2**53), so the true
        # division is the correctly rounded quotient Python's int / int gives
        estimates += (found.astype(np.float64) / runs).tolist()
    return estimates


def _resampled_here(diffs: list[int], sizes: list[int], resamples: int, rng: random.Random) -> list[float]:
    n = len(diffs)
    estimates = []
    for _ in range(resamples):
        picks = rng.choices(range(n), k=n)
        estimates.append(sum(diffs[i] for i in picks) / sum(sizes[i] for i in picks))
    return estimates


@dataclass(frozen=True, slots=True)
class SignTest:
    """Tasks on which A did better than B over their paired runs, worse, and tied; the exact p."""

    a_better: int
    b_better: int
    tied: int

    @property
    def tasks(self) -> int:
        return self.a_better + self.b_better + self.tied

    @property
    def p(self) -> float:
        return mcnemar_exact(self.a_better, self.b_better)

    def as_dict(self) -> dict[str, int]:
        return {"paired": self.tasks, "a_better": self.a_better, "b_better": self.b_better, "tied": self.tied}


def sign_test_over_tasks(pairs_by_task: Mapping[Any, Sequence[tuple[bool, bool]]]) -> SignTest:
    """The exact sign test over tasks of (A passed, B passed) pairs grouped by task: a task counts
    for A when A passed more of its paired runs than B, for B when fewer, as a tie otherwise. With
    one run per task this is McNemar's exact test (``mcnemar_exact``)."""
    return sign_test_of_differences(_task_counts(pairs_by_task)[0])


def sign_test_of_differences(differences: Sequence[int]) -> SignTest:
    """``sign_test_over_tasks`` of tasks given as counts: each task's A passed - B passed."""
    a_better = b_better = tied = 0
    for difference in differences:
        if difference > 0:
            a_better += 1
        elif difference < 0:
            b_better += 1
        else:
            tied += 1
    return SignTest(a_better, b_better, tied)
