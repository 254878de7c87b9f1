"""What verbs read (run folders, trajectory files, task files) and the JSON Lines of runs they write."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from sopbench.tasks import LoadError, Task

if TYPE_CHECKING:
    from sopbench.results import ScoringOptions, Sources
    from sopbench.scoring import Protocol

from ._job import OutputTarget, UserError, current_job, err_console, out_console


def read_tasks(option: str, where: Path, load: Callable[[], list[Task]]) -> list[Task]:
    """Tasks from ``load()``; a task file that cannot be read is the user's to fix (one line, exit 2)."""
    try:
        return load()
    except LoadError as exc:
        raise UserError(f"{option} {where}: {exc}") from None


def trajectory_files(paths: list[Path]) -> list[Path]:
    """The trajectory files under ``paths``, all declared as inputs (no output may be one of them)."""
    from sopbench.traces import iter_trajectory_files

    job = current_job()
    job.inputs(paths)
    files = list(iter_trajectory_files(paths))
    job.inputs(files, must_exist=False)
    return files


def find_sources(paths: list[Path], *, run_folders: bool = True) -> Sources:
    """Run folders among ``paths`` and the trajectory files under the others, all declared inputs."""
    from sopbench.results import Sources

    if not run_folders:
        return Sources(files=tuple(trajectory_files(paths)))
    job = current_job()
    job.inputs(paths)
    found = Sources.of(paths)
    job.inputs([folder / "results.sqlite" for folder in found.run_folders], must_exist=False)
    job.inputs(list(found.files), must_exist=False)
    return found


def runs_to_jsonl(
    paths: list[Path], output: Path, as_json: bool, done: str, produce, *, run_folders: bool = False
) -> None:
    """Check ``paths`` and ``output``, then ``produce(sources, write, advance)`` -> (result, runs):
    each run's ``to_json()`` goes to ``write``, one JSON line of ``output``; then the summary."""
    job = current_job()
    sources = find_sources(paths, run_folders=run_folders)
    target = job.output(output)
    if target.is_stdout and as_json:
        raise UserError("--output - and --json would both print on standard output; name a file for --output")
    if not len(sources):
        nothing_found(paths, target)
        return
    with job.progress(len(sources), done) as advance, job.write(target) as sink:
        result, runs = produce(sources, lambda item: sink.write(json_line(item.to_json())), advance)
    job.finish(f"{runs} runs {done}, written to {target}")
    if runs == 0:
        job.nothing_to_do(f"no run could be {done}")
    show_summary(result, target, as_json)


def nothing_found(paths: list[Path], target: OutputTarget | None = None) -> None:
    untouched = "" if target is None else f"; {target} not written"
    names = ", ".join(str(p) for p in paths)
    current_job().nothing_to_do(f"no trajectory file (.json, .json.gz) in {names}{untouched}")


def no_episode(paths: list[Path], target: OutputTarget | Path | None) -> None:
    """The sources were read but hold no episode to score (empty files, a run that played none)."""
    names = ", ".join(str(p) for p in paths)
    current_job().nothing_to_do(f"no episode to score in {names}; {target} not written")


def json_line(data: object) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS) + b"\n"


def show_summary(result, target: OutputTarget, as_json: bool) -> None:
    """A verb's summary: one JSON document, or its table and notes (on stderr when the data is on stdout)."""
    if as_json:
        sys.stdout.write(json.dumps(result.as_dict(), indent=2) + "\n")
        return
    console = err_console() if target.is_stdout else out_console()
    for table in result.tables() if hasattr(result, "tables") else [result.table()]:
        table.print(console)
    for note in result.notes():
        console.print(note, markup=False)
    console.print(f"wrote {target}", markup=False)


def baseline_tasks(tasks_dir: Path | None) -> list[Task] | None:
    """The tasks of --tasks-dir (declared as an input) for the floor rows; None when it is not given:
    then the floors are played on the sources' own tasks (never on a folder found by chance)."""
    from sopbench.tasks import iter_all_tasks

    if tasks_dir is None:
        return None
    current_job().inputs([tasks_dir], "--tasks-dir", contents=True)
    return read_tasks("--tasks-dir", tasks_dir, lambda: list(iter_all_tasks(tasks_dir)))


def scoring_options(
    protocol: Protocol, tasks: list[Task] | None = None, *, no_cache: bool = False, **given: Any
) -> ScoringOptions:
    """The ``ScoringOptions`` a verb's options give (``tasks``: --tasks-dir's, the floors' tasks),
    with the user's verdict cache unless ``no_cache`` (--no-cache)."""
    from sopbench.results import ScoringOptions

    return ScoringOptions(
        protocol=protocol,
        floor_tasks=None if tasks is None else tuple(tasks),
        cache=None if no_cache else verdict_cache(),
        **given,
    )


def verdict_cache():  # -> sopbench.cache.VerdictCache
    """The user's verdict cache (``$SOPBENCH_CACHE_DIR``, else the user cache folder)."""
    from sopbench.cache import VerdictCache

    return VerdictCache.default()


@contextmanager
def run_folder_errors() -> Iterator[None]:
    """A run folder that cannot be read is the user's to fix: one line, exit 2."""
    from sopbench.results import RunFolderError

    try:
        yield
    except RunFolderError as exc:
        raise UserError(str(exc)) from None
