"""An episode bounded by a timeout, whatever the agent does.

Agents and users of this package run on the caller's event loop (they never block it); any other
(a plugin) runs in a thread of its own that the timeout can abandon. A timed-out episode keeps what
it had: the transcript so far, its usage, and the request it was waiting on.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Coroutine
from typing import Any

from sopbench.agents import Agent, EpisodeSetup, User

from ._episode import EpisodeResult, Limits, count_requests, mark_infra_error, run_episode


async def play_episode(
    setup: EpisodeSetup,
    agent: Agent,
    user: User,
    limits: Limits,
    timeout: float | None,
    *,
    result: EpisodeResult | None = None,
) -> EpisodeResult:
    """``run_episode`` bounded by ``timeout`` seconds (this module's docstring), into ``result`` (a
    fresh one by default) as it goes. A timed-out episode is an ``infra_error`` that keeps its
    transcript, usage and the request it was waiting on."""
    started = time.perf_counter()
    if result is None:
        result = EpisodeResult(status="completed", end="max_turns")
    episode = run_episode(setup, agent, user, limits, result=result)
    try:
        if _cooperative(agent) and _cooperative(user):
            return await asyncio.wait_for(episode, timeout)
        return await asyncio.wait_for(_in_own_thread(episode), timeout)
    except TimeoutError:
        waiting = _waiting_on(agent) or _waiting_on(user)
        partial = result.snapshot()
        count_requests(partial, agent, user)
        reason = f"the episode timed out after {timeout:g} s"
        if waiting is not None:
            reason += (
                f" while waiting {time.monotonic() - waiting['sent']:.0f} s for a reply from "
                f"{waiting['url']} (model {waiting['model']}, request of {waiting['messages']} messages, "
                f"attempt {waiting['attempt']})"
            )
        mark_infra_error(partial, reason)
        partial.latency_s = time.perf_counter() - started
        return partial


def _cooperative(side: object) -> bool:
    """Agents and users of this package never block the event loop; plugins may."""
    return type(side).__module__.startswith("sopbench.")


async def _in_own_thread(coroutine: Coroutine[object, object, EpisodeResult]) -> EpisodeResult:
    """Run ``coroutine`` on an event loop in a daemon thread: a timeout can abandon it even when
    it blocks (a blocked plugin keeps its thread until it returns or the process ends)."""
    loop = asyncio.get_running_loop()
    outcome: asyncio.Future[EpisodeResult] = loop.create_future()

    def deliver(setter: str, value: object) -> None:
        if not outcome.done():
            getattr(outcome, setter)(value)

    def target() -> None:
        value: EpisodeResult | BaseException
        try:
            value = asyncio.run(coroutine)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting loop
            setter, value = "set_exception", exc
        else:
            setter = "set_result"
        with contextlib.suppress(RuntimeError):  # the waiting loop is gone: nobody wants it any more
            loop.call_soon_threadsafe(deliver, setter, value)

    threading.Thread(target=target, name="sopbench-episode", daemon=True).start()
    return await outcome


def _waiting_on(side: object) -> dict[str, Any] | None:
    waiting = getattr(getattr(side, "endpoint", None), "waiting_on", None)
    return waiting if isinstance(waiting, dict) else None
