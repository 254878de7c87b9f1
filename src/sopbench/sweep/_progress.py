"""The sweep's progress: one bar per active configuration and a total on a terminal; otherwise a
plain line when a configuration starts or ends and at every 5% of the sweep's episodes."""

from __future__ import annotations

from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from sopbench.runner import Progress as Counts
from sopbench.runner.frontend import PROGRESS_STEP


class SweepDisplay:
    """``display(name, counts)`` after each finished episode of configuration ``name``."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self.console = Console(file=stream)
        self.terminal = self.console.is_terminal
        self.total = total
        self.counts: dict[str, tuple[int, int]] = {}
        self.bars: dict[str, TaskID] = {}
        self.last_step = 0  # the last 5% of the sweep a plain line was written for
        self.stream = stream
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
        )
        self.total_bar = self.progress.add_task("total", total=total) if self.terminal else None

    def __enter__(self) -> SweepDisplay:
        if self.terminal:
            self.progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.terminal:
            self.progress.stop()

    def __call__(self, name: str, counts: Counts) -> None:
        finished = counts.skipped + counts.done
        first = name not in self.counts
        self.counts[name] = (finished, counts.total)
        done = sum(f for f, _ in self.counts.values())
        if self.terminal:
            if name not in self.bars:
                self.bars[name] = self.progress.add_task(name, total=counts.total)
            self.progress.update(self.bars[name], completed=finished)
            if finished >= counts.total:  # only active configurations keep a bar
                self.progress.remove_task(self.bars[name])
            assert self.total_bar is not None
            self.progress.update(self.total_bar, completed=done)
        else:  # a line when a configuration starts or ends, and at every 5% of the whole sweep
            step = int(done / max(self.total, 1) / PROGRESS_STEP + 1e-9)
            if first or finished >= counts.total or step > self.last_step:
                self.last_step = max(self.last_step, step)
                self.stream.write(f"{name}: {finished}/{counts.total} episodes; total {done}/{self.total}\n")
                self.stream.flush()
