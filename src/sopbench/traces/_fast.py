"""Fast paths for well-formed records (exact type tests, no field paths spelled out)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._model import (
    Message,
    RecordedVerdict,
    Run,
    ToolCallRecord,
    VerdictLayout,
)
from ._parse import CHAT_MESSAGE_FIELDS, VERDICT_FLAGS, decode_arguments

_VERDICT_FLAGS_AND_SHOULD_SUCCEED = (*VERDICT_FLAGS, "action_should_succeed")

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


def fast_run(data: Any, index: int, flagged: list[bool]) -> Run | None:
    """The run, or None; a call whose arguments are not a JSON object appends to ``flagged``."""
    if type(data) is not dict:
        return None
    messages = data.get("interaction")
    prompt = data.get("prompt")
    database = data.get("database")
    if type(messages) is not list or type(prompt) is not str or type(database) is not dict:
        return None
    parsed = _every_one(messages, _fast_message, flagged)
    return None if parsed is None else Run(index, prompt, parsed, database)


def _every_one(
    items: list[Any], build: Callable[[Any, list[bool]], Any], flagged: list[bool]
) -> tuple[Any, ...] | None:
    """``build`` of every item, or None as soon as one is not built (the validating parser then decides)."""
    out = []
    for item in items:
        built = build(item, flagged)
        if built is None:
            return None
        out.append(built)
    return tuple(out)


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
            built = _every_one(calls, _fast_call, flagged)
            if built is None:
                return None
            tool_calls = built
    extra = {key: value for key, value in obj.items() if value is not None and key not in CHAT_MESSAGE_FIELDS}
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


def fast_verdict(obj: Any) -> RecordedVerdict | None:
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
        **dict(zip(VERDICT_FLAGS, flags, strict=False)),
    )
