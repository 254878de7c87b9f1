"""Loading trajectory files: streaming, validated once, every failure a located ``LoadError``.

``iter_records`` reads one file at a time (a file is decoded whole: it is one JSON list) and builds
typed records without copying the decoded JSON. A bad record or file raises, or with ``keep_going``
is reported and skipped.
"""

from __future__ import annotations

import logging
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
from sopbench.tasks._load import parse_task_json

from ._model import (
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
_VERDICT_FLAGS = (
    "no_tool_call_error",
    "constraint_not_violated",
    "database_match",
    "action_successfully_called",
    "dirgraph_satisfied",
    "action_called_correctly",
    "success",
)

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
    return sorted(p for p in folder.rglob("*") if p.name.endswith(TRAJECTORY_SUFFIXES) and p.is_file())


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
    file = None if file is None else Path(file)
    try:
        return _parse_record(data, file, index)
    except FieldError as exc:
        raise exc.located(file=file, record=index) from None
    except RecursionError:
        raise LoadError("nested too deeply to load", file=file, record=index) from None


def detect_output_format(records: Iterable[Record]) -> OutputFormat:
    """How a file's tool outputs were stored: ``"tuple"`` (older: ``"(True, 750)"``) or ``"value"``.

    One tuple-shaped output decides: in tuple files many outputs are not tuples anyway (exceptions,
    "tool not found", tools returning a bare value), while value files never hold one.
    """
    for record in records:
        for run in record.runs:
            for message in run.messages:
                if message.is_tool and message.content is not None and is_tuple_output(message.content):
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
    try:
        entries = _record_list(read_json(path), path)
    except LoadError as error:
        report(error)
        return
    for index, entry in enumerate(entries):
        try:
            record = record_from_json(entry, file=path, index=index)
        except LoadError as error:
            report(error)
            continue
        yield record


def _record_list(data: Any, path: Path) -> list[Any]:
    if data is None:  # one published file is `null`: a run that was never recorded
        return []
    if not isinstance(data, list):
        raise LoadError(f"expected a JSON list of records, got {json_type(data)}", file=path)
    return data


def _parse_record(data: Any, file: Path | None, index: int) -> Record:
    obj = expect(data, dict, "")
    domain = required(obj, "domain", str, "")
    setup = _parse_setup(required(obj, "setup", dict, ""), "setup")
    task = parse_task_json(present(obj, "task", ""), domain=domain, goal=None, index=None, field="task")
    runs = tuple(
        _parse_run(run, at("interactions", i), i)
        for i, run in enumerate(optional(obj, "interactions", list, "") or ())
    )
    evaluations = tuple(
        _parse_verdict(verdict, at("evaluations", i))
        for i, verdict in enumerate(optional(obj, "evaluations", list, "") or ())
    )
    return Record(
        file=file,
        index=index,
        domain=domain,
        setup=setup,
        task=task,
        runs=runs,
        evaluations=evaluations,
        statistics=optional(obj, "statistics", dict, ""),
        problems=_argument_problems(runs, file, index),
        raw=obj,
    )


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
    decoded, error = _decode_arguments(text)
    return ToolCallRecord(optional(obj, "id", str, field), name, text, decoded, error)


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


def _argument_problems(runs: tuple[Run, ...], file: Path | None, index: int) -> tuple[LoadError, ...]:
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
