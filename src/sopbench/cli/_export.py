"""``sopbench export``: a run folder as JSON Lines, trajectory files, or what the model was shown."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._app import app
from ._contract import verb
from ._frames import PARQUET, export_parquet, parquet_target
from ._job import Job, OutputTarget, UserError, current_job, err_console
from ._options import choice

if TYPE_CHECKING:
    from sopbench.runner import StoredRun

Folder = Annotated[Path, typer.Argument(metavar="DIR", help="A run folder (holding results.sqlite).")]
OutputFormat = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="NAME",
        help="jsonl (one episode per line), sopbench (trajectory files), shown (the system prompts "
        "and tool schemas the model was shown, one JSON document) or parquet (one row per scored "
        "episode, the columns of sopbench.results.episodes_frame; needs the frames extra).",
    ),
]
OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="PATH",
        show_default=False,
        help="jsonl: a file, - for stdout (the default); sopbench: a folder (default DIR/trajectories); "
        "parquet: a file (required).",
    ),
]
Timings = Annotated[
    bool, typer.Option(help="Include latency_s (off: byte-identical exports of deterministic agents).")
]
WithCache = Annotated[
    Path | None,
    typer.Option(
        "--with-cache",
        metavar="FILE",
        show_default=False,
        help="Also write the recorded model replies the run used (--cache) to this new file: "
        "`run --cache FILE --cache-mode replay` plays the run again anywhere, without a model.",
    ),
]
CacheSource = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        metavar="PATH",
        show_default=False,
        help="With --with-cache: the cache the run recorded into (default: the one it last used).",
    ),
]
TasksOption = Annotated[
    Path | None,
    typer.Option(
        metavar="PATH", show_default=False, help="Task files for --format sopbench (default: the run's)."
    ),
]


@verb(
    app,
    epilog="Examples: sopbench export runs/reference --format jsonl > episodes.jsonl ; "
    "sopbench export runs/reference --format sopbench --output runs/reference/trajectories",
)
def export(
    folder: Folder,
    output_format: OutputFormat = "jsonl",
    output: OutputOption = None,
    timings: Timings = True,
    tasks: TasksOption = None,
    with_cache: WithCache = None,
    cache: CacheSource = None,
) -> None:
    """Export a run folder: JSON Lines with one episode per line, or trajectory files of the published layout.

    Each line holds domain, task_id, goal, agent, model, tool_mode, tool_list, run, seed, status,
    tool_calls, final_database, verdict (passed, database, permission, procedure and the seven
    published checks), explanations, usage and latency_s, in a fixed order (domain, task, run).
    --format sopbench writes <output>/<domain>/ast_<model>-mode_...json files that sopbench evaluate
    (and the original code) can score. --format shown writes what a model agent was shown: each
    distinct system prompt and tool list once, and which ones each episode got. --format parquet
    writes one row per scored episode (its configuration and environment settings, the sound
    judgements, the seven checks, tokens, latency) to a file; infra_error episodes are named and
    left out. --with-cache FILE also writes the recorded model replies the run used, so that a
    submission can be replayed.
    """
    from sopbench.runner import StoreError, read_run
    from sopbench.runner.store import store_files

    job = current_job()
    choice("--format", output_format, ("jsonl", "sopbench", "shown", PARQUET))
    job.inputs([folder], "argument", must_exist=False)  # read_run names what is missing
    job.inputs(store_files(folder), "the run's store", must_exist=False)
    if cache is not None and with_cache is None:
        raise UserError("--cache names the cache to ship: give --with-cache FILE too")
    if cache is not None:
        job.inputs([cache], "--cache")
    if with_cache is not None:
        job.output(with_cache, "--with-cache", stdout_ok=False, new_folders=True)
    if output_format == PARQUET:
        target = parquet_target(output)
    elif output_format in ("jsonl", "shown"):
        target = job.output(output)
    else:
        if output is not None and str(output) == "-":
            raise UserError("--output -: --format sopbench writes a folder of files; name a folder")
        trajectories_folder = job.output_folder(output or folder / "trajectories", new_folders=True)
        if tasks is not None:  # checked before the store is read (the store's default: once it is)
            job.inputs([tasks], "--tasks", contents=True)
    if output_format == PARQUET:
        export_parquet(folder, target)
        if with_cache is not None:
            _export_cache(job, folder, with_cache, cache)
        return
    try:  # read-only; a damaged row is named as a problem and left out
        run = read_run(folder, header_only=output_format == "shown", records=False, on_damaged=job.problem)
    except StoreError as exc:  # no store, or a damaged file (a corrupted page, a manifest)
        raise UserError(str(exc)) from None
    if output_format == "sopbench":
        _export_trajectories(job, run, folder, trajectories_folder, tasks)
    else:
        _export_lines(job, run, folder, target, shown=output_format == "shown", timings=timings)
    if with_cache is not None:
        _export_cache(job, folder, with_cache, cache)


def _export_cache(job: Job, folder: Path, target: Path, source: Path | None) -> None:
    from sopbench.runner import StoreError
    from sopbench.runner.export import export_cache

    try:
        count = export_cache(folder, target, source)
    except StoreError as exc:
        raise UserError(str(exc)) from None
    job.finish(f"{count} recorded replies written to {target}")
    err_console().print(f"wrote {count} recorded replies to {target}", markup=False)


def _export_lines(
    job: Job, run: StoredRun, folder: Path, target: OutputTarget, *, shown: bool, timings: bool
) -> None:
    """--format jsonl (one episode per line) or shown (one document), into ``target``."""
    from sopbench.runner import export_jsonl
    from sopbench.runner.export import export_shown

    with job.write(target) as sink:
        count = export_shown(run, sink) if shown else export_jsonl(run, sink, timings=timings)
    what = "what the model was shown in " if shown else ""
    job.finish(f"{what}{count} episodes exported to {target}")
    err_console().print(f"exported {what}{count} episodes to {target}", markup=False)
    if count == 0:
        job.nothing_to_do(
            f"{folder} holds no record of what a model was shown (no model agent ran)"
            if shown
            else f"{folder} holds no episode"
        )


def _export_trajectories(
    job: Job, run: StoredRun, folder: Path, trajectories_folder: Path, tasks: Path | None
) -> None:
    """--format sopbench: trajectory files of the published layout (each declared as an output first)."""
    from sopbench.runner import StoreError, export_sopbench

    task_path = tasks or run.tasks_path
    if tasks is None:
        job.inputs([task_path], "--tasks", contents=True)

    def declare(files: list[Path]) -> None:
        for file in files:
            job.output(file, new_folders=True)

    try:
        written = export_sopbench(run, trajectories_folder, task_path, check_targets=declare)
    except StoreError as exc:
        raise UserError(str(exc)) from None
    for path in written:
        err_console().print(f"wrote {path}", markup=False)
    if not written:
        job.nothing_to_do(f"{folder} holds no completed episode")
