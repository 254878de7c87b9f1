"""``sopbench sweep``: every configuration of a sweep file, then the leaderboard over them all."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._app import app
from ._contract import verb
from ._job import EXIT_PARTIAL, Job, UserError, current_job
from ._options import what_is

if TYPE_CHECKING:
    from sopbench.runner import RunReport
    from sopbench.sweep import Configuration, SweepReport

File = Annotated[
    Path, typer.Argument(metavar="SWEEP.toml", help="The sweep file (a matrix of configurations).")
]
OutputOption = Annotated[
    Path, typer.Option("--output", "-o", metavar="DIR", help="One run folder per configuration: DIR/<name>/.")
]
Executor = Annotated[
    str, typer.Option(metavar="NAME", help="local (this process) or ray (episodes as Ray tasks).")
]
Address = Annotated[
    str | None,
    typer.Option(
        metavar="ADDR",
        show_default=False,
        help="ray: the cluster to join (auto: this machine's); default: a new local instance.",
    ),
]
OutputFormat = Annotated[str, typer.Option("--format", metavar="FORMAT", help="markdown, csv or json.")]


@verb(
    app,
    epilog="Example: sopbench sweep examples/sweeps/builtin.toml --output sweeps/builtin",
)
def sweep(
    file: File,
    output: OutputOption,
    executor: Executor = "local",
    address: Address = None,
    output_format: OutputFormat = "markdown",
) -> None:
    """Run every configuration of a sweep file (each resumable), then the leaderboard over them all.

    The whole file is checked before any episode. Running the same command again resumes every
    configuration; configurations added to the file are run, changed ones are refused.
    """
    from sopbench.report import render_leaderboard

    job = current_job()
    if executor not in ("local", "ray"):
        raise UserError(f"--executor {executor}: choose local or ray")
    if address is not None and executor != "ray":
        raise UserError("--address needs --executor ray")
    job.inputs([file], "SWEEP.toml")
    if output.exists() and not output.is_dir():
        raise UserError(
            f"--output {output}: is {what_is(output)}; name a folder (it holds one run folder per configuration)"
        )
    job.output_folder(output, new_folders=True)
    target = job.output(None, "stdout")
    report = _run(job, file, output, executor, address)
    assert report.leaderboard is not None
    job.finish(f"{len(report.reports)} configurations in {output}")
    job.write_text(target, render_leaderboard(report.leaderboard, output_format))
    _name_incomplete(job, report.reports)


def _run(job: Job, file: Path, output: Path, executor: str, address: str | None) -> SweepReport:
    """Read, expand and run the sweep file; its mistakes are usage errors, and Ctrl-C says what
    each configuration has stored."""
    from contextlib import nullcontext

    from sopbench.runner import RunInterrupted, RunSpecError, StoreError
    from sopbench.runner.frontend import NoTaskToPlay
    from sopbench.sweep import (
        RayUnavailable,
        SweepDisplay,
        SweepError,
        expand,
        planned_episodes,
        ray_player,
        read_sweep,
        run_sweep,
        stored_when_interrupted,
    )

    configurations = []
    try:
        sweep_file = read_sweep(file)
        configurations = expand(sweep_file, output, str(file))
        _declare_stores_and_tasks(job, configurations)
        cluster = ray_player(address) if executor == "ray" else nullcontext(None)
        with cluster as player, SweepDisplay(sys.stderr, planned_episodes(configurations)) as display:
            return run_sweep(configurations, display, player, concurrency=sweep_file.concurrency)
    except RunInterrupted as exc:
        job.finish(stored_when_interrupted(exc, configurations))
        raise
    except NoTaskToPlay as exc:  # no run folder was made
        raise UserError(f"{exc}; no run folder was made", EXIT_PARTIAL, kind="nothing to do") from None
    except (SweepError, RunSpecError, StoreError, RayUnavailable) as exc:
        raise UserError(str(exc)) from None


def _declare_stores_and_tasks(job: Job, configurations: list[Configuration]) -> None:
    """Each configuration's store and the task files it plays are inputs: no output may replace them
    (``--problems`` naming a configuration's store or a task file is refused before any episode)."""
    from sopbench.runner.store import store_files

    for configuration in configurations:
        job.inputs(
            store_files(configuration.config.output), f"configuration {configuration.name}", must_exist=False
        )
    for tasks in sorted({c.config.tasks for c in configurations if c.config.tasks is not None}):
        job.inputs([tasks], "the sweep file's tasks", contents=True)
    for cache in sorted({c.config.cache for c in configurations if c.config.cache is not None}):
        job.inputs([cache], "the sweep file's cache", must_exist=False)


def _name_incomplete(job: Job, reports: dict[str, RunReport]) -> None:
    """A problem line for each configuration with infra_errors; after the leaderboard, one error line
    (exit 2) when an endpoint refused a configuration (a wrong key), naming the infra_errors too."""
    refused = [f"{name}: {r.refused}" for name, r in reports.items() if r.refused is not None]
    retry = [
        f"{name}: {r.infra_errors} episodes in infra_error"
        for name, r in reports.items()
        if r.refused is None and (r.infra_errors or not r.complete)
    ]
    if refused:
        also = f"; also {'; '.join(retry)} (the same command retries them)" if retry else ""
        raise UserError(f"the sweep stopped: {'; '.join(refused)} (fix it, then run the same command){also}")
    for line in retry:
        job.problem(f"{line} (run the same command to retry)", kind="infra_error")
