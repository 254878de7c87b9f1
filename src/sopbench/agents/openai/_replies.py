"""A chat-completions reply as sopbench reads it: text, tool calls, usage, and what was malformed."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sopbench._json import MAX_REPLY_BYTES, JsonBoundError, decode_document
from sopbench.agents._protocol import Usage

from ._transport import Retryable


@dataclass(frozen=True, slots=True)
class ChatToolCall:
    """A tool call as the endpoint returned it; ``arguments`` is the raw text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ChatReply:
    """A reply read defensively: ``problems`` names every field that had the wrong shape (it was
    turned into text) and ``raw`` is then the reply's message as the server sent it."""

    content: str | None
    tool_calls: tuple[ChatToolCall, ...]
    usage: Usage
    finish_reason: str | None
    problems: tuple[str, ...] = ()
    raw: str | None = None
    # per call (same order as ``tool_calls``): why the call itself is malformed, or None
    call_problems: tuple[str | None, ...] = field(default=())


def _unscrubbed(text: str) -> str:
    return text


def read_completion(
    text: str, scrub: Callable[[str], str] = _unscrubbed
) -> ChatReply | tuple[Exception, None]:
    """A chat-completion body read field by field. A body that is not a JSON completion with a
    choice is the server's failure (retried); anything wrong inside the message (numbers, lists,
    objects or nulls where text belongs, integer ids, missing fields, content parts) is the model's
    mistake: it is turned into text, named in ``problems`` and the message's raw JSON is kept. A
    body deeper or larger than the bound on a reply is the model's too (a server's failures are not
    hundreds of levels deep): a reply with nothing in it but that problem, never retried.

    Every text of the reply (content, call ids, names and arguments, the raw message, problems) and
    of an error goes through ``scrub`` (``sopbench.secrets.Scrubber``) before anything keeps it:
    a server may echo the key it was sent."""
    reply = _read(text, scrub)
    if not isinstance(reply, ChatReply):
        return reply
    return ChatReply(
        content=None if reply.content is None else scrub(reply.content),
        tool_calls=tuple(
            ChatToolCall(scrub(c.id), scrub(c.name), scrub(c.arguments)) for c in reply.tool_calls
        ),
        usage=reply.usage,  # token counts only: no text of the server's survives
        finish_reason=None if reply.finish_reason is None else scrub(reply.finish_reason),
        problems=tuple(scrub(p) for p in reply.problems),
        raw=None if reply.raw is None else scrub(reply.raw),
        call_problems=tuple(None if p is None else scrub(p) for p in reply.call_problems),
    )


def _read(text: str, scrub: Callable[[str], str]) -> ChatReply | tuple[Exception, None]:
    # texts are scrubbed before they are clipped (a clip must not keep half of a key), and only
    # as much as can reach the clip (a key form is far shorter than the margin)
    head = text[: _CLIP + 4096]
    try:
        data = decode_document(text, size=MAX_REPLY_BYTES, lenient=True)
    except JsonBoundError as exc:
        return ChatReply(
            content=None,
            tool_calls=(),
            usage=Usage(),
            finish_reason=None,
            problems=(f"malformed reply: the reply is JSON {exc}",),
            raw=clip(scrub(head)),  # scrubbed before it is clipped, as every text here
        )
    except ValueError:
        return Retryable(f"unreadable reply (not JSON): {clip(scrub(head))!r}"), None
    if not isinstance(data, Mapping):
        return Retryable(f"unreadable reply (not a JSON object): {clip(scrub(head))!r}"), None
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        error = data.get("error")
        if error:
            return Retryable(f"the reply is an error: {clip(scrub(json.dumps(error)))}"), None
        return Retryable("the reply holds no choices"), None
    choice = choices[0] if isinstance(choices[0], Mapping) else {}
    message = choice.get("message")
    problems: list[str] = []
    if not isinstance(message, Mapping):
        problems.append(f"the reply's message is {_kind(message)}, not an object")
        message = {}
    content = _as_text(message.get("content"), "content", problems)
    calls: list[ChatToolCall] = []
    call_problems: list[str | None] = []
    raw_calls = message.get("tool_calls")
    if raw_calls is not None and not isinstance(raw_calls, list):
        problems.append(f"tool_calls is {_kind(raw_calls)}, not a list")
        raw_calls = []
    for i, raw_call in enumerate(raw_calls or ()):
        where = f"tool_calls[{i}]"
        if not isinstance(raw_call, Mapping):
            problems.append(f"{where} is {_kind(raw_call)}, not an object")
            calls.append(ChatToolCall("", "", json.dumps(raw_call, ensure_ascii=False)))
            call_problems.append(f"the call is {_kind(raw_call)}, not an object")
            continue
        call_id = raw_call.get("id")
        if call_id is not None and not isinstance(call_id, str):
            problems.append(f"{where}.id is {_kind(call_id)}, not a string")
        function = raw_call.get("function")
        if not isinstance(function, Mapping):
            problems.append(f"{where}.function is {_kind(function)}, not an object")
            function = {}
        name = function.get("name")
        if not isinstance(name, str) or not name.strip():
            problems.append(f"{where}.function.name is {_kind(name)}, not a tool name")
        arguments = function.get("arguments")
        call_problem = None  # counted once, as a malformed call (not also as a reply problem)
        if not isinstance(arguments, str):
            call_problem = f"arguments sent as {_kind(arguments)}, not as a JSON string"
        calls.append(
            ChatToolCall(
                "" if call_id is None else str(call_id) if not isinstance(call_id, str) else call_id,
                name if isinstance(name, str) else ("" if name is None else json.dumps(name)),
                arguments
                if isinstance(arguments, str)
                else ("" if arguments is None else json.dumps(arguments, ensure_ascii=False)),
            )
        )
        call_problems.append(call_problem)
    finish = choice.get("finish_reason")
    raw = None
    if problems or any(call_problems):
        raw = json.dumps(choice.get("message"), ensure_ascii=False, default=str)
    return ChatReply(
        content=content,
        tool_calls=tuple(calls),
        usage=_usage(data.get("usage")),
        finish_reason=finish if isinstance(finish, str) else None,
        problems=tuple(f"malformed reply: {p}" for p in problems),
        raw=raw,
        call_problems=tuple(call_problems),
    )


def _as_text(value: Any, where: str, problems: list[str]) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts: their text, in order
        texts = [
            part["text"] for part in value if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        ]
        problems.append(f"{where} is a list of {len(value)} parts, not a string")
        return "\n".join(texts) if texts else None
    problems.append(f"{where} is {_kind(value)}, not a string")
    return json.dumps(value, ensure_ascii=False, default=str)


def _usage(usage: Any) -> Usage:
    if not isinstance(usage, Mapping):
        return Usage()

    def count(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    return Usage(count("prompt_tokens"), count("completion_tokens"))


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a JSON number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a JSON list"
    if isinstance(value, Mapping):
        return "a JSON object"
    return type(value).__name__


_CLIP = 200


def clip(text: str, limit: int = _CLIP) -> str:
    """``text`` cut to ``limit`` characters (scrub it first: a cut must not keep half of a key)."""
    return text if len(text) <= limit else text[:limit] + "..."
