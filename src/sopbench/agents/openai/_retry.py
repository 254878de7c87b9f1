"""How long to wait before a request is sent again."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded exponential backoff with full jitter: retry ``n`` waits ``uniform(0, min(cap, base*2**n))``.

    A ``Retry-After`` the server sends is honoured up to ``max_backoff``.
    """

    max_retries: int = 5
    initial_backoff: float = 1.0
    max_backoff: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.initial_backoff < 0 or self.max_backoff < 0:
            raise ValueError("retry settings must not be negative")

    def delay(
        self, retry: int, rng: random.Random, retry_after: float | None = None, *, full: bool = False
    ) -> float:
        """The wait before retry ``retry``; ``full``: the whole backoff step, no jitter towards zero
        (after a timeout, when the server may still be busy with the abandoned request)."""
        step = min(self.max_backoff, self.initial_backoff * 2.0**retry)
        if retry_after is not None and math.isfinite(retry_after):
            return min(max(retry_after, 0.0), self.max_backoff)
        return step if full else rng.uniform(0.0, step)


DEFAULT_RETRY = RetryPolicy()
