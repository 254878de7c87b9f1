"""Sources of episodes, mixed freely: run folders of ``sopbench run`` and published trajectory files.

Every episode becomes an ``Episode``: its record and run (what was said and called), its verdict under
the chosen protocol, and the few facts the list filters on, computed once when the sources are read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from sopbench.runner import STORE_NAME, StoreError, read_run_folder
from sopbench.scoring import Protocol, RunScore, ScoringError, file_configuration, load_records, score_run
from sopbench.statistics import Configuration
from sopbench.traces import (
    Record,
    detect_output_format,
    iter_trajectory_files,
)

__all__ = [
    "JUDGEMENTS",
    "Episode",
    "LoadedSources",
    "SourceError",
    "configuration_name",
    "failing_constraint_kinds",
    "load_sources",
]

# The three judgements, in the order the verdict gives them.
JUDGEMENTS = ("database", "permission", "procedure")


class SourceError(Exception):
    """A source that cannot be read at all (not a run folder, no trajectory file, a damaged store)."""


@dataclass(frozen=True, slots=True, eq=False)
class Episode:
    """One run of one task, scored, with what the list filters on.

    A run from a trajectory file keeps only where it is: its record is read again when its page is
    asked for (the conversations and final databases of the 14,567 published runs would take
    most of a gigabyte if all were kept).
    """

    id: int  # position in the loaded list: the episode's address in the viewer
    source: str  # the trajectory file or run folder it came from
    configuration: str  # model, tool mode, tool list, user
    run: int
    score: RunScore
    kinds: frozenset[str]  # the kinds of the constraints that failed its procedure (failing_constraint_kinds)
    stored: Record | None = None  # the record itself, for runs read from a run folder
    # What a run folder's model was shown beyond the conversation (a published file keeps only the
    # prompt, in its record): the system prompt and the tool schemas, shared with the episodes that got them.
    system_prompt: str | None = None
    tools: tuple[dict[str, Any], ...] | None = None

    @property
    def record(self) -> Record:
        if self.stored is not None:
            return self.stored
        return _file_records(self.source)[self.score.record]

    @property
    def source_name(self) -> str:
        """The file or folder name of the source (the page shows the full path on hover)."""
        return Path(self.source).name

    @property
    def domain(self) -> str:
        return self.score.domain

    @property
    def goal(self) -> str:
        return self.score.goal

    @property
    def passed(self) -> bool:
        return self.score.passed

    @property
    def failing(self) -> tuple[str, ...]:
        """The judgements that failed (database, permission, procedure)."""
        verdict = self.score.verdict
        return tuple(name for name in JUDGEMENTS if not verdict[name])


@lru_cache(maxsize=8)
def _file_records(path: str) -> dict[int, Record]:
    """The records of one trajectory file by their index in it (the last few files read are kept)."""
    return {record.index: record for record in load_records(path, lambda error: None)}


@dataclass
class LoadedSources:
    episodes: list[Episode] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # runs or files that could not be used, one line each
    files: int = 0  # trajectory files and run folders read


def failing_constraint_kinds(score: RunScore) -> frozenset[str]:
    """The kinds of the constraints that failed the run's procedure (``Outcome.findings``: Single,
    negation, And, Or, Chain, Gate, or unclassified), as the report's breakdown counts them."""
    return frozenset(finding.kind for finding in score.outcome().findings)


def configuration_name(configuration: Configuration) -> str:
    """The configuration as the list names it (its ``configuration`` filter): model (or agent),
    tool mode, tool list, user (when there is one)."""
    parts = [configuration.model or configuration.agent]
    if configuration.tool_mode:
        parts.append(configuration.tool_mode)
    if configuration.tool_list:
        parts.append(f"tools {configuration.tool_list}")
    if configuration.user and configuration.user != "none":
        parts.append(f"user {configuration.user}")
    return " · ".join(parts)


def source_files(sources: Iterable[Path]) -> list[Path]:
    """Each source as the unit it is read in: a run folder, or each trajectory file under a path."""
    units: list[Path] = []
    for source in sources:
        if source.is_dir() and (source / STORE_NAME).is_file():
            units.append(source)
        else:
            found = list(iter_trajectory_files(source))
            if not found:
                raise SourceError(f"{source}: neither a run folder ({STORE_NAME}) nor trajectory files")
            units.extend(found)
    return units


def load_sources(
    units: Iterable[Path], protocol: Protocol, advance: Callable[[str], None] | None = None
) -> LoadedSources:
    """Read and score every episode of ``units`` (see ``source_files``) under ``protocol``."""
    loaded = LoadedSources()
    for unit in units:
        if (unit / STORE_NAME).is_file():
            _load_run_folder(unit, protocol, loaded)
        else:
            _load_trajectory_file(unit, protocol, loaded)
        loaded.files += 1
        if advance is not None:
            advance(unit.name)
    return loaded


def _add(
    loaded: LoadedSources,
    source: str,
    configuration: str,
    record: Record,
    run: int,
    score: RunScore,
    keep: bool,
    system_prompt: str | None = None,
    tools: tuple[dict[str, Any], ...] | None = None,
) -> None:
    kinds = failing_constraint_kinds(score)
    episode = Episode(
        len(loaded.episodes),
        source,
        configuration,
        run,
        score,
        kinds,
        record if keep else None,
        system_prompt,
        tools,
    )
    loaded.episodes.append(episode)


def _load_trajectory_file(path: Path, protocol: Protocol, loaded: LoadedSources) -> None:
    records = load_records(path, lambda error: loaded.problems.append(str(error)))
    if not records:
        return
    configuration = configuration_name(file_configuration(str(path)))
    fmt = detect_output_format(records)
    for record in records:
        for run in range(len(record.runs)):
            try:
                score = score_run(record, run, protocol, output_format=fmt)
            except ScoringError as error:
                loaded.problems.append(str(error))
                if error.whole_record:
                    break
                continue
            _add(loaded, str(path), configuration, record, run, score, keep=False)


def _load_run_folder(folder: Path, protocol: Protocol, loaded: LoadedSources) -> None:
    try:
        stored = read_run_folder(folder, on_damaged=loaded.problems.append)
    except StoreError as error:
        raise SourceError(str(error)) from None
    for episode in stored.episodes:
        if episode.record is None:
            loaded.problems.append(
                f"{folder}: {episode.task_id} run {episode.run}: {episode.status}, nothing to show"
            )
            continue
        try:
            score = score_run(episode.record, 0, protocol)
        except ScoringError as error:
            loaded.problems.append(f"{folder}: {episode.task_id} run {episode.run}: {error.message}")
            continue
        _add(
            loaded,
            str(folder),
            episode.configuration,
            episode.record,
            0,
            score,
            keep=True,
            system_prompt=episode.system_prompt,
            tools=episode.tools,
        )
