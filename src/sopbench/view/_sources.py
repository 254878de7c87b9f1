"""Sources of episodes (read by ``_reading``), mixed freely: what ``sopbench evaluate`` reads. Run folders of ``sopbench
run`` (and every run folder below a folder, as a sweep writes them), Inspect logs of the ``sopbench``
task (``.eval``, ``.json``), and trajectory files (published, or ``sopbench export --format sopbench``).

Every episode becomes an ``Episode``: its record and run (what was said and called), its verdict under
the chosen protocol, how it went (``EpisodeFacts``), its stable address, and the few facts the list
filters on, computed once when the source is read. ``infra_error`` episodes are kept, with what they
have (their transcript up to the failure, never scored).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from sopbench._io import walk_files
from sopbench.inspect_eval import is_inspect_log
from sopbench.runner.store import STORE_NAME
from sopbench.scoring import Protocol, RunScore, load_records, score_run
from sopbench.statistics import Configuration
from sopbench.traces import Record, detect_output_format, iter_trajectory_files

from ._address import episode_address
from ._facts import EpisodeFacts, Prices

__all__ = [
    "JUDGEMENTS",
    "Episode",
    "LoadedSources",
    "SourceError",
    "configuration_name",
    "failing_constraint_kinds",
    "is_run_folder",
    "source_files",
]

# The three judgements, in the order the verdict gives them.
JUDGEMENTS = ("database", "permission", "procedure")
INFRA_ERROR = "infra_error"


class SourceError(Exception):
    """A source that cannot be read at all (not a run folder, no trajectory file, a damaged store)."""


@dataclass(frozen=True, slots=True, eq=False)
class Episode:
    """One run of one task, scored, with what the list filters on.

    A run from a trajectory file keeps only where it is: its record is read again when its page is
    asked for (the conversations and final databases of the 14,567 published runs would take
    most of a gigabyte if all were kept).
    """

    id: int  # position in the loaded list: this viewer's own number (``address`` is the stable one)
    source: str  # the trajectory file, run folder or Inspect log it came from
    configuration: str  # model, tool mode, tool list, user
    run: int  # the run's index in ``record.runs``
    score: RunScore  # an infra_error episode's is a placeholder: never judged (``judged``)
    kinds: frozenset[str]  # the kinds of the constraints that failed its procedure (failing_constraint_kinds)
    stored: Record | None = None  # the record itself, for runs not read from a trajectory file
    # What a run folder's model was shown beyond the conversation (a published file keeps only the
    # prompt, in its record): the system prompt and the tool schemas, shared with the episodes that got them.
    system_prompt: str | None = None
    tools: tuple[dict[str, Any], ...] | None = None
    task_id: str = ""  # "<domain>/<goal>[<i>]"
    digest: str = ""  # the source's digest (``source_digest``)
    task_run: int | None = None  # the run of the task, from 0 (None: ``run``)
    facts: EpisodeFacts | None = None  # how it went; None: the source keeps none of it
    in_file: bool = True  # the record is read again from ``source`` (a trajectory file) when needed
    stable_address: str = ""  # ``address``, computed once when the source is read ("": computed when asked)
    # The protocol of a score read from the verdict cache (which keeps what the list needs, not the
    # episode's whole verdict): its page scores the run again (``full_score``). None: ``score`` is whole.
    scored_with: Protocol | None = None

    @property
    def full_score(self) -> RunScore:
        """``score`` with its episode's whole verdict (the database difference the page shows)."""
        if self.score.episode is not None or self.scored_with is None or not self.in_file:
            return self.score
        return _rescored(self.source, self.score.record, self.run, self.score.task_id, self.scored_with)

    @property
    def record(self) -> Record:
        if self.stored is not None:
            return self.stored
        if not self.in_file:
            raise LookupError(f"{self.source}: {self.task_id} run {self.number} kept no transcript")
        return _file_records(self.source)[self.score.record]

    @property
    def has_record(self) -> bool:
        return self.stored is not None or self.in_file

    @property
    def number(self) -> int:
        """The run of the task (from 0) as the source numbers it."""
        return self.run if self.task_run is None else self.task_run

    @property
    def address(self) -> str:
        """The stable path of this episode in every viewer (``episode_address``)."""
        return self.stable_address or episode_address(self.digest, self.domain, self.task_id, self.number)

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
    def judged(self) -> bool:
        """False for an infra_error episode: it was never scored."""
        return self.facts is None or self.facts.status != INFRA_ERROR

    @property
    def outcome(self) -> str:
        return INFRA_ERROR if not self.judged else "passed" if self.passed else "failed"

    @property
    def passed(self) -> bool:
        return self.score.passed

    @property
    def failing(self) -> tuple[str, ...]:
        """The judgements that failed (database, permission, procedure)."""
        verdict = self.score.verdict
        return tuple(name for name in JUDGEMENTS if not verdict[name])


@lru_cache(maxsize=64)
def _rescored(source: str, record: int, run: int, task_id: str, protocol: Protocol) -> RunScore:
    """One run of a trajectory file scored again, as the list first scored it (``score_paths``)."""
    records = _file_records(source)
    fmt = detect_output_format(list(records.values()))
    return score_run(records[record], run, protocol, output_format=fmt, task_id=task_id)


@lru_cache(maxsize=8)
def _file_records(path: str) -> dict[int, Record]:
    """The records of one trajectory file by their index in it (the last few files read are kept)."""
    return {record.index: record for record in load_records(path, lambda error: None)}


@dataclass
class LoadedSources:
    episodes: list[Episode] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # runs or files that could not be used, one line each
    files: int = 0  # trajectory files, run folders and logs read
    first_id: int = 0  # the id of the first episode (a later reading continues the numbering)
    known: dict[str, Episode] = field(default_factory=dict)  # by address: read before, or now
    replaced: list[Episode] = field(default_factory=list)  # infra_error episodes since completed
    prices: Prices | None = None


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


def is_run_folder(path: Path) -> bool:
    return path.is_dir() and (path / STORE_NAME).is_file()


def source_files(sources: Iterable[Path], *, allow_empty: bool = False) -> list[Path]:
    """Each source as the unit it is read in: run folders (a folder's own, or every one below it),
    Inspect logs, and the trajectory files outside run folders. A source with none of them is a
    ``SourceError`` (with ``allow_empty``, a folder that has none yet is accepted: a sweep about to
    write it)."""
    units: list[Path] = []
    for source in sources:
        if is_run_folder(source) or is_inspect_log(source):
            units.append(source)
            continue
        found: list[Path] = []
        if source.is_dir():
            below, _unreadable = walk_files(source, lambda name: name == STORE_NAME or name.endswith(".eval"))
            folders = sorted(file.parent for file in below if file.name == STORE_NAME)
            logs = sorted(file for file in below if file.name.endswith(".eval") and is_inspect_log(file))
            roots = [folder.resolve() for folder in folders]
            files = [
                file
                for file in iter_trajectory_files(source)
                if not any(file.resolve().is_relative_to(root) for root in roots)
            ]
            # an Inspect log written as JSON sits among trajectory files: read as the log it is
            logs += [file for file in files if file.suffix == ".json" and is_inspect_log(file)]
            files = [file for file in files if file not in logs]
            found = [*folders, *logs, *files]
        elif source.is_file():
            found = [source]
        if not found and not (allow_empty and source.is_dir()):
            raise SourceError(
                f"{source}: neither a run folder ({STORE_NAME}), an Inspect log nor trajectory files"
            )
        units.extend(found)
    return list(dict.fromkeys(units))
