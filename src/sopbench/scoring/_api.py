"""Scoring recorded runs: one run (``score_run``) or whole trajectory files, streamed (``score_paths``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sopbench._io import LoadError, StrPath
from sopbench.domains import UnknownDomain
from sopbench.evaluation import UnverifiedConstraint
from sopbench.statistics import JUDGEMENT_NAMES, Configuration, Outcome, Usage
from sopbench.tasks import Task, task_digest, task_ids
from sopbench.traces import (
    Record,
    Run,
    detect_output_format,
    iter_trajectory_files,
    parse_trajectory_file_name,
    read_trajectory_file,
)

from ._calls import PublishedCrash
from ._checks import VERDICT_KEYS, EpisodeScore
from ._episode import UnknownGoal, episode_calls, score_episode
from ._protocol import SOUND, Protocol

__all__ = [
    "RunScore",
    "ScoringError",
    "ScoringReport",
    "file_configuration",
    "load_records",
    "score_paths",
    "score_record",
    "score_run",
]


class ScoringError(Exception):
    """A run that cannot be scored, located by file, record and run."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        record: int | None = None,
        run: int | None = None,
        whole_record: bool = False,
    ):
        super().__init__(message)
        self.message = message
        self.source = source
        self.record = record
        self.run = run
        self.whole_record = whole_record  # no run of the record can be scored

    def __str__(self) -> str:
        parts = [p for p in (self.source, _label("record", self.record), _label("run", self.run)) if p]
        return ": ".join([*parts, self.message])


def _label(what: str, value: int | None) -> str | None:
    return None if value is None else f"{what} {value}"


@dataclass(frozen=True, slots=True)
class RunScore:
    """The verdict on one run under one protocol."""

    source: (
        str  # the trajectory file's path as given (``Record.source``; "" for a record not read from a file)
    )
    domain: str
    record: int  # index of the record in its file
    run: int  # index of the run in the record's interactions
    protocol: str
    verdict: dict[str, bool]
    explanations: tuple[str, ...]
    justified_refusal: bool | None  # None: not asked for, or the task must succeed
    should_succeed: bool
    goal: str
    # The verdict as score_episode made it (an evaluation.Verdict inside); ``verdict`` above is its
    # ``verdict_fields()``. None for scores not made by scoring a run (the refuse-all baseline).
    episode: EpisodeScore | None = field(default=None, compare=False, repr=False)
    # ``"<domain>/<goal>[<i>]"``, i the task's position among its goal's tasks (as the runner names
    # tasks); "" when unknown, then ``task_key`` falls back on the source and record.
    task_id: str = ""
    # What was measured; None: read from the trajectory file name of ``source``.
    configuration: Configuration | None = field(default=None, compare=False)
    usage: Usage | None = field(default=None, compare=False, repr=False)  # live episodes only
    # What a failed procedure left unverified, for scores read back without their ``episode`` (a
    # run folder's stored verdict); None: not known.
    unverified: tuple[UnverifiedConstraint, ...] | None = field(default=None, compare=False, repr=False)
    # The task scored (a trajectory's), or its stored digest (a run folder's): what makes two tasks
    # of the same id the same task (``task_digest``).
    task: Task | None = field(default=None, compare=False, repr=False)
    stored_digest: str = field(default="", compare=False, repr=False)
    # A pass in which the agent made no well-formed action (no call, or none with JSON-object
    # arguments; a run folder's rows also know unknown tools and bad arguments); None: not known.
    by_default: bool | None = field(default=None, compare=False)
    # The artefacts of a score read back without its ``episode`` (the verdict cache's); None: none.
    stored_artefacts: tuple[str, ...] | None = field(default=None, compare=False, repr=False)

    @property
    def task_digest(self) -> str:
        """sha256 of the task's content ("" when not known): equal digests, same task."""
        if self.stored_digest:
            return self.stored_digest
        return "" if self.task is None else task_digest(self.task)

    @property
    def passed(self) -> bool:
        return self.verdict["passed"]

    @property
    def artefacts(self) -> tuple[str, ...]:
        """Recording artefacts the verdict accounted for (sound protocol; ``scoring.ARTEFACTS``)."""
        return self.episode.artefacts if self.episode is not None else (self.stored_artefacts or ())

    @property
    def task_key(self) -> str:
        """What identifies the task across runs and sources."""
        return self.task_id or f"{self.source}#{self.record}"

    @property
    def config(self) -> Configuration:
        return self.configuration if self.configuration is not None else file_configuration(self.source)

    def outcome(self, *, with_digest: bool = False) -> Outcome:
        """This score as the statistics take it (with the task's digest when asked: a comparison
        pairs only the same task)."""
        failed = tuple(name for name in JUDGEMENT_NAMES if not self.verdict[name])
        unverified: tuple[UnverifiedConstraint, ...] = self.unverified or ()
        if self.episode is not None:
            unverified = self.episode.verdict.procedure.unverified
        return Outcome(
            self.config,
            self.domain,
            self.goal,
            self.task_key,
            self.run,
            self.passed,
            self.should_succeed,
            failed,
            unverified,
            self.usage,
            self.source,
            self.task_digest if with_digest else "",
            self.by_default,
        )

    def to_json(self) -> dict[str, Any]:
        """The ``sopbench evaluate`` output line."""
        out: dict[str, Any] = {
            "source": self.source,
            "domain": self.domain,
            "record": self.record,
            "run": self.run,
            **_configuration_fields(self.config),
            "goal": self.goal,
            "task_id": self.task_key,
            "protocol": self.protocol,
            "verdict": {key: self.verdict[key] for key in VERDICT_KEYS},
            "explanations": list(self.explanations),
            "artefacts": list(self.artefacts),
        }
        if self.justified_refusal is not None:
            out["justified_refusal"] = self.justified_refusal
        return out


def _configuration_fields(config: Configuration) -> dict[str, Any]:
    return config.as_dict()  # agent ("recorded" for a trajectory file), model, tool mode, tool list, user


_CONFIGURATIONS: dict[str, Configuration] = {}


def file_configuration(source: str) -> Configuration:
    """The configuration a trajectory file's name states (agent ``recorded``); a file named
    otherwise is its own configuration, named by the file."""
    known = _CONFIGURATIONS.get(source)
    if known is not None:
        return known
    path = Path(source)
    try:
        parsed = parse_trajectory_file_name(path)
    except Exception:  # noqa: BLE001 - any other name
        config = Configuration("recorded", path.name or "(unnamed)", None, None, None)
    else:
        config = Configuration(
            "recorded", parsed.assistant_model, parsed.tool_call_mode, parsed.tool_list, parsed.user_model
        )
    if len(_CONFIGURATIONS) > 4096:
        _CONFIGURATIONS.clear()
    _CONFIGURATIONS[source] = config
    return config


def score_run(
    record: Record,
    run_index: int,
    protocol: Protocol = SOUND,
    *,
    output_format: str | None = None,
    domain: str | None = None,
    credit_cards: str | None = None,
    justify_refusal: bool = False,
    task_id: str = "",
) -> RunScore:
    """Score run ``run_index`` of ``record``; raises ``ScoringError`` when it cannot be scored.

    ``output_format`` is how the file stored tool outputs ("tuple" or "value"; default: detected
    from this record). ``domain`` overrides the record's. ``credit_cards`` ("list"/"dict")
    overrides the bank card reading that the ``credit_cards_as_shipped`` quirk implies.
    ``justify_refusal`` also computes ``justified_refusal`` for tasks that must be refused.
    """
    source = record.source
    if not 0 <= run_index < len(record.runs):
        raise ScoringError(
            f"no run {run_index} (the record has {len(record.runs)})",
            source=source,
            record=record.index,
            run=run_index,
        )
    name = domain or record.domain
    fmt = output_format or detect_output_format([record])
    try:
        calls, executed = episode_calls(record.runs[run_index], protocol, justify_refusal=justify_refusal)
        score = score_episode(
            record.task,
            calls,
            record.runs[run_index].final_database,
            protocol,
            executed=executed,
            domain=name,
            output_format=fmt,
            credit_cards=credit_cards,
            justify_refusal=justify_refusal,
            program=_program_option(record),
        )
    except UnknownDomain as exc:
        raise ScoringError(str(exc).strip("\"'"), source=source, record=record.index, run=run_index) from None
    except UnknownGoal as exc:
        runs = len(record.runs)
        raise ScoringError(
            f"{exc} (its {runs} run{'s' if runs != 1 else ''} cannot be scored)",
            source=source,
            record=record.index,
            whole_record=True,
        ) from None
    except PublishedCrash as exc:
        raise ScoringError(
            f"the published evaluator fails on this run: {exc}",
            source=source,
            record=record.index,
            run=run_index,
        ) from None
    except RecursionError:
        raise ScoringError(
            "nested too deeply to score", source=source, record=record.index, run=run_index
        ) from None
    except Exception as exc:  # noqa: BLE001 - one malformed record must not stop a batch
        raise ScoringError(
            f"cannot score this run ({type(exc).__name__}: {exc})",
            source=source,
            record=record.index,
            run=run_index,
        ) from exc
    return RunScore(
        source=source,
        domain=name,
        record=record.index,
        run=run_index,
        protocol=protocol.name,
        verdict=score.verdict_fields(),
        explanations=score.explanations,
        justified_refusal=score.justified_refusal,
        should_succeed=record.task.action_should_succeed,
        goal=record.task.goal,
        episode=score,
        task_id=task_id,
        task=record.task,
        by_default=score.passed and not _made_well_formed_call(record.runs[run_index]),
    )


def _made_well_formed_call(run: Run) -> bool:
    """A recorded run in which the agent's environment executed a call with JSON-object arguments."""
    return any(isinstance(call.arguments, Mapping) for call, _ in run.executed_calls())


def score_record(record: Record, protocol: Protocol = SOUND, **options: Any) -> list[RunScore]:
    """Every run of one record."""
    return [score_run(record, index, protocol, **options) for index in range(len(record.runs))]


@dataclass
class ScoringReport:
    """What streaming met besides scores: files, records, runs, and what could not be scored."""

    files: int = 0
    records: int = 0
    runs: int = 0
    scored: int = 0
    records_without_runs: list[tuple[str, int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "records": self.records,
            "runs": self.runs,
            "scored": self.scored,
            "records_without_runs": len(self.records_without_runs),
            "errors": list(self.errors),
        }


ErrorCallback = Callable[[Exception], None]
ProgressCallback = Callable[[Path, int, int], None]  # file, its position (1-based), runs scored so far
CreditCardChoice = Callable[[Path], str | None]


def score_paths(
    paths: StrPath | Iterable[StrPath],
    protocol: Protocol = SOUND,
    *,
    keep_going: bool = True,
    on_error: ErrorCallback | None = None,
    progress: ProgressCallback | None = None,
    report: ScoringReport | None = None,
    credit_cards: CreditCardChoice | None = None,
    justify_refusal: bool = False,
    runs: str = "all",
) -> Iterator[RunScore]:
    """Score every run of every trajectory file in ``paths`` (files, or folders searched recursively).

    Files are read and scored one at a time. A record that cannot be loaded or a run that cannot be
    scored is passed to ``on_error`` (and listed in ``report.errors``) and the rest goes on; without
    ``keep_going`` it raises. Records without any run are counted in ``report.records_without_runs``.
    ``credit_cards(path)`` may choose the bank card reading per file ("list"/"dict"; None: the
    protocol's). ``runs="first"`` scores only each record's first run (what the published evaluator
    scored by default).
    """
    report = report if report is not None else ScoringReport()

    def fail(error: Exception) -> None:
        report.errors.append(error.describe(full_path=True) if isinstance(error, LoadError) else str(error))
        if not keep_going:
            raise error
        if on_error is not None:
            on_error(error)

    for position, path, records, fmt, cards in read_files(paths, fail, credit_cards):
        report.files += 1
        for record, task_id in zip(records, task_ids(record.task for record in records), strict=True):
            report.records += 1
            if not record.runs:
                report.records_without_runs.append((record.source, record.index))
                continue
            indexes = range(1) if runs == "first" else range(len(record.runs))
            report.runs += len(indexes)
            for run_index in indexes:
                try:
                    score = score_run(
                        record,
                        run_index,
                        protocol,
                        output_format=fmt,
                        credit_cards=cards,
                        justify_refusal=justify_refusal,
                        task_id=task_id,
                    )
                except ScoringError as error:
                    fail(error)
                    if error.whole_record:
                        break
                    continue
                report.scored += 1
                yield score
        if progress is not None:
            progress(path, position, report.scored)


def read_files(
    paths: StrPath | Iterable[StrPath], on_error: ErrorCallback, credit_cards: CreditCardChoice | None
) -> Iterator[tuple[int, Path, list[Record], str, str | None]]:
    """The one loop over trajectory files of the scoring functions: each readable file (position
    from 1, path, records, its output format, its bank card reading) one at a time; a bad record or
    an unreadable file goes to ``on_error``. A file without records is given too (to be counted),
    with no format and no card reading: nothing of it is scored."""
    for position, path in enumerate(iter_trajectory_files(paths), start=1):
        records = read_trajectory_file(path, on_error)
        if records is None:
            continue
        if not records:
            yield position, path, records, "", None
            continue
        cards = credit_cards(path) if credit_cards is not None else None
        yield position, path, records, detect_output_format(records), cards


def load_records(path: StrPath, on_error: ErrorCallback | None = None) -> list[Record]:
    """Every loadable record of one trajectory file (bad records and an unreadable file go to
    ``on_error``, default: raise)."""
    return read_trajectory_file(path, on_error) or []


def _program_option(record: Record) -> str | None:
    """The default-SOP option of the strict system a run in env_mode ``program`` talked to, or None."""
    setup = record.setup
    if setup is None or setup.env_mode != "program":
        return None
    return setup.default_constraint_option or "full"
