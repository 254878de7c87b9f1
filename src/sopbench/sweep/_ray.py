"""``--executor ray``: episodes as Ray tasks anywhere in a cluster; the driver alone writes each store.

A worker sends each finished episode's row back; the driver stores it in one transaction, as on one
machine. A task whose worker (or node) dies is run again elsewhere by Ray (``max_retries``); an
episode already stored is never played again, since it is stored only once its row is back.
Concurrency per configuration (``concurrency``) and per endpoint holds over the whole cluster
because only the driver hands out episodes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sopbench.runner import Episode, EpisodePlayer, RunConfig, play_row, select_tasks
from sopbench.tasks import Task

# Runs again after a worker or node dies (each attempt plays the episode from its start, with its seed).
TASK_RETRIES = 5


class RayUnavailable(RuntimeError):
    """The ``ray`` extra is not installed, or the cluster cannot be reached."""


_TASKS: dict[str, dict[str, Task]] = {}  # per worker process: the configuration's tasks by id


def _task(config: RunConfig, task_id: str) -> Task:
    """The task, read on the worker (tasks are not sent: their constraint trees are immutable objects
    that pickle does not rebuild, and a task file or the generated set is readable on every node)."""
    key = config.model_dump_json(include={"tasks", "domains", "limit"})
    if key not in _TASKS:
        _TASKS[key] = {i: t for t, i in select_tasks(config)}
    return _TASKS[key][task_id]


def _play_here(config: RunConfig, task_id: str, run: int, seed: int, attempts: int) -> dict[str, Any]:
    """On a Ray worker: play one episode and return its row."""
    episode = Episode(_task(config, task_id), task_id, run, seed)
    return asyncio.run(play_row(config, episode, attempts))


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
                    _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False,
                    configure_logging=False,
                )
            else:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise RayUnavailable(f"--address {address}: cannot join the Ray cluster: {exc}") from None
    remote = ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=False)(_play_here)

    async def player(config: RunConfig, episode: Episode, attempts: int) -> dict[str, Any]:
        return await asyncio.wrap_future(remote.remote(config, episode.task_id, episode.run, episode.seed, attempts).future())

    try:
        yield player
    finally:
        if started:
            ray.shutdown()
