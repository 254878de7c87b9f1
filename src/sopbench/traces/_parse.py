"""The validating parser: builds records from any JSON, or raises a ``FieldError`` with its path.

The fast paths (``_fast``) hand anything unusual to it, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from sopbench._io import (
    FieldError,
    LoadError,
    at,
    expect,
    expect_flag,
    json_type,
    optional,
    present,
    required,
    show,
)
from sopbench._json import JsonBoundError, check_json_depth, decode_bounded

from ._files import OLD_TOOL_LIST_NAMES
from ._model import (
    PUBLISHED_CHECKS,
    AgentConfig,
    Message,
    RecordedVerdict,
    Run,
    Setup,
    ToolCallRecord,
    VerdictLayout,
)

VERDICT_FLAGS = PUBLISHED_CHECKS
# The fields of a chat message itself; any other non-null field is kept in ``Message.extra``.
CHAT_MESSAGE_FIELDS = frozenset({"sender", "content", "tool_calls"})


def parse_setup(obj: dict[str, Any], field: str) -> Setup:
    tool_list = optional(obj, "tool_list", str, field)
    return Setup(
        env_mode=optional(obj, "env_mode", str, field),
        tool_list=OLD_TOOL_LIST_NAMES.get(tool_list, tool_list) if tool_list is not None else None,
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


def parse_run(data: Any, field: str, index: int) -> Run:
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
            key: value for key, value in obj.items() if key not in CHAT_MESSAGE_FIELDS and value is not None
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
        try:
            check_json_depth(arguments)
            text = orjson.dumps(arguments).decode()
        except JsonBoundError as exc:
            raise FieldError(at(function_field, "arguments"), f"JSON {exc}") from None
        except TypeError as exc:  # orjson refuses what JSON can hold but it cannot (a 65-bit integer)
            raise FieldError(
                at(function_field, "arguments"), f"cannot be written back as JSON ({exc})"
            ) from None
        return ToolCallRecord(optional(obj, "id", str, field), name, text, arguments)
    text = expect(arguments, str, at(function_field, "arguments"))
    decoded, error = decode_arguments(text)
    return ToolCallRecord(optional(obj, "id", str, field), name, text, decoded, error)


def decode_arguments(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object a tool call's argument text holds, or None and why it is not one (not JSON,
    not an object, or deeper or larger than the bound on a value a model supplies).

    The one reading of argument text, for recorded files and live episodes alike.
    """
    try:
        value = decode_bounded(text)
    except JsonBoundError as exc:
        return None, f"JSON {exc}"
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    if type(value) is not dict:
        return None, f"JSON {json_type(value).removeprefix('an ').removeprefix('a ')}, not an object"
    return value, None


def argument_problems(runs: Iterable[Run], file: Path | None, index: int) -> tuple[LoadError, ...]:
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


def parse_verdict(data: Any, field: str) -> RecordedVerdict:
    obj = expect(data, dict, field)
    current = "num_constraints" in obj or "num_constraints_expanded" in obj
    flags = {name: expect_flag(present(obj, name, field), at(field, name)) for name in VERDICT_FLAGS}
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
