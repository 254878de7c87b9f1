"""Repeated runs of one task: pass^k (every one of k runs passes) and pass@k (at least one does).

The unbiased estimators over n runs with c successes (Chen et al. 2021 for pass@k; tau-bench's
pass^k): pass@k = 1 - C(n-c, k) / C(n, k), pass^k = C(c, k) / C(n, k), each the probability for
k runs drawn without replacement from the n. ``pass_at_k_first`` is the published SOPBench
reading: some success among the *first* k runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Any

__all__ = ["RepeatedRuns", "pass_at_k", "pass_hat_k", "repeated_runs"]


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k runs drawn from n (c of them passed) passed."""
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all k runs drawn from n (c of them passed) passed (pass^k)."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


@dataclass(frozen=True, slots=True)
class RepeatedRuns:
    """pass^k, pass@k and the published first-k pass@k for k = 1..K, averaged over tasks.

    Each k averages over the tasks with at least k runs; ``tasks_with_k[k]`` says how many.
    ``mean_pass_rate`` is the mean over tasks of each task's own pass rate (every run counted).
    """

    tasks: int
    max_runs: int
    mean_pass_rate: float | None
    pass_hat_k: Mapping[int, float] = field(default_factory=dict)
    pass_at_k: Mapping[int, float] = field(default_factory=dict)
    pass_at_k_first: Mapping[int, float] = field(default_factory=dict)
    tasks_with_k: Mapping[int, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        def keyed(values: Mapping[int, float | int]) -> dict[str, float | int]:
            return {str(k): v for k, v in values.items()}

        return {
            "tasks": self.tasks,
            "max_runs": self.max_runs,
            "mean_pass_rate": self.mean_pass_rate,
            "pass_hat_k": keyed(self.pass_hat_k),
            "pass_at_k": keyed(self.pass_at_k),
            "pass_at_k_first": keyed(self.pass_at_k_first),
            "tasks_with_k": keyed(self.tasks_with_k),
        }


def repeated_runs(runs_by_task: Mapping[Any, Sequence[tuple[int, bool]]] | Iterable[Any]) -> RepeatedRuns:
    """The repeated-run statistics of tasks given as ``{task: [(run index, passed), ...]}``.

    Runs are put in run-index order for the first-k reading; a task's runs need not be numbered
    from 0 (a resumed run may miss one).
    """
    tasks = dict(runs_by_task) if isinstance(runs_by_task, Mapping) else dict(runs_by_task)
    ordered = [[passed for _run, passed in sorted(runs)] for runs in tasks.values() if runs]
    max_runs = max((len(r) for r in ordered), default=0)
    sums_hat: dict[int, float] = dict.fromkeys(range(1, max_runs + 1), 0.0)
    sums_at = dict(sums_hat)
    sums_first = dict(sums_hat)
    counts = dict.fromkeys(range(1, max_runs + 1), 0)
    for passes in ordered:
        n, c = len(passes), sum(passes)
        for k in range(1, n + 1):
            counts[k] += 1
            sums_hat[k] += pass_hat_k(n, c, k)
            sums_at[k] += pass_at_k(n, c, k)
            sums_first[k] += any(passes[:k])
    mean = sum(sum(p) / len(p) for p in ordered) / len(ordered) if ordered else None
    return RepeatedRuns(
        tasks=len(ordered),
        max_runs=max_runs,
        mean_pass_rate=mean,
        pass_hat_k={k: sums_hat[k] / counts[k] for k in counts if counts[k]},
        pass_at_k={k: sums_at[k] / counts[k] for k in counts if counts[k]},
        pass_at_k_first={k: sums_first[k] / counts[k] for k in counts if counts[k]},
        tasks_with_k={k: counts[k] for k in counts if counts[k]},
    )
