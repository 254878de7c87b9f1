"""Live sources: while a run or a sweep writes a folder, the viewer reads what it added.

The page polls (``/api/status``, every few seconds, see viewer.js); a poll reads again, at most once
a second, each run folder or Inspect log whose files changed since the last reading, and every new
unit below the sources given (a sweep's next run folder, a new trajectory file), and adds the
episodes not seen before. Nothing half-written is shown: a run folder's episode is one committed
SQLite transaction (a reader sees it whole or not at all), an Inspect log's sample is shown once the
log holds it whole, and a new trajectory file is read once it has not changed for ``SETTLE_S``
(a file still being written is read on a later poll). A source is "in progress" while the
``sopbench run`` that writes it is alive (its lock names a live process) or, for an Inspect log,
while the eval is not finished.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sopbench.cache import VerdictCache
from sopbench.inspect_eval import inspect_log_running
from sopbench.runner.store import STORE_NAME, run_in_progress
from sopbench.scoring import Protocol

from ._facts import Prices
from ._index import EpisodeIndex
from ._reading import load_unit
from ._sources import Episode, LoadedSources, SourceError, is_run_folder, source_files

__all__ = ["SETTLE_S", "LiveSources", "SourceStatus"]

SETTLE_S = 2.0  # a new trajectory file unchanged this long is whole
MIN_INTERVAL_S = 1.0  # polls closer than this read nothing again


@dataclass(frozen=True)
class SourceStatus:
    name: str  # the unit's path as given
    episodes: int
    in_progress: bool


def _signature(unit: Path) -> tuple[Any, ...]:
    """What changes when a unit gains episodes: its files' sizes and modification times."""
    paths = [unit / STORE_NAME, unit / f"{STORE_NAME}-wal"] if unit.is_dir() else [unit]
    found: list[tuple[int, int] | None] = []
    for path in paths:
        try:
            info = path.stat()
        except OSError:
            found.append(None)
            continue
        found.append((info.st_size, info.st_mtime_ns))
    return tuple(found)


class LiveSources:
    """The sources given to the viewer, read once at start-up (``load``) and again as they grow."""

    def __init__(
        self,
        sources: Sequence[Path],
        protocol: Protocol,
        prices: Prices | None = None,
        on_problem: Callable[[str], None] | None = None,
        cache: VerdictCache | None = None,
    ) -> None:
        """``on_problem`` hears, once each, what a later reading could not use (a broken file that
        appeared, a record that cannot be scored); a unit that cannot be opened yet (a store being
        created) is tried again on the next poll without a word. With ``cache``, a trajectory file's
        verdicts are read from it when it holds them (and kept there when it does not)."""
        self.sources = list(sources)
        self.on_problem = on_problem
        self.told: set[str] = set()
        self.protocol = protocol
        self.prices = prices
        self.cache = cache
        self.known: dict[str, Episode] = {}
        self.seen: dict[Path, tuple[Any, ...]] = {}  # unit -> its signature when last read
        self.counts: Counter[str] = Counter()
        self.running: dict[Path, bool] = {}
        self.last_poll = 0.0

    def load(self, units: Sequence[Path], advance: Callable[[str], None] | None = None) -> LoadedSources:
        """The first reading (every unit, settled or not: the user asked for it now)."""
        loaded = LoadedSources(prices=self.prices, known=self.known)
        for unit in units:
            signature = _signature(unit)
            load_unit(unit, self.protocol, loaded, cache=self.cache)
            self.seen[unit] = signature
            self.running[unit] = self._in_progress(unit)
            if advance is not None:
                advance(unit.name)
        self.counts.update(e.source for e in loaded.episodes)
        return loaded

    def _in_progress(self, unit: Path) -> bool:
        if is_run_folder(unit):
            return run_in_progress(unit)
        if unit.suffix == ".eval":
            return inspect_log_running(unit)
        return False

    def collect(self, first_id: int) -> LoadedSources:
        """What the units gained since the last reading (run in a worker thread: it reads and scores).
        A unit's files are looked at before it is read: a write during the reading makes the next
        poll read it again (what is already known is skipped, by address)."""
        loaded = LoadedSources(prices=self.prices, known=self.known, first_id=first_id)
        try:
            units = source_files(self.sources, allow_empty=True)
        except SourceError as error:  # a source removed while the viewer runs
            loaded.problems.append(str(error))
            return loaded
        now = time.time()
        for unit in units:
            signature = _signature(unit)
            before = self.seen.get(unit)
            if before == signature:
                # a run folder's writer may start or end without a write yet (its lock is cheap to
                # read); a log's header is read again only while it was running
                if unit.is_dir() or self.running.get(unit, False):
                    self.running[unit] = self._in_progress(unit)
                continue
            if before is not None and not (unit.is_dir() or unit.suffix == ".eval"):
                continue  # a trajectory file is read once: it is written whole, then left alone
            settling = not unit.is_dir() and unit.suffix != ".eval" and signature[0] is not None
            if settling and now - signature[0][1] / 1e9 < SETTLE_S:
                continue  # still being written: read on a later poll
            try:
                load_unit(unit, self.protocol, loaded, cache=self.cache)
            except SourceError:
                continue  # not readable yet (a store being created): the next poll tries again
            self.seen[unit] = signature
            self.running[unit] = self._in_progress(unit)
        return loaded

    def apply(self, loaded: LoadedSources, index: EpisodeIndex) -> None:
        """Put what ``collect`` found into the index (in the server's own thread, between requests)."""
        index.add(loaded.episodes)
        for episode in loaded.replaced:
            index.replace(episode)
        self.counts.update(e.source for e in loaded.episodes)
        for problem in loaded.problems:
            if problem not in self.told and self.on_problem is not None:
                self.on_problem(problem)
            self.told.add(problem)

    def status(self) -> list[SourceStatus]:
        return [
            SourceStatus(str(unit), self.counts.get(str(unit), 0), self.running.get(unit, False))
            for unit in self.seen
        ]

    def due(self) -> bool:
        """Whether a poll should read the sources again (and, if so, it now counts as the last)."""
        now = time.monotonic()
        if now - self.last_poll < MIN_INTERVAL_S:
            return False
        self.last_poll = now
        return True
