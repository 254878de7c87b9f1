"""sopbench's chat format for llama-cpp-python, against a stand-in model: the prompt reaches the
model unescaped and with the tool results, a reply never passes max_tokens in any tool-choice mode,
and a call comes back as an OpenAI tool call. (The e2e test runs it in the real server.)"""

from __future__ import annotations

import json

import pytest

from sopbench.local import CHATML_TEMPLATE, ChatHandler, plain_messages, render_prompt

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "verify_identity",
            "description": "Check the user's identity.",
            "parameters": {"type": "object", "properties": {"username": {"type": "string"}}},
        },
    },
    {"type": "function", "function": {"name": "close_account", "parameters": {"type": "object"}}},
]
TRICKY = 'Say <b>"hi"</b> & it\'s <|fine|> {"a": [1]}'
# Gemma's template refuses a conversation whose user and assistant turns do not alternate.
ALTERNATING = (
    "{{ bos_token }}{% for m in messages %}"
    "{% if m.role == 'system' %}{% continue %}{% endif %}"
    "{% if (m.role == 'user') != (loop.index0 % 2 == (1 if messages[0].role == 'system' else 0)) %}"
    "{{ raise_exception('roles must alternate') }}{% endif %}"
    "<turn {{ m.role }}>{{ m.content }}</turn>{% endfor %}<turn assistant>"
)


class StandInModel:
    """Tokens are characters. Each completion writes ``replies[kind]`` (cycled), where kind is what
    its grammar asks for ("choice", "arguments") or "text", and stops at max_tokens."""

    def __init__(self, replies: dict[str, str], template: str | None = CHATML_TEMPLATE) -> None:
        self.replies = replies
        self.metadata = {"tokenizer.chat_template": template} if template else {}
        self.calls: list[dict] = []

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return ([1] if add_bos else []) + list(text.decode())

    def detokenize(self, tokens: list[int], special: bool = False) -> bytes:
        return {1: b"<s>", 2: b"</s>"}[tokens[0]]

    def token_bos(self) -> int:
        return 1

    def token_eos(self) -> int:
        return 2

    def create_completion(self, *, prompt, max_tokens, grammar, stop, stream, **sampling) -> dict:
        kind = grammar[0] if grammar else "text"
        wanted = self.replies[kind]
        text = wanted if max_tokens <= 0 else wanted[:max_tokens]
        finish = "stop" if len(text) == len(wanted) else "length"
        self.calls.append(
            {"prompt": prompt, "max_tokens": max_tokens, "kind": kind, "stop": stop, **sampling}
        )
        return {
            "choices": [{"text": text, "finish_reason": finish}],
            "usage": {"completion_tokens": len(text)},
        }


def handler(**options) -> ChatHandler:
    return ChatHandler(
        gbnf=lambda text: ("choice", text), schema_grammar=lambda schema: ("arguments", schema), **options
    )


def request(model: StandInModel, messages: list[dict], **fields) -> dict:
    return handler()(llama=model, messages=messages, **fields)


def prompt_of(model: StandInModel) -> str:
    return "".join(token for token in model.calls[0]["prompt"] if isinstance(token, str))


CONVERSATION = [
    {"role": "system", "content": "You are a bank assistant."},
    {"role": "user", "content": TRICKY},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "verify_identity", "arguments": '{"username": "<ann>"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "True & <verified>"},
    {"role": "user", "content": "Thanks"},
]


def test_messages_reach_the_model_as_written_with_the_tools_and_their_results():
    model = StandInModel({"choice": "message:", "text": "Done."})
    reply = request(model, CONVERSATION, tools=TOOLS, tool_choice="auto", max_tokens=50)
    prompt = prompt_of(model)
    assert TRICKY in prompt  # no HTML escaping: &, quotes and < reach the model as written
    assert (
        'functions.verify_identity:\n{"username": "<ann>"}' in prompt
    )  # the past call, as the model writes one
    assert (
        "functions.verify_identity returned:\nTrue & <verified>\n\nThanks" in prompt
    )  # tool results are shown
    assert json.dumps(TOOLS[0]["function"], separators=(",", ":")) in prompt  # the tools, compact
    assert prompt.endswith("<|im_start|>assistant\n")
    assert reply["choices"][0]["message"] == {"role": "assistant", "content": "Done."}
    assert reply["usage"]["prompt_tokens"] == len(model.calls[0]["prompt"])


def test_a_call_comes_back_as_an_openai_tool_call_within_the_tools_schema():
    model = StandInModel({"choice": "functions.verify_identity:", "arguments": '{"username": "ann"}'})
    reply = request(model, CONVERSATION[:2], tools=TOOLS, tool_choice="auto", max_tokens=100)
    choice = reply["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    [call] = choice["message"]["tool_calls"]
    assert call["function"] == {"name": "verify_identity", "arguments": '{"username": "ann"}'}
    assert call["type"] == "function" and call["id"].startswith("call_")
    arguments_step = model.calls[1]
    assert arguments_step["kind"] == "arguments"
    assert "".join(t for t in arguments_step["prompt"] if isinstance(t, str)).endswith(
        "functions.verify_identity:\n"
    )
    assert reply["usage"]["completion_tokens"] == len("functions.verify_identity:") + len(
        '{"username": "ann"}'
    )


ENDLESS = " " * 9074  # what chatml-function-calling let a model write under tool_choice="auto"


@pytest.mark.parametrize(
    ("tools", "tool_choice", "replies"),
    [
        (TOOLS, "auto", {"choice": "functions.close_account:", "arguments": "{" + ENDLESS}),
        (TOOLS, "auto", {"choice": "message:", "text": ENDLESS}),
        (TOOLS, "required", {"choice": "functions.close_account:", "arguments": "{" + ENDLESS}),
        (TOOLS, {"type": "function", "function": {"name": "close_account"}}, {"arguments": "{" + ENDLESS}),
        (TOOLS, "none", {"text": ENDLESS}),
        (None, None, {"text": ENDLESS}),
    ],
    ids=["auto-call", "auto-message", "required", "named", "none", "no-tools"],
)
@pytest.mark.parametrize("max_tokens", [1, 20, 96])
def test_a_reply_never_passes_max_tokens_in_any_tool_choice_mode(tools, tool_choice, replies, max_tokens):
    model = StandInModel(replies)
    reply = request(model, CONVERSATION[:2], tools=tools, tool_choice=tool_choice, max_tokens=max_tokens)
    assert reply["usage"]["completion_tokens"] <= max_tokens
    assert reply["choices"][0]["finish_reason"] == "length"
    assert all(0 < call["max_tokens"] <= max_tokens for call in model.calls)


def test_no_max_tokens_lets_the_model_finish():
    model = StandInModel({"text": "A long answer."})
    reply = request(model, CONVERSATION[:2], max_tokens=None, stop="###")
    assert reply["choices"][0] == {
        "index": 0,
        "message": {"role": "assistant", "content": "A long answer."},
        "logprobs": None,
        "finish_reason": "stop",
    }
    assert model.calls[0]["max_tokens"] == -1 and model.calls[0]["stop"] == ["###", "</s>"]


def test_a_template_that_wants_alternating_turns_gets_them():
    model = StandInModel({"choice": "message:", "text": "ok"}, template=ALTERNATING)
    request(model, CONVERSATION, tools=TOOLS, max_tokens=10)
    prompt = prompt_of(model)
    assert prompt.startswith("<s><turn user>") and "returned:\nTrue & <verified>\n\nThanks</turn>" in prompt
    assert model.calls[0]["prompt"][0] == "<"  # the template wrote the BOS: none is added (one, not two)


def test_a_model_without_a_template_gets_chatml():
    model = StandInModel({"text": "ok"}, template=None)
    request(model, [{"role": "user", "content": "hi"}], max_tokens=5)
    assert prompt_of(model) == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_sampling_options_and_the_seed_reach_the_model():
    model = StandInModel({"text": "ok"})
    request(model, CONVERSATION[:2], max_tokens=5, temperature=0.0, seed=7, top_p=0.5, mirostat_mode=0)
    assert {key: model.calls[0][key] for key in ("temperature", "seed", "top_p")} == {
        "temperature": 0.0,
        "seed": 7,
        "top_p": 0.5,
    }


def test_bad_requests_are_refused_with_what_was_wrong():
    model = StandInModel({"text": "ok"})
    with pytest.raises(ValueError, match="'delete_everything', which is not among the tools"):
        request(
            model,
            CONVERSATION[:2],
            tools=TOOLS,
            tool_choice={"type": "function", "function": {"name": "delete_everything"}},
        )
    with pytest.raises(ValueError, match="does not stream"):
        request(model, CONVERSATION[:2], stream=True)
    with pytest.raises(ValueError, match="template refused the messages: roles must alternate"):
        render_prompt(ALTERNATING, [{"role": "assistant", "content": "x"}])


def test_every_request_is_logged_when_asked(tmp_path):
    log = tmp_path / "requests.jsonl"
    model = StandInModel({"choice": "functions.close_account:", "arguments": "{}", "text": "hello"})
    chat = handler(request_log=str(log))
    chat(llama=model, messages=CONVERSATION[:2], tools=TOOLS, tool_choice="auto", max_tokens=64)
    chat(llama=model, messages=CONVERSATION[:2], max_tokens=3)
    first, second = (json.loads(line) for line in log.read_text().splitlines())
    assert first["finish_reason"] == "tool_calls" and first["tools"] == 2 and first["tool_choice"] == "auto"
    assert first["completion_tokens"] == len("functions.close_account:{}") and first["max_tokens"] == 64
    assert second == {
        **second,
        "completion_tokens": 3,
        "finish_reason": "length",
        "tools": 0,
        "tool_choice": "none",
    }
    assert second["prompt_tokens"] > 0 and second["seconds"] >= 0


def test_text_mode_messages_are_kept_as_they_are():
    messages = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "U"},
        {"role": "user", "content": "V"},
    ]
    assert plain_messages(messages, None) == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "U\n\nV"},
    ]
