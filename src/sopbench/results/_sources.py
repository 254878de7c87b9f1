"""Where verdict rows come from: run folders of ``sopbench run`` and trajectory files, mixed freely.

A path that is a folder holding ``results.sqlite`` is a run folder: its stored verdicts are read
(read-only; its ``trajectories`` export, if any, is not read again). Any other path is searched for
trajectory files, scored under the protocol asked for. ``Sources`` is what a use case reads: the
paths split into the two kinds once, and checked once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from sopbench._io import collector_paused, walk_files
from sopbench.inspect_eval import InspectLogError, inspect_log_scores, is_inspect_log
from sopbench.runner import StoreError, read_run
from sopbench.runner.baselines import stored_verdict_name
from sopbench.runner.episode import row_score
from sopbench.runner.store import STORE_NAME
from sopbench.scoring import Protocol, RunScore, ScoringReport, score_paths
from sopbench.traces import iter_trajectory_files

from ._options import ScoringOptions

__all__ = [
    "RunFolder",
    "RunFolderError",
    "Sources",
    "is_run_folder",
    "outside_run_folders",
    "read_run_folder",
    "score_files",
    "split_sources",
]


def is_run_folder(path: Path) -> bool:
    """A folder of ``sopbench run``, or an Inspect eval log of the ``sopbench`` task (read alike)."""
    return (path.is_dir() and (path / STORE_NAME).is_file()) or is_inspect_log(path)


def split_sources(paths: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """(run folders, other paths to search for trajectory files), in the order given.

    A folder that is not a run folder may hold run folders (``runs/reference``, ``runs/no-verify``):
    they are found at any depth. Trajectory files inside a run folder (an export) are not read
    again: ``outside_run_folders`` drops them from the files found under the other paths.
    """
    folders: list[Path] = []
    others: list[Path] = []
    for path in paths:
        if is_run_folder(path):
            folders.append(path)
            continue
        others.append(path)
        if path.is_dir():
            found, _unreadable = walk_files(path, lambda name: name == STORE_NAME or name.endswith(".eval"))
            folders += sorted(file.parent for file in found if file.name == STORE_NAME)
            folders += sorted(file for file in found if file.name.endswith(".eval") and is_inspect_log(file))
    return list(dict.fromkeys(folders)), others


def outside_run_folders(files: Iterable[Path], folders: Sequence[Path]) -> list[Path]:
    """``files`` without those inside one of ``folders``."""
    roots = [folder.resolve() for folder in folders]
    return [f for f in files if not any(f.resolve().is_relative_to(root) for root in roots)]


@dataclass(frozen=True, kw_only=True)
class Sources:
    """What a use case reads: run folders (their stored verdicts are read) and trajectory files
    (scored), each in the order given.

    ``Sources.of(paths)`` finds them under paths as the verbs do. A trajectory file inside one of
    the run folders (the folder's own export) is refused: its runs would be counted twice.
    """

    run_folders: tuple[Path, ...] = ()
    files: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        kept = set(outside_run_folders(self.files, self.run_folders))
        inside = [file for file in self.files if file not in kept]
        if inside:
            raise ValueError(
                f"{inside[0]}: a trajectory file inside a run folder given too (its export); its runs "
                "would be counted twice: name the run folder or the file, not both"
            )

    @classmethod
    def of(cls, paths: Iterable[Path]) -> Sources:
        """The run folders among ``paths`` or inside a folder of them (at any depth), and the
        trajectory files under the other paths that are not inside one of those run folders."""
        folders, others = split_sources(paths)
        files = outside_run_folders(iter_trajectory_files(others), folders) if others else []
        return cls(run_folders=tuple(folders), files=tuple(files))

    def __len__(self) -> int:
        return len(self.run_folders) + len(self.files)


@dataclass
class RunFolder:
    """The completed episodes of one run folder as scores, and what was not counted."""

    folder: Path
    scores: list[RunScore] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # infra_error episodes and damaged rows, named


class RunFolderError(Exception):
    """A run folder that cannot be read (named, with the reason)."""


def stored_protocol_name(protocol: Protocol) -> str:
    """``sound`` or ``sopbench``: the name of ``protocol`` among the two whose verdicts a run stores
    (``ValueError`` for any other mix of quirks)."""
    name = stored_verdict_name(protocol)
    if name is None:
        raise ValueError(f"a run stores the sound and sopbench verdicts only, not {protocol}")
    return name


def read_run_folder(folder: Path, protocol: Protocol) -> RunFolder:
    """Every stored episode of ``folder``, as scores under ``protocol`` (sound or sopbench: the two
    verdicts a run stores). The store is opened read-only: a running ``sopbench run`` may go on
    writing it. This is the one place that reads a run folder for the verbs that read results.
    """
    try:
        name = stored_protocol_name(protocol)
    except ValueError:
        raise RunFolderError(
            f"{folder}: a run folder stores the sound and sopbench verdicts only, not {protocol}; "
            "export it (sopbench export --format sopbench) to score it with other quirks"
        ) from None
    result = RunFolder(folder)
    if is_inspect_log(folder):
        try:
            result.scores = list(inspect_log_scores(folder, name, result.problems.append))
        except InspectLogError as exc:
            raise RunFolderError(str(exc)) from None
        return result
    damaged: list[str] = []
    try:
        run = read_run(folder, records=False, on_damaged=damaged.append)
    except StoreError as exc:  # names the store file and what is wrong with it
        raise RunFolderError(str(exc)) from None
    result.problems += damaged
    source = folder.as_posix()
    for row in run.rows:
        if row.status != "completed":
            result.problems.append(
                f"{folder}: {row.task_id} run {row.run}: {row.reason} (infra_error, not counted)"
            )
            continue
        score = row_score(row, name, source)
        result.scores.append(replace(score, stored_digest=run.task_digests.get(row.task_id, "")))
    return result


ProblemSink = Callable[[str], None]


def scores_of_run_folders(
    folders: Sequence[Path],
    protocol: Protocol,
    on_problem: ProblemSink | None = None,
    *,
    progress: Callable[[str], None] | None = None,
    first_runs_only: bool = False,
) -> list[RunScore]:
    """The scores of several run folders (each task's first run only with ``first_runs_only``);
    infra_error episodes are named to ``on_problem``, and ``progress`` gets each folder's name."""
    scores: list[RunScore] = []
    for folder in folders:
        read = read_run_folder(folder, protocol)
        scores += [score for score in read.scores if not first_runs_only or score.run == 0]
        if on_problem is not None:
            for item in read.problems:
                on_problem(item)
        if progress is not None:
            progress(folder.name)
    return scores


def score_files(
    files: Iterable[Path],
    options: ScoringOptions,
    scoring: ScoringReport,
    without_runs: list[tuple[str, int]],
    *,
    progress: Callable[[str], None] | None = None,
    on_problem: ProblemSink | None = None,
) -> Iterator[tuple[Path, RunScore]]:
    """Every run of ``files`` scored as ``options`` say (protocol, runs, the bank card reading,
    justified refusals), file by file, each score with its file, as soon as it is made. This is the
    one file loop of the verbs that read results: after each file its problems go to ``on_problem``
    (and stay in ``scoring``), its records without a run are added to ``without_runs`` as
    ``("<domain>/<file>", record)``, and ``progress`` gets its name. With ``options.cache``, a file
    whose verdicts it holds is not scored again (the same scores and problems)."""
    cache = options.cache
    for file in files:
        before, before_empty = len(scoring.errors), len(scoring.records_without_runs)
        found: list[RunScore]
        # A file's scores are built at once with the collector paused (its verdicts, rows and kept
        # tasks hold no cycles and live as long as the results): left to it, the young collections
        # would scan them as they are built, and the next full collection walked them all again
        # (0.4 s of a report over the published set).
        with collector_paused():
            if cache is not None:
                found = cache.score_file(
                    file,
                    options.protocol,
                    scoring,
                    runs=options.runs,
                    credit_cards=options.credit_cards,
                    justify_refusal=options.justify_refusal,
                ).scores
            else:
                found = list(
                    score_paths(
                        [file],
                        options.protocol,
                        report=scoring,
                        credit_cards=options.credit_cards,
                        runs=options.runs,
                        justify_refusal=options.justify_refusal,
                    )
                )
        for score in found:
            yield file, score
        if on_problem is not None:
            for problem in scoring.errors[before:]:
                on_problem(problem)
        label = f"{file.parent.name}/{file.name}"
        without_runs += [(label, index) for _name, index in scoring.records_without_runs[before_empty:]]
        if progress is not None:
            progress(label)
