"""The three tool-call modes: how the transcript is sent and how a reply becomes an ``AgentTurn``.

``fc`` sends the transcript as it is, with the tools as native function schemas. ``react`` and
``act-only`` put the tools in the system prompt and speak a text protocol (``Thought:`` /
``Action:`` / ``Action Input:`` / ``<End Action>``): past tool calls are re-rendered in it, tool
results become user messages starting ``Observation``, and consecutive user messages are merged.

A malformed reply is the model's mistake, never an exception: the raw text goes on to the runner
(which answers a bad call with an error tool result) and each detected problem is named.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sopbench._json import decode_bounded
from sopbench.agents._protocol import Message
from sopbench.domains import NoActionReading, is_no_action

# ---- sending --------------------------------------------------------------------------------------


def fc_messages(system_prompt: str, transcript: Sequence[Message]) -> list[dict[str, Any]]:
    """The chat-completions request messages for native function calling."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}]
    for message in transcript:
        role = message.get("role")
        if role == "user":
            out.append({"role": "user", "content": _text(message.get("content"))})
        elif role == "assistant":
            calls = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {
                        "name": call["function"]["name"],
                        "arguments": call["function"]["arguments"],
                    },
                }
                for call in message.get("tool_calls") or ()
            ]
            # "" rather than null beside tool calls: strict servers (llama-cpp-python) reject a null
            # or missing content, and every server accepts an empty one.
            entry: dict[str, Any] = {"role": "assistant", "content": _text(message.get("content"))}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
        elif role == "tool":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message["tool_call_id"],
                    "content": _text(message.get("content")),
                }
            )
    return out


def text_messages(
    system_prompt: str, transcript: Sequence[Message], *, reasoning: bool
) -> list[dict[str, Any]]:
    """The request messages for ``react`` (``reasoning``) or ``act-only``: no tool roles at all."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}]
    calls: dict[str, tuple[str, str]] = {}
    for message in transcript:
        role = message.get("role")
        if role == "assistant":
            tool_calls = message.get("tool_calls") or ()
            for call in tool_calls:
                calls[call["id"]] = (call["function"]["name"], call["function"]["arguments"])
            blocks = [(c["function"]["name"], c["function"]["arguments"]) for c in tool_calls]
            out.append(
                {"role": "assistant", "content": render_text_reply(message.get("content"), blocks, reasoning)}
            )
        elif role == "tool":
            name, arguments = calls.get(message.get("tool_call_id", ""), (message.get("name", "tool"), ""))
            _append_user(
                out, f"Observation ({_call_label(name, arguments)}):\n{_text(message.get('content'))}"
            )
        elif role == "user":
            _append_user(out, _text(message.get("content")))
    return out


def render_text_reply(content: str | None, calls: Sequence[tuple[str, str]], reasoning: bool) -> str:
    """A past assistant turn in the text protocol (one block per tool call; none: ``N/A``/``None``)."""
    no_action = "N/A" if reasoning else "None"
    blocks = calls or [(no_action, no_action)]
    text = (content or "").strip()
    parts = []
    for i, (name, arguments) in enumerate(blocks):
        lead = (f"Thought: {text}\n" if reasoning else (f"{text}\n" if text else "")) if i == 0 else ""
        parts.append(f"{lead}Action: {name}\nAction Input: {arguments}\n<End Action>")
    return "\n".join(parts)


def _append_user(out: list[dict[str, Any]], text: str) -> None:
    if out[-1]["role"] == "user":
        out[-1]["content"] += "\n" + text
    else:
        out.append({"role": "user", "content": text})


def _call_label(name: str, arguments: str) -> str:
    try:
        value: Any = decode_bounded(arguments)
    except (TypeError, ValueError):  # not JSON, or past the bound: shown as the text it is
        value = arguments
    return json.dumps({name: value}, ensure_ascii=False)


def _text(content: Any) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


# ---- reading text replies ----------------------------------------------------------------------------

_ACTION = re.compile(r"^[ \t*#>]*action[ \t*]*:[ \t*]*", re.IGNORECASE | re.MULTILINE)
_ACTION_INPUT = re.compile(r"^[ \t*#>]*action[ \t]+input[ \t*]*:[ \t*]*", re.IGNORECASE | re.MULTILINE)
_INPUT_END = re.compile(
    r"<\s*end[ \t_]*action\s*>|^[ \t*#>]*(?:observation|thought|action)\b", re.IGNORECASE | re.MULTILINE
)
# Every pattern is linear-time on any text: no two adjacent repeats can match the same characters
# (``\s*[*#]*\s*`` once made a reply of 60,000 spaces take 16 s).
_THOUGHT = re.compile(r"^\s*(?:[*#]+\s*)?thought[ \t]*(?::\*\*|\*\*:|:)[ \t]*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class TextReply:
    """A text-protocol reply read: what the user is told, the tool call (if any), what was wrong."""

    content: str | None
    call: tuple[str, str] | None  # (tool name, raw argument text)
    problems: tuple[str, ...]


def parse_text_reply(text: str | None, no_action: NoActionReading = "published") -> TextReply:
    """Read one ``react`` / ``act-only`` reply.

    The text before the first ``Action:`` line (without its ``Thought:`` label) is what the user is
    told; ``Action: N/A`` or ``None`` means no tool call (the runner's rule, ``domains.is_no_action``,
    under the episode's ``no_action`` reading; the name is read without the spaces, quotes and
    markdown around it). A reply without the protocol is kept as a
    message to the user and named as a problem, as are an ``Action`` without ``Action Input`` and a
    second ``Action`` (only the first call of a reply is executed).
    """
    text = text or ""
    actions = [m for m in _ACTION.finditer(text)]
    if not actions:
        if not text.strip():
            return TextReply(_strip_thought(text), None, ("empty reply",))
        problem = (
            "reply does not follow the text protocol (no 'Action:' line); taken as a message to the user"
        )
        return TextReply(_strip_thought(text), None, (problem,))
    first = actions[0]
    content = _strip_thought(text[: first.start()])
    line_end = text.find("\n", first.end())
    name = _clean_name(text[first.end() : line_end if line_end >= 0 else len(text)])
    problems: list[str] = []
    if len(actions) > 1:
        problems.append(f"reply has {len(actions)} 'Action:' lines; only the first is executed")
    rest = text[first.end() :]
    following = actions[1].start() - first.end() if len(actions) > 1 else len(rest)
    found = _ACTION_INPUT.search(rest, 0, following)
    if is_no_action(name, no_action):
        return TextReply(content, None, tuple(problems))
    if found is None:
        problems.append(f"'Action: {name}' has no 'Action Input:' line")
        return TextReply(content, (name, ""), tuple(problems))
    end = _INPUT_END.search(rest, found.end())
    arguments = rest[found.end() : end.start() if end else len(rest)].strip()
    return TextReply(content, (name, arguments), tuple(problems))


def _strip_thought(text: str) -> str | None:
    stripped = _THOUGHT.sub("", text, count=1).strip()
    return stripped or None


def _clean_name(text: str) -> str:
    return text.strip().strip("`'\"*[]() \t").strip()
