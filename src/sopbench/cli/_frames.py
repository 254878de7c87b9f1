"""Parquet files of results (``--format parquet`` of ``evaluate`` and ``export``): the episodes as
``sopbench.results.episodes_frame`` lays them out, written whole (a temporary file renamed into
place). The extra ``frames`` (pandas, pyarrow) is checked before anything is scored."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._job import OutputTarget, UserError, current_job, err_console
from ._sources import find_sources, nothing_found, run_folder_errors, show_summary

if TYPE_CHECKING:
    from sopbench.results import ScoringOptions

PARQUET = "parquet"
FRAMES_LIBRARIES = ("pandas", "pyarrow")


def parquet_target(output: Path | None, option: str = "--output") -> OutputTarget:
    """The file a Parquet output goes to: a named file (Parquet is binary: never standard output),
    checked like any output; then the extra must be installed (one line naming it, exit 2)."""
    if output is None or str(output) == "-":
        raise UserError(
            f"--format parquet writes a binary file: name it with {option} FILE (not standard output)"
        )
    # The output guard first: a refused path is refused alike with or without the extra.
    target = current_job().output(output, option)
    missing = [name for name in FRAMES_LIBRARIES if not _installed(name)]
    if missing:
        raise UserError(
            f"--format parquet needs the frames extra ({', '.join(missing)} not installed): "
            "pip install 'sopbench[frames]'"
        )
    return target


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # an import hook that refuses it
        return False


def write_frame(target: OutputTarget, frame: Any) -> None:
    """``frame`` as a Parquet file at ``target``, written whole or not at all."""
    from sopbench.results import write_parquet

    job = current_job()
    with job.write(target) as sink:
        write_parquet(frame, sink)


def evaluate_to_parquet(
    paths: list[Path],
    output: Path,
    as_json: bool,
    options: ScoringOptions,
    report: Callable[[Any], Any],
) -> None:
    """``sopbench evaluate --format parquet``: every run scored (as ``evaluate`` scores it) as one
    Parquet file, then the summary (``report(evaluation)``) as the JSON Lines output gives it."""
    job = current_job()
    sources = find_sources(paths)  # the inputs first, as for the JSON Lines output
    target = parquet_target(output)
    from sopbench.results import evaluate_to_frame  # pandas: once the extra is known to be there

    if not len(sources):
        nothing_found(paths, target)
        return
    with job.progress(len(sources), "scored") as advance, run_folder_errors():
        evaluation, frame = evaluate_to_frame(sources, options, progress=advance, on_problem=job.problem)
    write_frame(target, frame)  # no run scored: a file of no row, as the JSON Lines output
    job.finish(f"{evaluation.runs_scored} runs scored, written to {target}")
    if evaluation.runs_scored == 0:
        job.nothing_to_do("no run could be scored")
    show_summary(report(evaluation), target, as_json)


def export_parquet(folder: Path, target: OutputTarget) -> None:
    """``sopbench export DIR --format parquet``: the run folder's scored episodes as one Parquet file
    (the sound verdict; its infra_error episodes are named and left out, as ``evaluate`` does)."""
    from sopbench.results import ScoringOptions, Sources, evaluate_to_frame

    job = current_job()
    with run_folder_errors():
        _evaluation, frame = evaluate_to_frame(
            Sources(run_folders=(folder,)), ScoringOptions(), on_problem=job.problem
        )
    write_frame(target, frame)  # no episode: a file of no row, as the JSON Lines export
    job.finish(f"{len(frame)} episodes exported to {target}")
    err_console().print(f"exported {len(frame)} episodes to {target}", markup=False)
    if len(frame) == 0:
        job.nothing_to_do(f"{folder} holds no scored episode")
