"""Loading trajectory files: streaming, validated once, every failure a located ``LoadError``.

``iter_records`` reads one file at a time (a file is decoded whole: it is one JSON list) and builds
typed records without copying the decoded JSON. A bad record or file raises, or with ``keep_going``
is reported and skipped.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from sopbench._io import (
    FieldError,
    LoadError,
    StrPath,
    at,
    collector_paused,
    expect,
    json_type,
    optional,
    present,
    read_json,
    required,
)
from sopbench.tasks import Task, parse_task_json

from ._fast import fast_run, fast_verdict
from ._files import iter_trajectory_files
from ._model import (
    OutputFormat,
    Record,
    Run,
    Setup,
)
from ._parse import argument_problems, parse_run, parse_setup, parse_verdict

__all__ = [
    "ErrorHandler",
    "FileDecoder",
    "detect_output_format",
    "is_tuple_output",
    "iter_records",
    "read_trajectory_file",
    "record_from_json",
]

logger = logging.getLogger(__name__)

# Older simulators stored the whole (success, value) tuple a tool returned, as Python text.
_TUPLE_OUTPUT = re.compile(r"^\((?:True|False), ")

ErrorHandler = Callable[[LoadError], None]


# -- records -------------------------------------------------------------------------------------------


def iter_records(
    paths: StrPath | Iterable[StrPath],
    *,
    keep_going: bool = False,
    on_error: ErrorHandler | None = None,
) -> Iterator[Record]:
    """Every record of every trajectory file in ``paths`` (files or folders), one file at a time.

    Without ``keep_going`` the first problem raises ``LoadError``. With it, a bad record is passed to
    ``on_error`` (default: logged as a warning) and skipped, and a file that cannot be read or
    decoded is passed on and the next file is read. A ``null`` or ``[]`` file has no records.
    """
    report = _error_reporter(keep_going, on_error)
    for path in iter_trajectory_files(paths):
        yield from _records_of_file(path, report)


def record_from_json(
    data: Any, *, file: StrPath | None = None, index: int = 0, task: Task | None = None
) -> Record:
    """One record from its decoded JSON; raises ``LoadError`` located at ``file`` and ``index``.

    ``task``, when given, is the task the record's ``"task"`` object was written from: the record
    holds it as it is instead of parsing that object again (the runner scores every episode this
    way, and parsing the task was the largest part of building the record)."""
    return FileDecoder(None if file is None else Path(file), trusted=False).record(data, index, task)


class FileDecoder:
    """Builds the records of one decoded trajectory file, sharing what records of a file repeat.

    ``trusted`` says the JSON came from ``orjson.loads``: it holds only JSON types (no tuples, no
    NaN), so equal ``orjson`` bytes mean an equal value. Otherwise a memoised task is reused only
    when its source object also compares equal (orjson writes NaN as null and tuples as lists).
    """

    __slots__ = ("file", "trusted", "_setup_key", "_setup")

    def __init__(self, file: Path | None, *, trusted: bool) -> None:
        self.file = file
        self.trusted = trusted
        self._setup_key: bytes | None = None
        self._setup: Setup | None = None

    def record(self, data: Any, index: int, task: Task | None = None) -> Record:
        """One record; raises ``LoadError`` located at this file and ``index``. ``task`` is the
        record's task when the caller already holds it (see ``record_from_json``)."""
        try:
            return self._parse_record(data, index, task)
        except FieldError as exc:
            raise exc.located(file=self.file, record=index) from None
        except RecursionError:
            raise LoadError("nested too deeply to load", file=self.file, record=index) from None

    def _parse_record(self, data: Any, index: int, known_task: Task | None) -> Record:
        obj = expect(data, dict, "")
        domain = required(obj, "domain", str, "")
        setup = self._setup_of(required(obj, "setup", dict, ""))
        embedded = present(obj, "task", "")
        task = known_task if known_task is not None else _embedded_task(embedded, domain, self.trusted)
        interactions = optional(obj, "interactions", list, "") or ()
        runs: list[Run] = []
        checked: list[Run] = []  # runs that may hold arguments that are not a JSON object
        for i, run_data in enumerate(interactions):
            flagged: list[bool] = []
            run = fast_run(run_data, i, flagged)
            if run is None:
                run = parse_run(run_data, at("interactions", i), i)
                flagged.append(True)
            if flagged:
                checked.append(run)
            runs.append(run)
        evaluations = []
        for i, verdict_data in enumerate(optional(obj, "evaluations", list, "") or ()):
            verdict = fast_verdict(verdict_data)
            evaluations.append(
                verdict if verdict is not None else parse_verdict(verdict_data, at("evaluations", i))
            )
        return Record(
            file=self.file,
            index=index,
            domain=domain,
            setup=setup,
            task=task,
            runs=tuple(runs),
            evaluations=tuple(evaluations),
            statistics=optional(obj, "statistics", dict, ""),
            problems=argument_problems(checked, self.file, index) if checked else (),
            raw=obj,
        )

    def _setup_of(self, obj: dict[str, Any]) -> Setup:
        # Every record of a file repeats the same setup; Setup is immutable, so one object serves all.
        if not self.trusted:
            return parse_setup(obj, "setup")
        key = orjson.dumps(obj)
        if key != self._setup_key or self._setup is None:
            self._setup = parse_setup(obj, "setup")
            self._setup_key = key
        return self._setup


# Tasks embedded in trajectory records, by domain and the sha256 of the orjson bytes of the task
# object: the 903 published tasks recur in every file that ran them (14k records, ~2k distinct task
# objects), and parsing a task (constraint trees, action graph) was the largest part of loading. Task
# objects are immutable and their dictionaries are read-only by contract, so records share them.
# The digest, not the bytes, is the key (the bytes held 58 MB over the dev trajectories). Data from
# orjson holds only JSON types, so equal bytes are equal data; data a caller built may hold tuples
# or NaN that the bytes blur, so such an entry keeps its data to compare (and a trusted entry,
# which keeps none, is not used for it).
_TASK_MEMO_LIMIT = 4096
_TASK_MEMO: dict[tuple[str, bytes], tuple[Any, Task]] = {}


def _embedded_task(data: Any, domain: str, trusted: bool) -> Task:
    key = None
    if type(data) is dict:
        try:
            key = (domain, hashlib.sha256(orjson.dumps(data)).digest())
        except TypeError:  # not plain JSON data (integers beyond 64 bits, foreign types, too deep)
            key = None
        else:
            hit = _TASK_MEMO.get(key)
            if hit is not None and (trusted or (hit[0] is not None and hit[0] == data)):
                return hit[1]
    task = parse_task_json(data, domain=domain, goal=None, index=None, field="task")
    if key is not None:
        if len(_TASK_MEMO) >= _TASK_MEMO_LIMIT:
            _TASK_MEMO.clear()
        _TASK_MEMO[key] = (None if trusted else data, task)
    return task


def detect_output_format(records: Iterable[Record]) -> OutputFormat:
    """How a file's tool outputs were stored: ``"tuple"`` (older: ``"(True, 750)"``) or ``"value"``.

    One tuple-shaped output decides: in tuple files many outputs are not tuples anyway (exceptions,
    "tool not found", tools returning a bare value), while value files never hold one.
    """
    match = _TUPLE_OUTPUT.match
    for record in records:
        for run in record.runs:
            for message in run.messages:
                if message.sender is None and message.content is not None and match(message.content):
                    return "tuple"
    return "value"


def is_tuple_output(text: str) -> bool:
    """Whether a recorded tool output is a whole ``(success, value)`` tuple, as older runs stored it."""
    return _TUPLE_OUTPUT.match(text) is not None


def _error_reporter(keep_going: bool, on_error: ErrorHandler | None) -> ErrorHandler:
    def report(error: LoadError) -> None:
        if not keep_going:
            raise error
        if on_error is None:
            logger.warning("skipped: %s", error)
        else:
            on_error(error)

    return report


def _records_of_file(path: Path, report: ErrorHandler) -> Iterator[Record]:
    yield from read_trajectory_file(path, report) or ()


def read_trajectory_file(path: StrPath, on_error: ErrorHandler | None = None) -> list[Record] | None:
    """Every loadable record of one trajectory file, or None when the file cannot be read.

    Each bad record, and an unreadable file, is passed to ``on_error`` (default: raise) as a
    ``LoadError`` naming the file and the record; the other records are kept.
    """
    path = Path(path)

    def fail(error: LoadError) -> None:
        if on_error is None:
            raise error
        on_error(error)

    with collector_paused():  # decoding and building allocate millions of objects, none cyclic
        try:
            entries = _record_list(read_json(path), path)
        except LoadError as error:
            fail(error)
            return None
        records = []
        decoder = FileDecoder(path, trusted=True)  # the data came from orjson: plain JSON types only
        for index, entry in enumerate(entries):
            try:
                records.append(decoder.record(entry, index))
            except LoadError as error:
                fail(error)
    return records


def _record_list(data: Any, path: Path) -> list[Any]:
    if data is None:  # one published file is `null`: a run that was never recorded
        return []
    if not isinstance(data, list):
        raise LoadError(f"expected a JSON list of records, got {json_type(data)}", file=path)
    return data
