"""Thin wrappers that put a guard in front of plain Python tools and of an OpenAI tool-calling loop."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, MutableSequence, Sequence
from typing import Any, Protocol

from sopbench._io import json_type
from sopbench._json import JsonBoundError, check_json_depth, decode_bounded
from sopbench.evaluation import ToolCall

from ._decision import Refused
from ._session import GuardSession, Judge

History = MutableSequence[ToolCall] | GuardSession


class FollowingJudge(Judge, Protocol):
    """What a wrapper needs of its guard (``sopbench.guard.Guard`` is one): a session per list."""

    def following(self, history: Sequence[ToolCall]) -> GuardSession: ...


def guard_tool(
    guard: FollowingJudge, func: Callable[..., Any], history: History, *, name: str | None = None
) -> Callable[..., Any]:
    """``func`` behind ``guard``: a call whose SOP is not verified by ``history`` raises ``Refused``
    and does not run; a call that runs is appended to ``history`` with its result (it verifies
    later calls when it returned without raising and its result is not ``False``/``None``, nor a
    pair whose first element is false). Tools that share a conversation share one ``history``: a
    list (the guard follows it with a session of its own, see ``GuardSession.sync``) or a
    ``GuardSession``."""
    tool = name or func.__name__
    bind = _binder(inspect.signature(func))

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        arguments = bind(args, kwargs)
        session = _session(guard, history)
        call = ToolCall(tool, arguments)
        decision = session.check(call)
        if not decision.allowed:
            raise Refused(decision)
        try:
            result = func(*args, **kwargs)
        except Exception:
            _record(session, history, ToolCall(tool, arguments, None, False))
            raise
        # The call was checked above (a ToolCall with a name and bounded arguments): recorded as is.
        _record(session, history, session._record_checked(call, result), recorded=True)
        return result

    return guarded


def _binder(signature: inspect.Signature) -> Callable[[tuple[Any, ...], dict[str, Any]], dict[str, Any]]:
    """The arguments of a call by name, as ``signature.bind(*args, **kwargs).arguments`` gives them
    (in the order of the parameters, defaults left out; ``TypeError`` when they do not fit). A call
    by keywords alone, to a function whose parameters all take keywords, is read without binding."""
    parameters = signature.parameters.values()
    simple = all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in parameters)
    names = tuple(signature.parameters)
    known = frozenset(names)
    required = frozenset(p.name for p in parameters if p.default is p.empty)

    def bind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if simple and not args and kwargs.keys() <= known and required <= kwargs.keys():
            return {name: kwargs[name] for name in names if name in kwargs}
        return dict(signature.bind(*args, **kwargs).arguments)

    return bind


def _session(guard: FollowingJudge, history: History) -> GuardSession:
    return history if isinstance(history, GuardSession) else guard.following(history)


def _record(session: GuardSession, history: History, call: ToolCall, *, recorded: bool = False) -> None:
    """``call`` into the session and, when the caller keeps a list, into the list as well."""
    if not recorded:
        session.record(call)
    if not isinstance(history, GuardSession):
        history.append(call)


def execute_tool_calls(
    guard: FollowingJudge,
    tool_calls: Sequence[Any],
    tools: Mapping[str, Callable[..., Any]],
    history: History,
) -> list[dict[str, Any]]:
    """Run the tool calls of one model reply (OpenAI chat-completions ``message.tool_calls``: objects
    or dicts) in order; only the allowed ones execute. Returns one ``{"role": "tool", ...}`` message
    per call, to append to the conversation: a refused call's content is the guard's explanation,
    an unknown tool or bad JSON arguments an error text, an exception ``"<Class>: <message>"``.
    ``history``: the conversation's calls, a list or a ``GuardSession``."""
    messages = []
    for tool_call in tool_calls or ():  # the OpenAI client's message.tool_calls is None without calls
        call_id, name, text = _parts(tool_call)
        messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": _answer(guard, name, text, tools, history)}
        )
    return messages


def _answer(
    guard: FollowingJudge, name: str, text: Any, tools: Mapping[str, Callable[..., Any]], history: History
) -> str:
    func = tools.get(name)
    if func is None:
        return f"Error: Tool {name} not found."
    arguments, error = _arguments(name, text)
    if arguments is None:
        return error
    session = _session(guard, history)
    call = ToolCall(name, arguments)
    decision = session.check(call)
    if not decision.allowed:
        return decision.explanation
    try:
        result = func(**arguments)
    except Exception as exc:  # noqa: BLE001 - the model sees what went wrong, as a tool result
        _record(session, history, ToolCall(name, arguments, None, False))
        return f"{type(exc).__name__}: {exc}"
    _record(session, history, session._record_checked(call, result), recorded=True)
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
        return (
            str(tool_call.get("id", "")),
            str(function.get("name", "")),
            "{}" if arguments is None else arguments,
        )
    function = getattr(tool_call, "function", None)
    arguments = getattr(function, "arguments", None)
    return (
        str(getattr(tool_call, "id", "")),
        str(getattr(function, "name", "")),
        "{}" if arguments is None else arguments,
    )
