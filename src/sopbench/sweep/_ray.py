"""``--executor ray``: episodes played by Ray actors anywhere in a cluster; the driver alone writes
each store.

A worker sends each finished episode's row back; the driver stores it in one transaction, as on one
machine. A worker (or node) that dies is restarted by Ray and its unanswered episodes are sent again
(``max_task_retries``); an episode already stored is never played again, since it is stored only
once its row is back.
Concurrency per configuration (``concurrency``) and per endpoint holds over the whole cluster
because only the driver hands out episodes.

With ``cache``, the driver hands each episode the replies recorded for it (a ``CacheSession``); the
worker answers from them (or, in ``read-write``, asks the endpoint) and sends what it recorded back
with the row: only the driver writes the cache file, which no worker needs to reach.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sopbench.agents.openai import CacheSession
from sopbench.runner import RunSpec
from sopbench.runner.episode import Episode, EpisodePlayer, PlayedEpisode, play_row, select_tasks
from sopbench.tasks import Task

# Runs again after a worker or node dies (each attempt plays the episode from its start, with its seed).
TASK_RETRIES = 5
WORKER_CPUS = 0.5


class RayUnavailable(RuntimeError):
    """The ``ray`` extra is not installed, or the cluster cannot be reached."""


_TASKS: dict[str, dict[str, Task]] = {}  # per worker process: the configuration's tasks by id


def _task(config: RunSpec, task_id: str) -> Task:
    """The task, read on the worker (tasks are not sent: their constraint trees are immutable objects
    that pickle does not rebuild, and a task file or the generated set is readable on every node)."""
    key = config.model_dump_json(include={"tasks", "domains", "limit"})
    if key not in _TASKS:
        _TASKS[key] = {i: t for t, i in select_tasks(config)}
    return _TASKS[key][task_id]


class EpisodeWorker:
    """A Ray actor: plays episodes (concurrently, on its event loop) and returns their rows."""

    def warm(self) -> None:
        """Imports what the first episode needs (while the driver claims its run folders)."""
        import openai  # noqa: F401 - the endpoint client imports it on first use

        from sopbench.agents import agent_factory

        agent_factory("openai")

    async def play(
        self,
        config: RunSpec,
        task_id: str,
        run: int,
        seed: int,
        attempts: int,
        cache: CacheSession | None = None,
    ) -> PlayedEpisode:
        return await play_row(config, Episode(_task(config, task_id), task_id, run, seed), attempts, cache)


@contextmanager
def ray_player(address: str | None) -> Iterator[EpisodePlayer]:
    """A player that sends each episode to the Ray cluster at ``address`` (``auto``: the cluster of
    this machine; None: a new local instance on 127.0.0.1, shut down at the end)."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--executor ray needs the ray extra: pip install 'sopbench[ray]'") from None
    started = not ray.is_initialized()
    if started:
        try:
            if address is None:
                ray.init(
                    _node_ip_address="127.0.0.1",
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                )
            else:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError, ray.exceptions.RayError) as exc:
            # One line: an authentication error's text runs over many (Ray 2.x: the cluster's token
            # is read from RAY_AUTH_TOKEN or ~/.ray/auth_token).
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RayUnavailable(f"--address {address}: cannot join the Ray cluster: {first}") from None
    # One worker per CPU of the cluster, spread over the nodes, each an async actor playing many
    # episodes at once on its event loop (episodes wait on endpoints, not on the CPU). A dead worker
    # is restarted (on another node when its node is gone) and the calls it had not answered are
    # sent again. Each takes half a CPU, so that a node's workers find room elsewhere when it dies.
    actor = ray.remote(
        num_cpus=WORKER_CPUS, scheduling_strategy="SPREAD", max_restarts=-1, max_task_retries=TASK_RETRIES
    )(EpisodeWorker)
    workers: list[Any] = [actor.remote() for _ in range(max(1, int(ray.cluster_resources().get("CPU", 1))))]
    for worker in workers:
        worker.warm.remote()
    outstanding = [0] * len(workers)

    async def player(
        config: RunSpec, episode: Episode, attempts: int, cache: CacheSession | None = None
    ) -> PlayedEpisode:
        chosen = min(range(len(workers)), key=outstanding.__getitem__)
        outstanding[chosen] += 1
        try:
            call = workers[chosen].play.remote(
                config, episode.task_id, episode.run, episode.seed, attempts, cache
            )
            played: PlayedEpisode = await asyncio.wrap_future(call.future())
            return played
        finally:
            outstanding[chosen] -= 1

    try:
        yield player
    finally:
        if started:
            ray.shutdown()
