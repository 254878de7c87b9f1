"""Loading trajectory files: streaming, validated once, every failure a located ``LoadError``.

``iter_records`` reads one file at a time (a file is decoded whole: it is one JSON list) and builds
typed records without copying the decoded JSON. A bad record or file raises, or with ``keep_going``
is reported and skipped.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator
from os import PathLike
from pathlib import Path
from typing import Any

import orjson

from sopbench._io import (
    FieldError,
    LoadError,
    StrPath,
    at,
    collector_paused,
    decode_json_text,
    expect,
    expect_flag,
    json_type,
    optional,
    present,
    read_json,
    required,
    show,
)
from sopbench.tasks import Task, parse_task_json

from ._model import (
    PUBLISHED_CHECKS,
    AgentConfig,
    Message,
    OutputFormat,
    Record,
    RecordedVerdict,
    Run,
    Setup,
    ToolCallRecord,
    TrajectoryFile,
    VerdictLayout,
)

logger = logging.getLogger(__name__)

TRAJECTORY_SUFFIXES = (".json.gz", ".json")
# The model name is greedy so that dashes and dots inside it never end it early; every later part is
# anchored on its own "-<key>_" marker.
_FILE_NAME = re.compile(
    r"^(?:usr_(?P<user>.+?)-)?ast_(?P<model>.+)-mode_(?P<mode>.+?)-dep_(?P<dep>.+?)-fmt_(?P<fmt>.+?)"
    r"-tool_(?P<tool>.+?)-shuffle_(?P<shuffle>True|False)$"
)
# Older simulators stored the whole (success, value) tuple a tool returned, as Python text.
_TUPLE_OUTPUT = re.compile(r"^\((?:True|False), ")
_OLD_TOOL_LIST_NAMES = {"test": "oracle"}
_CHAT_MESSAGE_FIELDS = frozenset({"sender", "content", "tool_calls"})
_VERDICT_FLAGS = PUBLISHED_CHECKS
_VERDICT_FLAGS_AND_SHOULD_SUCCEED = (*_VERDICT_FLAGS, "action_should_succeed")

ErrorHandler = Callable[[LoadError], None]


# -- files ---------------------------------------------------------------------------------------------


def iter_trajectory_files(paths: StrPath | Iterable[StrPath]) -> Iterator[Path]:
    """Trajectory files named by ``paths``: files as given, folders searched recursively (sorted).

    A folder yields its ``*.json`` and ``*.json.gz`` files, e.g. ``output/`` with ``<domain>/``
    subfolders. A file reached twice (named and inside a named folder) is yielded once, so that no run
    is counted twice. Paths that do not exist are passed on: reading them reports the problem.
    """
    seen: set[Path] = set()
    for path in _as_paths(paths):
        found = _files_in(path) if path.is_dir() else [path]
        for file in found:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                yield file


def _files_in(folder: Path) -> list[Path]:
    """The trajectory files below ``folder``; a folder that cannot be listed is listed itself, so
    that reading it reports the problem (never skipped without a word)."""
    found: list[Path] = []
    unreadable: list[Path] = []

    def failed(error: OSError) -> None:
        unreadable.append(Path(error.filename) if error.filename else folder)

    for root, _dirs, names in os.walk(folder, onerror=failed, followlinks=True):
        base = Path(root)
        found.extend(base / name for name in names if name.endswith(TRAJECTORY_SUFFIXES))
    return sorted([p for p in found if p.is_file()] + unreadable)


def parse_trajectory_file_name(path: StrPath) -> TrajectoryFile:
    """The run configuration in a file name such as ``bank/ast_gpt-4o-mode_fc-...-shuffle_False.json``."""
    path = Path(path)
    stem = _strip_suffix(path.name)
    match = _FILE_NAME.match(stem)
    if match is None:
        raise LoadError(
            "file name does not follow [usr_<user>-]ast_<model>-mode_<mode>-dep_<option>-fmt_<format>"
            "-tool_<list>-shuffle_<bool>",
            file=path,
        )
    tool_list = match["tool"]
    return TrajectoryFile(
        path=path,
        domain=path.parent.name or None,
        assistant_model=match["model"],
        tool_call_mode=match["mode"],
        user_model=match["user"],
        default_constraint_option=match["dep"],
        constraint_descr_format=match["fmt"],
        tool_list=_OLD_TOOL_LIST_NAMES.get(tool_list, tool_list),
        shuffle=match["shuffle"] == "True",
    )


def _as_paths(paths: StrPath | Iterable[StrPath]) -> list[Path]:
    if isinstance(paths, str | PathLike):
        return [Path(paths)]
    return [Path(p) for p in paths]


def _strip_suffix(name: str) -> str:
    for suffix in TRAJECTORY_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


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


def record_from_json(data: Any, *, file: StrPath | None = None, index: int = 0) -> Record:
    """One record from its decoded JSON; raises ``LoadError`` located at ``file`` and ``index``."""
    return FileDecoder(None if file is None else Path(file), trusted=False).record(data, index)


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

    def record(self, data: Any, index: int) -> Record:
        """One record; raises ``LoadError`` located at this file and ``index``."""
        try:
            return self._parse_record(data, index)
        except FieldError as exc:
            raise exc.located(file=self.file, record=index) from None
        except RecursionError:
            raise LoadError("nested too deeply to load", file=self.file, record=index) from None

    def _parse_record(self, data: Any, index: int) -> Record:
        obj = expect(data, dict, "")
        domain = required(obj, "domain", str, "")
        setup = self._setup_of(required(obj, "setup", dict, ""))
        task = _embedded_task(present(obj, "task", ""), domain, self.trusted)
        interactions = optional(obj, "interactions", list, "") or ()
        runs: list[Run] = []
        checked: list[Run] = []  # runs that may hold arguments that are not a JSON object
        for i, run_data in enumerate(interactions):
            flagged: list[bool] = []
            run = _fast_run(run_data, i, flagged)
            if run is None:
                run = _parse_run(run_data, at("interactions", i), i)
                flagged.append(True)
            if flagged:
                checked.append(run)
            runs.append(run)
        evaluations = []
        for i, verdict_data in enumerate(optional(obj, "evaluations", list, "") or ()):
            verdict = _fast_verdict(verdict_data)
            evaluations.append(
                verdict if verdict is not None else _parse_verdict(verdict_data, at("evaluations", i))
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
            problems=_argument_problems(checked, self.file, index) if checked else (),
            raw=obj,
        )

    def _setup_of(self, obj: dict[str, Any]) -> Setup:
        # Every record of a file repeats the same setup; Setup is immutable, so one object serves all.
        if not self.trusted:
            return _parse_setup(obj, "setup")
        key = orjson.dumps(obj)
        if key != self._setup_key or self._setup is None:
            self._setup = _parse_setup(obj, "setup")
            self._setup_key = key
        return self._setup


# Tasks embedded in trajectory records, by domain and orjson bytes of the task object: the 903
# published tasks recur in every file that ran them (14k records, ~2k distinct task objects), and
# parsing a task (constraint trees, action graph) was the largest part of loading. Task objects are
# immutable and their dictionaries are read-only by contract, so records share them.
_TASK_MEMO_LIMIT = 4096
_TASK_MEMO: dict[tuple[str, bytes], tuple[Any, Task]] = {}


def _embedded_task(data: Any, domain: str, trusted: bool) -> Task:
    key = None
    if type(data) is dict:
        try:
            key = (domain, orjson.dumps(data))
        except TypeError:  # not plain JSON data (integers beyond 64 bits, foreign types, too deep)
            key = None
        else:
            hit = _TASK_MEMO.get(key)
            if hit is not None and (trusted or hit[0] == data):
                return hit[1]
    task = parse_task_json(data, domain=domain, goal=None, index=None, field="task")
    if key is not None:
        if len(_TASK_MEMO) >= _TASK_MEMO_LIMIT:
            _TASK_MEMO.clear()
        _TASK_MEMO[key] = (data, task)
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


# -- fast paths ------------------------------------------------------------------------------------
# Records are built millions of fields at a time, so well-formed input takes these paths: exact type
# tests and no field paths spelled out. Anything unusual returns None and the validating parser
# below builds the same object or raises the located error, so fast and slow paths cannot disagree.

_ABSENT: Any = object()

# The typed records are frozen slotted dataclasses, whose generated __init__ sets each field through
# ``object.__setattr__`` (about twice the cost of the loader's own work per message). The fast paths
# fill the slots directly through the slot descriptors instead: the same objects, equal in every way.
_new = object.__new__
_SET_SENDER, _SET_CONTENT, _SET_CALLS, _SET_CALL_ID, _SET_TOOL_NAME, _SET_EXTRA = (
    Message.__dict__[name].__set__
    for name in ("sender", "content", "tool_calls", "tool_call_id", "tool_name", "extra")
)
_SET_ID, _SET_NAME, _SET_TEXT, _SET_ARGUMENTS, _SET_ERROR = (
    ToolCallRecord.__dict__[name].__set__
    for name in ("id", "name", "arguments_text", "arguments", "arguments_error")
)


def _message(
    sender: str | None,
    content: str | None,
    tool_calls: tuple[ToolCallRecord, ...],
    tool_call_id: str | None,
    tool_name: str | None,
    extra: dict[str, Any],
) -> Message:
    """``Message(sender, content, tool_calls, tool_call_id, tool_name, extra)``, faster."""
    message = _new(Message)
    _SET_SENDER(message, sender)
    _SET_CONTENT(message, content)
    _SET_CALLS(message, tool_calls)
    _SET_CALL_ID(message, tool_call_id)
    _SET_TOOL_NAME(message, tool_name)
    _SET_EXTRA(message, extra)
    return message


def _tool_call(
    call_id: str | None, name: str, text: str, arguments: dict[str, Any] | None, error: str | None
) -> ToolCallRecord:
    """``ToolCallRecord(call_id, name, text, arguments, error)``, faster."""
    call = _new(ToolCallRecord)
    _SET_ID(call, call_id)
    _SET_NAME(call, name)
    _SET_TEXT(call, text)
    _SET_ARGUMENTS(call, arguments)
    _SET_ERROR(call, error)
    return call


def _fast_run(data: Any, index: int, flagged: list[bool]) -> Run | None:
    """The run, or None; a call whose arguments are not a JSON object appends to ``flagged``."""
    if type(data) is not dict:
        return None
    messages = data.get("interaction")
    prompt = data.get("prompt")
    database = data.get("database")
    if type(messages) is not list or type(prompt) is not str or type(database) is not dict:
        return None
    parsed = []
    for message in messages:
        built = _fast_message(message, flagged)
        if built is None:
            return None
        parsed.append(built)
    return Run(index, prompt, tuple(parsed), database)


def _fast_message(obj: Any, flagged: list[bool]) -> Message | None:
    if type(obj) is not dict:
        return None
    sender = obj.get("sender", _ABSENT)
    content = obj.get("content")
    if sender is _ABSENT:  # a tool output
        tool_name = obj.get("tool_name")
        call_id = obj.get("tool_call_id")
        if (
            type(content) is not str
            or type(tool_name) is not str
            or (call_id is not None and type(call_id) is not str)
        ):
            return None
        return _message(None, content, (), call_id, tool_name, {})
    if type(sender) is not str or (content is not None and type(content) is not str):
        return None
    calls = obj.get("tool_calls")
    tool_calls: tuple[ToolCallRecord, ...] = ()
    if calls is not None:
        if type(calls) is not list:
            return None
        if calls:
            built = []
            for call in calls:
                record = _fast_call(call, flagged)
                if record is None:
                    return None
                built.append(record)
            tool_calls = tuple(built)
    extra = {
        key: value for key, value in obj.items() if value is not None and key not in _CHAT_MESSAGE_FIELDS
    }
    return _message(sender, content, tool_calls, None, None, extra)


def _fast_call(obj: Any, flagged: list[bool]) -> ToolCallRecord | None:
    if type(obj) is not dict:
        return None
    function = obj.get("function")
    call_id = obj.get("id")
    if type(function) is not dict or (call_id is not None and type(call_id) is not str):
        return None
    name = function.get("name")
    text = function.get("arguments")
    if type(name) is not str or type(text) is not str:
        return None
    decoded, error = decode_arguments(text)
    if error is not None:
        flagged.append(True)
    return _tool_call(call_id, name, text, decoded, error)


def _fast_verdict(obj: Any) -> RecordedVerdict | None:
    if type(obj) is not dict:
        return None
    flags = []
    for name in _VERDICT_FLAGS_AND_SHOULD_SUCCEED:
        value = obj.get(name)
        if type(value) is not bool:
            if type(value) is not int or (value != 0 and value != 1):
                return None
            value = value == 1
        flags.append(value)
    goal = obj.get("user_goal")
    messages = obj.get("num_messages")
    function_calls = obj.get("num_function_calls")
    if type(goal) is not str or type(messages) is not int or type(function_calls) is not int:
        return None
    current = "num_constraints" in obj or "num_constraints_expanded" in obj
    constraints = expanded = None
    if current:
        constraints = obj.get("num_constraints")
        expanded = obj.get("num_constraints_expanded")
        if type(constraints) is not int or type(expanded) is not int:
            return None
    return RecordedVerdict(
        layout=VerdictLayout.CURRENT if current else VerdictLayout.LEGACY,
        user_goal=goal,
        action_should_succeed=flags[-1],
        num_messages=messages,
        num_function_calls=function_calls,
        num_constraints=constraints,
        num_constraints_expanded=expanded,
        raw=obj,
        **dict(zip(_VERDICT_FLAGS, flags, strict=False)),
    )


# -- the validating parser -------------------------------------------------------------------------


def _parse_setup(obj: dict[str, Any], field: str) -> Setup:
    tool_list = optional(obj, "tool_list", str, field)
    return Setup(
        env_mode=optional(obj, "env_mode", str, field),
        tool_list=_OLD_TOOL_LIST_NAMES.get(tool_list, tool_list) if tool_list is not None else None,
        user_agent=_parse_agent(obj.get("user_agent"), at(field, "user_agent")),
        assistant_agent=_parse_agent(obj.get("assistant_agent"), at(field, "assistant_agent")),
        shuffle_func=optional(obj, "shuffle_func", bool, field),
        default_constraint_option=optional(obj, "default_constraint_option", str, field),
        constraint_descr_format=optional(obj, "constraint_descr_format", str, field),
    )


def _parse_agent(data: Any, field: str) -> AgentConfig | None:
    if data is None:
        return None
    obj = expect(data, dict, field)
    temperature = optional(obj, "temperature", (int, float), field)
    top_p = optional(obj, "top_p", (int, float), field)
    return AgentConfig(
        model=optional(obj, "model", str, field),
        temperature=None if temperature is None else float(temperature),
        top_p=None if top_p is None else float(top_p),
        max_tokens=optional(obj, "max_tokens", int, field),
        tool_call_mode=optional(obj, "tool_call_mode", str, field),
    )


def _parse_run(data: Any, field: str, index: int) -> Run:
    obj = expect(data, dict, field)
    messages_field = at(field, "interaction")
    messages = required(obj, "interaction", list, field)
    return Run(
        index=index,
        prompt=required(obj, "prompt", str, field),
        messages=tuple(_parse_message(message, at(messages_field, i)) for i, message in enumerate(messages)),
        final_database=required(obj, "database", dict, field),
    )


def _parse_message(data: Any, field: str) -> Message:
    obj = expect(data, dict, field)
    if "sender" not in obj:
        return _parse_tool_message(obj, field)
    calls_field = at(field, "tool_calls")
    calls = optional(obj, "tool_calls", list, field) or ()
    return Message(
        sender=required(obj, "sender", str, field),
        content=optional(obj, "content", str, field),
        tool_calls=tuple(_parse_tool_call(call, at(calls_field, i)) for i, call in enumerate(calls)),
        extra={
            key: value for key, value in obj.items() if key not in _CHAT_MESSAGE_FIELDS and value is not None
        },
    )


def _parse_tool_message(obj: dict[str, Any], field: str) -> Message:
    if "tool_name" not in obj:
        raise FieldError(
            at(field, "sender"), "missing (a message needs a sender, or a tool_name if it is a tool output)"
        )
    return Message(
        sender=None,
        content=required(obj, "content", str, field),
        tool_call_id=optional(obj, "tool_call_id", str, field),
        tool_name=required(obj, "tool_name", str, field),
    )


def _parse_tool_call(data: Any, field: str) -> ToolCallRecord:
    obj = expect(data, dict, field)
    function_field = at(field, "function")
    function = required(obj, "function", dict, field)
    name = required(function, "name", str, function_field)
    arguments = present(function, "arguments", function_field)
    if isinstance(arguments, dict):  # some backends hand over decoded arguments
        return ToolCallRecord(
            optional(obj, "id", str, field), name, orjson.dumps(arguments).decode(), arguments
        )
    text = expect(arguments, str, at(function_field, "arguments"))
    decoded, error = decode_arguments(text)
    return ToolCallRecord(optional(obj, "id", str, field), name, text, decoded, error)


def decode_arguments(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object a tool call's argument text holds, or None and why it is not one.

    The one reading of argument text, for recorded files and live episodes alike.
    """
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    else:
        if type(value) is dict:
            return value, None
    # Not a JSON object for orjson: Python's json decides (it reads NaN) and words the error.
    return _decode_arguments(text)


def _decode_arguments(text: str) -> tuple[dict[str, Any] | None, str | None]:
    try:
        value = decode_json_text(text)
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    except RecursionError:
        return None, "JSON nested too deeply"
    if not isinstance(value, dict):
        return None, f"JSON {json_type(value).removeprefix('an ').removeprefix('a ')}, not an object"
    return value, None


def _argument_problems(runs: Iterable[Run], file: Path | None, index: int) -> tuple[LoadError, ...]:
    problems = []
    for run in runs:
        for position, message in enumerate(run.messages):
            for call_position, call in enumerate(message.tool_calls):
                if call.arguments_error is None:
                    continue
                field = f"interactions[{run.index}].interaction[{position}].tool_calls[{call_position}].function.arguments"
                message_text = (
                    f"arguments of {call.name!r} are {call.arguments_error}: {show(call.arguments_text)}"
                )
                problems.append(LoadError(message_text, file=file, record=index, field=field))
    return tuple(problems)


def _parse_verdict(data: Any, field: str) -> RecordedVerdict:
    obj = expect(data, dict, field)
    current = "num_constraints" in obj or "num_constraints_expanded" in obj
    flags = {name: expect_flag(present(obj, name, field), at(field, name)) for name in _VERDICT_FLAGS}
    return RecordedVerdict(
        layout=VerdictLayout.CURRENT if current else VerdictLayout.LEGACY,
        user_goal=required(obj, "user_goal", str, field),
        action_should_succeed=expect_flag(
            present(obj, "action_should_succeed", field), at(field, "action_should_succeed")
        ),
        num_messages=required(obj, "num_messages", int, field),
        num_function_calls=required(obj, "num_function_calls", int, field),
        num_constraints=required(obj, "num_constraints", int, field) if current else None,
        num_constraints_expanded=required(obj, "num_constraints_expanded", int, field) if current else None,
        raw=obj,
        **flags,
    )
