"""A plain progress line for runs without a terminal (nohup, CI, a pipe): steady, one line each."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO

from ._run import Progress

PROGRESS_INTERVAL_S = 30.0
PROGRESS_STEP = 0.05  # and a line at every 5% of the episodes


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def progress_line(progress: Progress, elapsed_s: float) -> str:
    """``progress: 12/40 episodes, 5 passed of 11 scored, 1 infra error, elapsed 3m02s, ETA 7m05s``."""
    total = max(progress.total - progress.skipped, 0)
    if progress.done and total > progress.done:
        eta = _duration(elapsed_s / progress.done * (total - progress.done))
    else:
        eta = "0m00s" if total and progress.done >= total else "-"
    errors = f"{progress.infra_errors} infra error{'s' if progress.infra_errors != 1 else ''}"
    return (
        f"progress: {progress.done}/{total} episodes, {progress.passed} passed of {progress.scored} scored, "
        f"{errors}, elapsed {_duration(elapsed_s)}, ETA {eta}"
    )


class PlainProgress:
    """Writes ``progress_line`` to ``stream`` every ``interval`` seconds (from a thread, so a run whose
    episodes take minutes still says it is alive) and, once the first interval has passed, whenever
    another ``step`` of the episodes has finished (a run that ends within the first interval writes
    nothing). Use as a context manager; ``update`` is the runner's progress callback."""

    def __init__(
        self,
        stream: TextIO,
        *,
        interval: float = PROGRESS_INTERVAL_S,
        step: float = PROGRESS_STEP,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.interval = interval
        self.step = step
        self.clock = clock
        self.progress = Progress()
        self.started = clock()
        self.last_step = 0
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.ticker = threading.Thread(target=self._tick, name="sopbench-progress", daemon=True)

    def __enter__(self) -> PlainProgress:
        self.started = self.clock()
        self.ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.ticker.join()

    def update(self, progress: Progress) -> None:
        with self.lock:
            self.progress = progress
            total = max(progress.total - progress.skipped, 1)
            reached = int(progress.done / total / self.step + 1e-9) if self.step > 0 else 0
            # quiet for the first interval: a run that ends within it needs no progress report
            due = (reached > self.last_step or progress.done == total) and self._past_first_interval()
            self.last_step = max(self.last_step, reached)
        if due:
            self.write()

    def _past_first_interval(self) -> bool:
        return self.clock() - self.started >= self.interval

    def write(self) -> None:
        with self.lock:
            line = progress_line(self.progress, self.clock() - self.started)
        self.stream.write(line + "\n")
        self.stream.flush()

    def _tick(self) -> None:
        while not self.stopped.wait(self.interval):
            self.write()
