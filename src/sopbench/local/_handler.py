"""sopbench's chat handler for llama-cpp-python: the model's own template, tools, and ``max_tokens`` kept.

Registered in the server process (``sopbench.local.llama_server``) under ``CHAT_FORMAT``. Per
request it renders the prompt (``_prompt``), then:

- no tools (``react``, ``act-only``) or ``tool_choice="none"``: one completion;
- tools with ``tool_choice="auto"``: a completion constrained to ``message:`` or
  ``functions.<name>:`` picks the kind of reply, then the message is written freely or the
  arguments under the tool's JSON schema; ``"required"`` or a named tool skips the choice.

``max_tokens`` bounds the whole reply, every step counted (llama-cpp-python's
``chatml-function-calling`` passed ``max_tokens=None`` to its steps under ``tool_choice="auto"``:
one reply ran to 9,074 tokens). A reply cut by it ends with ``finish_reason="length"``; cut
arguments are returned as they are (a malformed call the agent names). One call per reply.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._prompt import (
    CALL_PREFIX,
    CHATML_TEMPLATE,
    MESSAGE_PREFIX,
    choice_grammar,
    plain_messages,
    render_prompt,
)

CHAT_FORMAT = "sopbench-tools"
# When set (``serve-local --request-log``), one JSON line per request is appended to this file.
REQUEST_LOG_ENV = "SOPBENCH_LOCAL_REQUEST_LOG"
SAMPLING = ("temperature", "top_p", "top_k", "min_p", "typical_p", "seed", "presence_penalty",
            "frequency_penalty", "repeat_penalty")  # fmt: skip


class ChatHandler:
    """A llama-cpp-python chat completion handler (called with ``llama=`` and the request's fields).

    ``gbnf`` and ``schema_grammar`` turn a GBNF text or a JSON schema into the grammar object the
    completion takes; by default llama-cpp-python's ``LlamaGrammar`` (tests pass stand-ins).
    """

    def __init__(
        self,
        gbnf: Callable[[str], Any] | None = None,
        schema_grammar: Callable[[str], Any] | None = None,
        request_log: str | None = None,
    ) -> None:
        self._gbnf = gbnf or _llama_gbnf
        self._schema_grammar = schema_grammar or _llama_schema_grammar
        self._request_log = request_log if request_log is not None else os.environ.get(REQUEST_LOG_ENV)
        self._templates: dict[int, tuple[str, str, str]] = {}

    def __call__(
        self,
        *,
        llama: Any,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: Any = None,
        functions: Sequence[Mapping[str, Any]] | None = None,
        function_call: Any = None,
        max_tokens: int | None = None,
        stop: str | list[str] | None = None,
        stream: bool = False,
        response_format: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        if stream:
            raise ValueError(f"the {CHAT_FORMAT} chat format does not stream; send stream=false")
        started = time.monotonic()
        if functions and not tools:
            tools = [{"type": "function", "function": function} for function in functions]
            tool_choice = function_call if tool_choice is None else tool_choice
        choice = _tool_choice(tool_choice, tools)
        offered = tools if choice != "none" else None
        template, bos, eos = self._template(llama)
        prompt = render_prompt(template, plain_messages(messages, offered), bos=bos, eos=eos)
        reply = _Reply(
            llama,
            _tokens(llama, prompt, bos),
            max_tokens if max_tokens and max_tokens > 0 else None,
            [*([stop] if isinstance(stop, str) else stop or []), *([eos] if eos else [])],
            {key: options[key] for key in SAMPLING if options.get(key) is not None},
            str(options.get("model") or getattr(llama, "model_path", "local")),
        )
        if offered is None:
            grammar = None
            if response_format and response_format.get("type") == "json_object":
                grammar = self._schema_grammar('{"type": "object"}')
            response = reply.message("", grammar)
        else:
            response = self._tool_reply(reply, offered, choice)
        seconds = time.monotonic() - started
        self._log(
            reply,
            choice,
            len(offered or ()),
            max_tokens,
            seconds,
            hashlib.sha256(prompt.encode()).hexdigest(),
        )
        return response

    def _tool_reply(self, reply: _Reply, tools: Sequence[Mapping[str, Any]], choice: str) -> dict[str, Any]:
        by_name = {str(tool["function"]["name"]): tool for tool in tools}
        if choice in ("auto", "required"):
            picked = reply.pick(self._gbnf(choice_grammar(list(by_name), allow_message=choice == "auto")))
            if picked is None:  # cut by max_tokens before the kind of reply was chosen
                return reply.response(None, [], "length")
            if picked == MESSAGE_PREFIX:
                return reply.message(f"{MESSAGE_PREFIX}\n", None)
            choice = picked[len(CALL_PREFIX) : -1]
        parameters = by_name[choice]["function"].get("parameters") or {"type": "object", "properties": {}}
        arguments, finish = reply.generate(
            f"{CALL_PREFIX}{choice}:\n", self._schema_grammar(json.dumps(parameters))
        )
        call = {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
                "function": {"name": choice, "arguments": arguments.strip()}}  # fmt: skip
        return reply.response(None, [call], "tool_calls" if finish == "stop" else finish)

    def _template(self, llama: Any) -> tuple[str, str, str]:
        key = id(llama)
        if key not in self._templates:
            metadata = getattr(llama, "metadata", None) or {}
            self._templates[key] = (
                metadata.get("tokenizer.chat_template") or CHATML_TEMPLATE,
                _token_text(llama, llama.token_bos()),
                _token_text(llama, llama.token_eos()),
            )
        return self._templates[key]

    def _log(
        self, reply: _Reply, choice: str, tools: int, max_tokens: int | None, seconds: float, digest: str
    ) -> None:
        if not self._request_log:
            return
        line = {
            "prompt_tokens": len(reply.prompt),
            "completion_tokens": reply.used,
            "finish_reason": reply.finish,
            "tools": tools,
            "tool_choice": choice,
            "max_tokens": max_tokens,
            "seconds": round(seconds, 3),
            "prompt_sha256": digest,  # of the rendered prompt text: which request this was
        }
        with open(self._request_log, "a", encoding="utf-8") as log:
            log.write(json.dumps(line) + "\n")


class _Reply:
    """One reply in the making: the prompt's tokens, what was generated, the token budget left."""

    def __init__(
        self,
        llama: Any,
        prompt: list[int],
        budget: int | None,
        stop: list[str],
        sampling: dict[str, Any],
        model: str,
    ) -> None:
        self.llama, self.prompt, self.budget, self.stop, self.sampling = llama, prompt, budget, stop, sampling
        self.model = model
        self.used = 0
        self.prefix: list[int] = []
        self.finish = "stop"

    def generate(self, forced: str, grammar: Any, stop: Sequence[str] | None = None) -> tuple[str, str]:
        """Generate after ``forced`` text (added to the reply's prefix) within the budget left."""
        if forced:
            self.prefix += self.llama.tokenize(forced.encode("utf-8"), add_bos=False, special=True)
        left = None if self.budget is None else self.budget - self.used
        if left is not None and left <= 0:
            self.finish = "length"
            return "", "length"
        completion = self.llama.create_completion(
            prompt=self.prompt + self.prefix,
            max_tokens=left if left is not None else -1,  # -1: up to the end of the context
            stop=list(stop if stop is not None else self.stop),
            grammar=grammar,
            stream=False,
            **self.sampling,
        )
        choice = completion["choices"][0]
        self.used += int(completion["usage"]["completion_tokens"])
        self.finish = str(choice.get("finish_reason") or "stop")
        return str(choice["text"]), self.finish

    def pick(self, grammar: Any) -> str | None:
        """``message:`` or ``functions.<name>:`` as the grammar chose; None when cut by the budget."""
        text, finish = self.generate("", grammar, stop=[])
        picked = text.strip()
        if finish == "length" and not picked.endswith(":"):
            return None
        self.prefix += self.llama.tokenize(picked.encode("utf-8"), add_bos=False, special=True)
        return picked

    def message(self, forced: str, grammar: Any) -> dict[str, Any]:
        text, finish = self.generate(forced, grammar)
        return self.response(text.strip(), [], finish)

    def response(self, content: str | None, calls: list[dict[str, Any]], finish: str) -> dict[str, Any]:
        self.finish = finish
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": len(self.prompt),
                "completion_tokens": self.used,
                "total_tokens": len(self.prompt) + self.used,
            },
        }


def _tool_choice(tool_choice: Any, tools: Sequence[Mapping[str, Any]] | None) -> str:
    """ "none", "auto", "required" or the name of the tool asked for (checked against ``tools``)."""
    if not tools:
        return "none"
    if tool_choice is None:
        return "auto"
    if isinstance(tool_choice, str):
        if tool_choice not in ("none", "auto", "required"):
            raise ValueError(f"tool_choice {tool_choice!r}: expected none, auto, required or a function")
        return tool_choice
    name = tool_choice.get("function", {}).get("name") if isinstance(tool_choice, Mapping) else None
    if name is None and isinstance(tool_choice, Mapping):
        name = tool_choice.get("name")
    if not any(tool.get("function", {}).get("name") == name for tool in tools):
        raise ValueError(f"tool_choice names {name!r}, which is not among the tools")
    return str(name)


def _tokens(llama: Any, prompt: str, bos: str) -> list[int]:
    starts_with_bos = bool(bos) and prompt.startswith(bos)
    return list(llama.tokenize(prompt.encode("utf-8"), add_bos=not starts_with_bos, special=True))


def _token_text(llama: Any, token: int) -> str:
    if token is None or token < 0:
        return ""
    return bytes(llama.detokenize([token], special=True)).decode("utf-8", errors="replace")


def _llama_gbnf(text: str) -> Any:
    from llama_cpp.llama_grammar import LlamaGrammar

    return LlamaGrammar.from_string(text, verbose=False)


def _llama_schema_grammar(schema: str) -> Any:
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    try:
        return LlamaGrammar.from_json_schema(schema, verbose=False)
    except Exception:  # noqa: BLE001 - a schema the converter cannot read: any JSON object then
        return LlamaGrammar.from_string(JSON_GBNF, verbose=False)
