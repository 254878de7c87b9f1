"""The HTTP side of an endpoint: shared clients, connection failures, retryable errors, Retry-After."""

from __future__ import annotations

import asyncio
import math
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import openai


def aiohttp_transport(openai: ModuleType) -> Any:  # the client type of the openai package (its own httpx)
    """The client's aiohttp transport (the ``openai[aiohttp]`` extra, which the client documents for
    concurrency): with 64 episodes at once on a small machine the event loop's CPU is the limit, and
    a whole run needs about a fifth less CPU with it. ``None`` (the default transport) without it."""
    factory = getattr(openai, "DefaultAioHttpClient", None)
    if factory is None:
        return None
    try:
        return factory()
    except RuntimeError:  # the extra is missing
        return None


def connection_failure(exc: BaseException) -> str | None:
    """What broke the connection behind ``exc`` (a refusal, a reset, a server that closed it
    mid-reply), or None when the cause is a timeout."""
    seen: BaseException | None = exc.__cause__ or exc.__context__
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, TimeoutError | asyncio.TimeoutError) or "timeout" in type(seen).__name__.lower():
            seen = seen.__cause__ or seen.__context__
            continue
        if isinstance(seen, OSError) or is_transport_error(seen):
            return f"{type(seen).__name__}: {seen}" if str(seen) else type(seen).__name__
        seen = seen.__cause__ or seen.__context__
    return None


_HTTP_LIBRARIES = ("aiohttp", "httpx", "httpx2", "httpcore", "h11")


def is_transport_error(exc: BaseException) -> bool:
    """An error of the HTTP libraries under the client (a reply whose head could not be parsed: a
    60 KB header, a broken status line) that the client let through unmapped: the endpoint's
    failure, not the agent's."""
    return type(exc).__module__.split(".")[0] in _HTTP_LIBRARIES


class Retryable(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TimedOut(Retryable):
    """No complete reply within the request timeout: retried, and counted."""


def error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            parts = [str(error[key]) for key in ("message", "code", "type") if error.get(key)]
            if parts:
                return "; ".join(dict.fromkeys(parts))
        elif isinstance(error, str):
            return error
    return exc.message or f"HTTP {exc.status_code}"


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks us to wait, or None when it says nothing usable. Seconds (or
    ``retry-after-ms``) and HTTP dates are read; nan, infinities and negatives are ignored; the
    caller caps the rest at the policy's ``max_backoff``."""
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        value = value.strip()
        try:
            seconds = float(value) * scale
        except ValueError:
            try:
                when = parsedate_to_datetime(value)
            except (TypeError, ValueError, IndexError, OverflowError):
                return None
            if when is None:
                return None
            if when.tzinfo is None:
                return None
            seconds = when.timestamp() - time.time()
        if not math.isfinite(seconds) or seconds < 0:
            return None
        return seconds
    return None


@dataclass
class _Shared:
    client: openai.AsyncOpenAI
    users: int = 0
    closer: asyncio.Task | None = None


class _ClientPool:
    """Shared clients per event loop (an ``httpx`` pool belongs to the loop that opened it).

    A client nobody uses any more is closed after ``linger`` seconds, so that episodes run one
    after another keep their connections (and skip the tens of milliseconds a new client costs);
    when the loop ends first (``asyncio.run`` cancels pending tasks), the cancelled closer closes it.
    """

    linger = 2.0

    def __init__(self) -> None:
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, _Shared]] = (
            weakref.WeakKeyDictionary()
        )

    def acquire(self, key: tuple, make: Callable[[], openai.AsyncOpenAI]) -> openai.AsyncOpenAI:
        shared = self._loops.setdefault(asyncio.get_running_loop(), {})
        entry = shared.get(key)
        if entry is None:
            entry = shared[key] = _Shared(make())
        if entry.closer is not None:
            entry.closer.cancel()
            entry.closer = None
        entry.users += 1
        return entry.client

    async def release(self, key: tuple, client: openai.AsyncOpenAI) -> None:
        shared = self._loops.get(asyncio.get_running_loop(), {})
        entry = shared.get(key)
        if entry is None or entry.client is not client:
            await client.close()
            return
        entry.users -= 1
        if entry.users == 0:
            entry.closer = asyncio.create_task(self._close_idle(shared, key, entry))

    async def _close_idle(self, shared: dict[tuple, _Shared], key: tuple, entry: _Shared) -> None:
        try:
            await asyncio.sleep(self.linger)
        except asyncio.CancelledError:
            if entry.users:  # taken again: keep it open
                return
        if shared.get(key) is entry and entry.users == 0:
            del shared[key]
            await entry.client.close()


CLIENTS = _ClientPool()
