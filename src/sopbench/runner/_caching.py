"""The recorded replies of a run (``--cache``): the cache files its configurations name, opened once
each, and what each episode's session did, counted."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from sopbench.agents.openai import CacheError, CacheSession, ReplyCache

from ._outcome import CacheCounts
from ._spec import RunSpec, RunSpecError


def open_caches(configs: Sequence[RunSpec], stack: ExitStack) -> dict[tuple[Path, str], ReplyCache]:
    """One open cache per file and mode the configurations name; ``RunSpecError`` (one line) for a
    cache that cannot be used, before any run folder is touched."""
    caches: dict[tuple[Path, str], ReplyCache] = {}
    for config in configs:
        if config.cache is None or config.replies == "off":
            continue
        key = (config.cache.resolve(), config.replies)
        if key not in caches:
            try:
                caches[key] = ReplyCache.open(config.cache, config.replies)
            except CacheError as exc:
                raise RunSpecError(str(exc)) from None
            stack.callback(caches[key].close)
    return caches


def count_cache(counts: CacheCounts | None, session: CacheSession, mode: str) -> None:
    """Add what one episode's cache session did to the run's counts."""
    if counts is None:
        return
    counts.hits += session.hits
    counts.misses += session.misses
    counts.recorded += len(session.recorded) if mode == "read-write" else 0
    counts.hit_prompt_tokens += session.hit_usage.prompt_tokens
    counts.hit_completion_tokens += session.hit_usage.completion_tokens
