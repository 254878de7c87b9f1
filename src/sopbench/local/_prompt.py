"""The prompt sopbench's chat format gives a local model: the model's own chat template, unescaped.

A chat request becomes plain ``{"role", "content"}`` messages: the tools (when offered) are listed in
the system message with how to call one, past calls are written as the model is asked to write
them, and tool results come back as user messages. The model's chat template (from its GGUF file;
ChatML when it has none) renders them with Jinja's sandbox and no autoescaping: a quote or a ``<``
reaches the model as written (llama-cpp-python's ``chatml-function-calling`` HTML-escaped every
message, which doubled the prompt of a dmv react request, and left tool results out altogether).

Pure functions, no llama.cpp: the server's handler (``_handler``) and the tests share them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

# The template of ChatML models, for a GGUF file that carries none.
CHATML_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
MESSAGE_PREFIX = "message:"
CALL_PREFIX = "functions."


def tool_section(tools: Sequence[Mapping[str, Any]]) -> str:
    """What the system message gains when tools are offered: each tool as compact JSON (name,
    description, parameters) and the two ways to reply."""
    listed = "\n".join(
        json.dumps(_function(tool), ensure_ascii=False, separators=(",", ":")) for tool in tools
    )
    return (
        "You have access to the following functions (name, description and JSON schema of the arguments):\n"
        f"{listed}\n\n"
        f"Reply either with a message to the user: the line '{MESSAGE_PREFIX}', then the message; or "
        f"with one function call: the line '{CALL_PREFIX}<function name>:', then its arguments as one "
        "JSON object."
    )


def plain_messages(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None
) -> list[dict[str, str]]:
    """``messages`` of a chat request as ``{"role", "content"}`` pairs a chat template can render:
    with ``tools``, the tool section ends the system message (one is made if there is none), past
    calls are written ``functions.<name>:`` + arguments, and each tool result is a user message
    ``functions.<name> returned:`` + output. Consecutive user messages are merged (templates such as
    Gemma's require user and assistant turns to alternate)."""
    out: list[dict[str, str]] = []
    names: dict[str, str] = {}
    for message in messages:
        role = str(message.get("role", "user"))
        content = content_text(message.get("content"))
        if role in ("system", "developer"):
            out.append({"role": "system", "content": content})
        elif role == "assistant":
            calls = message.get("tool_calls") or ()
            names.update({str(call.get("id", "")): _call_name(call) for call in calls})
            out.append({"role": "assistant", "content": _assistant_text(content, calls, bool(tools))})
        elif role in ("tool", "function"):
            name = names.get(str(message.get("tool_call_id", "")), str(message.get("name") or "tool"))
            _append_user(out, f"{CALL_PREFIX}{name} returned:\n{content}")
        else:
            _append_user(out, content)
    if tools:
        section = tool_section(tools)
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{section}".lstrip()}
        else:
            out.insert(0, {"role": "system", "content": section})
    return out


def render_prompt(
    template: str, messages: Sequence[Mapping[str, str]], *, bos: str = "", eos: str = ""
) -> str:
    """``messages`` rendered with the chat ``template`` (a Hugging Face chat template), ending with
    the assistant's turn opened. No autoescaping; the template runs in Jinja's sandbox."""
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(text: str) -> None:
        raise ValueError(f"the model's chat template refused the messages: {text}")

    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, autoescape=False, extensions=[loopcontrols]
    )
    environment.filters["tojson"] = _tojson
    return environment.from_string(template).render(
        messages=list(messages),
        bos_token=bos,
        eos_token=eos,
        add_generation_prompt=True,
        raise_exception=raise_exception,
        strftime_now=lambda fmt: datetime.now().strftime(fmt),
    )


def choice_grammar(names: Sequence[str], *, allow_message: bool) -> str:
    """GBNF for the start of a reply: ``functions.<one of names>:`` (or ``message:``)."""
    calls = " | ".join(json.dumps(f"{CALL_PREFIX}{name}:") for name in names)
    return f"root ::= {json.dumps(MESSAGE_PREFIX)} | {calls}\n" if allow_message else f"root ::= {calls}\n"


def content_text(content: Any) -> str:
    """A message's content as text: the text parts of a list of parts joined, JSON for anything else."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(part, Mapping) for part in content):
        return "".join(str(part.get("text", "")) for part in content if part.get("type", "text") == "text")
    return json.dumps(content, ensure_ascii=False)


def _function(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    function = tool.get("function", tool)
    return function if isinstance(function, Mapping) else {"name": str(function)}


def _call_name(call: Mapping[str, Any]) -> str:
    function = call.get("function")
    return str(function.get("name", "")) if isinstance(function, Mapping) else ""


def _assistant_text(content: str, calls: Sequence[Mapping[str, Any]], with_tools: bool) -> str:
    parts = (
        [f"{MESSAGE_PREFIX}\n{content}" if with_tools else content] if content.strip() or not calls else []
    )
    for call in calls:
        function = call.get("function")
        arguments = function.get("arguments", "") if isinstance(function, Mapping) else ""
        parts.append(f"{CALL_PREFIX}{_call_name(call)}:\n{content_text(arguments)}")
    return "\n".join(parts)


def _append_user(out: list[dict[str, str]], text: str) -> None:
    if out and out[-1]["role"] == "user":
        out[-1] = {"role": "user", "content": f"{out[-1]['content']}\n\n{text}"}
    else:
        out.append({"role": "user", "content": text})


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: Any = None,
    sort_keys: bool = False,
) -> str:
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )
