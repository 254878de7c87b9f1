"""Rank groups: rows of a ranking that a paired test over their shared tasks cannot tell apart.

Rows come ranked, best first. A row whose difference from the row above is not significant (the
exact sign test over the tasks both hold, at ``alpha``) shares that row's rank: positions 3, 4 and 5
linked this way are all shown ``3–5``. So that a chain of small steps does not tie rows far apart, a
row joins a group only when it is not significantly different from the group's first row either.
Rows with no task in common are never grouped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._paired import mcnemar_exact

__all__ = ["RANK_ALPHA", "adjacent_p_values", "rank_groups"]

RANK_ALPHA = 0.05

PerTask = Mapping[Any, tuple[int, int]]  # task -> (passed, runs)


def _sign_test_p(above: PerTask, below: PerTask) -> float | None:
    """The exact sign test over the tasks both rows hold (None when they share none)."""
    shared = [task for task in above if task in below]
    if not shared:
        return None
    better = worse = 0
    for task in shared:
        (p_a, n_a), (p_b, n_b) = above[task], below[task]
        # Compare the two pass rates p_a / n_a and p_b / n_b without rounding.
        if p_a * n_b > p_b * n_a:
            better += 1
        elif p_a * n_b < p_b * n_a:
            worse += 1
    return mcnemar_exact(better, worse)


def adjacent_p_values(rows: Sequence[PerTask]) -> list[float | None]:
    """For each row after the first, the p-value of its paired test against the row above."""
    return [_sign_test_p(rows[i - 1], rows[i]) for i in range(1, len(rows))]


def rank_groups(rows: Sequence[PerTask], alpha: float = RANK_ALPHA) -> list[str]:
    """Each row's rank, ``"4"`` or ``"3–5"`` for a group (rows given best first)."""
    if not rows:
        return []
    starts = [0]
    for i, p in enumerate(adjacent_p_values(rows), start=1):
        first = _sign_test_p(rows[starts[-1]], rows[i])
        if p is None or p < alpha or first is None or first < alpha:
            starts.append(i)
    starts.append(len(rows))
    labels: list[str] = []
    for start, end in zip(starts, starts[1:], strict=False):
        label = str(start + 1) if end - start == 1 else f"{start + 1}–{end}"
        labels += [label] * (end - start)
    return labels
