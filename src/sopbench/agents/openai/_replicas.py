"""Replicas of one model: which one takes the next request, and which failures take one out.

Each request goes to the replica with the fewest requests outstanding (over every episode of the
process); a replica whose connection fails or that answers with a server error is taken out for
``REPLICA_BACKOFF`` seconds, and the others take its requests.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

from ._transport import Retryable

REPLICA_BACKOFF = 30.0  # seconds a failing replica is left out (the others take its requests)


@dataclass(slots=True)
class ReplicaHealth:
    """One replica's load and state, shared by every endpoint of the process that names its URL."""

    outstanding: int = 0  # requests sent and not yet answered
    out_until: float = 0.0  # time.monotonic() before which it takes no requests (after a failure)


_REPLICAS: dict[str, ReplicaHealth] = {}


def replica_health(url: str) -> ReplicaHealth:
    return _REPLICAS.setdefault(url, ReplicaHealth())


# Per event loop (a semaphore belongs to one), per replica URL: the slots of ``slots`` (``ChatEndpoint``).
_SLOTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str | None, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


def replica_slots(url: str | None, slots: int) -> asyncio.Semaphore:
    """The semaphore of ``url`` on the running loop (created with ``slots`` by its first user)."""
    per_url = _SLOTS.setdefault(asyncio.get_running_loop(), {})
    if url not in per_url:
        per_url[url] = asyncio.Semaphore(slots)
    return per_url[url]


def pick_replica(urls: Sequence[str], now: float) -> str:
    """The replica with the fewest outstanding requests among those in service (list order breaks
    ties); when every replica is out, the one back soonest."""
    healthy = [u for u in urls if replica_health(u).out_until <= now]
    if not healthy:
        return min(urls, key=lambda u: replica_health(u).out_until)
    return min(healthy, key=lambda u: replica_health(u).outstanding)


def replica_fault(failure: Exception) -> bool:
    """A failure of the replica rather than of the request: no connection, a server error, no reply."""
    return isinstance(failure, Retryable) and not failure.reason.startswith("HTTP 429")
