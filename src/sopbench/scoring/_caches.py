"""Everything the scorer keeps across runs, in one place, so a benchmark can time a cold start."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sopbench.domains import cold_derivations

from . import _engine, _tables, _values


def _kept() -> tuple[dict[Any, Any], ...]:
    return (
        _engine._SCORES,
        _engine._FACTS,
        *_tables.kept_tables(),
        _values._python_cache,
        _values._literal_cache,
    )


@contextmanager
def cold_caches() -> Iterator[Callable[[], None]]:
    """Within: the scorer and the domain derivations start from nothing (verdicts kept by content,
    per-task facts, per-domain tables, cached readings), and the yielded function forgets them
    again; after: everything kept before is back, so timing a cold run costs the warm ones nothing.
    """
    kept = _kept()
    saved = [dict(cache) for cache in kept]
    with cold_derivations() as forget_derived:

        def forget() -> None:
            forget_derived()
            for cache in kept:
                cache.clear()

        forget()
        try:
            yield forget
        finally:
            for cache, before in zip(kept, saved, strict=True):
                cache.clear()
                cache.update(before)
