"""Progress on stderr for the long verbs: episodes of a run, domains of a generation."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from ._job import Job, err_console


@contextmanager
def generation_progress(job: Job, domains: int) -> Iterator[Callable[[str, str], None]]:
    """The ``progress(domain, goal)`` callback of generation, as one bar step per finished domain."""
    started: list[str] = []
    with job.progress(domains, "generated", unit="domains") as advance:

        def on_goal(domain: str, goal: str) -> None:
            if domain not in started:
                if started:
                    advance(started[-1])
                started.append(domain)

        yield on_goal
        if started:
            advance(started[-1])


def default_task_set(job: Job) -> Path:
    """The generated task set (built into the cache on first use, with a progress bar)."""
    from sopbench.domains import PUBLISHED_DOMAINS
    from sopbench.generation import default_tasks_dir, default_tasks_ready

    if default_tasks_ready():
        return default_tasks_dir()
    err_console().print("building the generated task set (first use only; about 20 s)", markup=False)
    with generation_progress(job, len(PUBLISHED_DOMAINS)) as on_goal:
        return default_tasks_dir(progress=on_goal)


class EpisodeProgress:
    """Episodes done, pass rate so far, infra errors and ETA on stderr (a bar on a terminal, a plain
    line otherwise); the job's ``done`` line stays current so that Ctrl-C says how many episodes are
    stored."""

    def __init__(self, job: Job, *, show: bool = True) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        from sopbench.runner.frontend import PlainProgress

        self.job = job
        console = err_console()
        self.bar = Progress(
            TextColumn("episodes"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("pass {task.fields[rate]}"),
            TextColumn("infra errors {task.fields[errors]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            disable=not (show and console.is_terminal),
        )
        self.handle = self.bar.add_task("episodes", total=None, rate="-", errors=0)
        # Without a terminal (nohup, CI, a pipe): a plain line every 30 s and every 5% of episodes.
        self.plain = PlainProgress(sys.stderr) if show and not console.is_terminal else None

    def __enter__(self) -> EpisodeProgress:
        self.bar.__enter__()
        if self.plain is not None:
            self.plain.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self.plain is not None:
            self.plain.__exit__(kind, error, trace)
        self.bar.__exit__(kind, error, trace)

    def update(self, progress) -> None:
        rate = progress.pass_rate
        total = progress.total - progress.skipped
        self.job.finish(
            f"{progress.done} of {total} episodes finished and stored ({progress.skipped} stored before); "
            "run the same command to resume"
        )
        self.bar.update(
            self.handle,
            total=total,
            completed=progress.done,
            rate="-" if rate is None else f"{100 * rate:.1f}%",
            errors=progress.infra_errors,
        )
        if self.plain is not None:
            self.plain.update(progress)
