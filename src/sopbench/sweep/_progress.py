"""The sweep's progress: one bar per active configuration and a total on a terminal, plain lines
otherwise."""

from __future__ import annotations

from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from sopbench.runner import Progress as Counts


class SweepDisplay:
    """``display(name, counts)`` after each finished episode of configuration ``name``."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self.console = Console(file=stream)
        self.terminal = self.console.is_terminal
        self.total = total
        self.counts: dict[str, tuple[int, int]] = {}
        self.bars: dict[str, TaskID] = {}
        self.stream = stream
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=self.console,
        )
        self.total_bar = self.progress.add_task("total", total=total) if self.terminal else None

    def __enter__(self) -> SweepDisplay:
        if self.terminal:
            self.progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.terminal:
            self.progress.stop()

    def __call__(self, name: str, counts: Counts) -> None:
        finished = counts.skipped + counts.done
        before = self.counts.get(name, (0, 0))[0]
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
        elif finished != before or finished == 0 or finished >= counts.total:
            self.stream.write(f"{name}: {finished}/{counts.total} episodes; total {done}/{self.total}\n")
            self.stream.flush()


