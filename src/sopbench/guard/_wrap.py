"""Thin wrappers that put a guard in front of plain Python tools and of an OpenAI tool-calling loop."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, MutableSequence, Sequence
from typing import Any

from sopbench._io import json_type
from sopbench._json import JsonBoundError, check_json_depth, decode_bounded
from sopbench.domains import succeeded
from sopbench.evaluation import ToolCall

from ._guard import Decision, Guard


class Refused(PermissionError):
    """A guarded tool was called before its SOP was verified; ``decision`` says what is missing."""

    def __init__(self, decision: Decision) -> None:
        super().__init__(decision.explanation)
        self.decision = decision


def guard_tool(
    guard: Guard, func: Callable[..., Any], history: MutableSequence[ToolCall], *, name: str | None = None
) -> Callable[..., Any]:
    """``func`` behind ``guard``: a call whose SOP is not verified by ``history`` raises ``Refused``
    and does not run; a call that runs is appended to ``history`` with its result (it verifies
    later calls when it returned without raising and its result is not ``False``/``None``, nor a
    pair whose first element is false). Tools that share a conversation share one ``history``."""
    tool = name or func.__name__
    signature = inspect.signature(func)

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        arguments = dict(bound.arguments)
        decision = guard.check(ToolCall(tool, arguments), history)
        if not decision.allowed:
            raise Refused(decision)
        try:
            result = func(*args, **kwargs)
        except Exception:
            history.append(ToolCall(tool, arguments, None, False))
            raise
        history.append(ToolCall(tool, arguments, result, succeeded(result)))
        return result

    return guarded


def execute_tool_calls(
    guard: Guard,
    tool_calls: Sequence[Any],
    tools: Mapping[str, Callable[..., Any]],
    history: MutableSequence[ToolCall],
) -> list[dict[str, Any]]:
    """Run the tool calls of one model reply (OpenAI chat-completions ``message.tool_calls``: objects
    or dicts) in order; only the allowed ones execute. Returns one ``{"role": "tool", ...}`` message
    per call, to append to the conversation: a refused call's content is the guard's explanation,
    an unknown tool or bad JSON arguments an error text, an exception ``"<Class>: <message>"``."""
    messages = []
    for tool_call in tool_calls or ():  # the OpenAI client's message.tool_calls is None without calls
        call_id, name, text = _parts(tool_call)
        messages.append({"role": "tool", "tool_call_id": call_id, "content": _answer(guard, name, text, tools, history)})
    return messages


def _answer(
    guard: Guard, name: str, text: Any, tools: Mapping[str, Callable[..., Any]], history: MutableSequence[ToolCall]
) -> str:
    func = tools.get(name)
    if func is None:
        return f"Error: Tool {name} not found."
    arguments, error = _arguments(name, text)
    if arguments is None:
        return error
    decision = guard.check(ToolCall(name, arguments), history)
    if not decision.allowed:
        return decision.explanation
    try:
        result = func(**arguments)
    except Exception as exc:  # noqa: BLE001 - the model sees what went wrong, as a tool result
        history.append(ToolCall(name, arguments, None, False))
        return f"{type(exc).__name__}: {exc}"
    history.append(ToolCall(name, arguments, result, succeeded(result)))
    return str(result)


def _arguments(name: str, given: Any) -> tuple[dict[str, Any], str] | tuple[None, str]:
    """The arguments as an object, from JSON text (as OpenAI sends them) or an object (as some
    clients hand them over), within the bound on JSON from a model; or the error text the model sees."""
    try:
        if isinstance(given, str):
            value = decode_bounded(given or "{}")
        elif isinstance(given, Mapping):
            value = dict(given)
            check_json_depth(value)
        else:
            return None, f"Error: the arguments of {name} must be a JSON object, got {json_type(given)}."
    except JsonBoundError as exc:
        return None, f"Error: the arguments of {name} are not usable: JSON {exc}."
    except ValueError as exc:
        return None, f"Error: the arguments of {name} are not JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"Error: the arguments of {name} must be a JSON object, got {json_type(value)}."
    return value, ""


def _parts(tool_call: Any) -> tuple[str, str, Any]:
    """Id, name and arguments of a call given as an object or a dict; a call of another shape, or
    with a missing part, gives what is there (an unknown name is answered as such)."""
    if isinstance(tool_call, Mapping):
        function = tool_call.get("function")
        function = function if isinstance(function, Mapping) else {}
        arguments = function.get("arguments")
        return str(tool_call.get("id", "")), str(function.get("name", "")), "{}" if arguments is None else arguments
    function = getattr(tool_call, "function", None)
    arguments = getattr(function, "arguments", None)
    return (
        str(getattr(tool_call, "id", "")),
        str(getattr(function, "name", "")),
        "{}" if arguments is None else arguments,
    )
