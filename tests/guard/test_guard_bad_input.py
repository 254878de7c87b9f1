"""The guard's entry points given what a model or a careless caller may hand them: every bad call
is answered with an error text the model can read (``execute_tool_calls``) or a ``TypeError`` that
names what was wrong (``Guard.check``), never a raw error from the internals."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from sopbench.constraints import Rule, Single
from sopbench.guard import Guard, ToolCall, execute_tool_calls


def refund_guard() -> Guard:
    return Guard.from_rules([Rule("refund", Single.of("check_user", {"user": "user"}), ("user",))])


MAX_VALUE_BYTES = 4 << 20  # the documented bound on one value's text (4 MiB)

DEEP_LIST: list = []
for _ in range(70):
    DEEP_LIST = [DEEP_LIST]

TOOLS = {"check_user": lambda user: True, "refund": lambda user: "refunded"}


def answer(arguments: object) -> str:
    call = {"id": "c1", "type": "function", "function": {"name": "check_user", "arguments": arguments}}
    (message,) = execute_tool_calls(refund_guard(), [call], TOOLS, [])
    assert message["tool_call_id"] == "c1" and message["role"] == "tool"
    return message["content"]


def test_arguments_given_as_an_object_are_used():
    assert answer({"user": "bob"}) == "True"


@pytest.mark.parametrize(
    ("arguments", "wording"),
    [
        (42, "must be a JSON object, got an integer"),
        (2.5, "must be a JSON object, got a number"),
        (True, "must be a JSON object, got a boolean"),
        (["bob"], "must be a JSON object, got a list"),
        ("[1]", "must be a JSON object, got a list"),
        ("{bad", "are not JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper than 64 levels"),
        ('{"user":' * 5_000 + "1" + "}" * 5_000, "nested deeper than 64 levels"),
        ('{"n": NaN, "a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper than 64 levels"),
        ('{"user": "' + "x" * MAX_VALUE_BYTES + '"}', "larger than 4 MiB"),
    ],
)
def test_bad_arguments_are_an_error_text_for_the_model(arguments, wording):
    text = answer(arguments)
    assert text.startswith("Error: the arguments of check_user") and wording in text
    assert "\n" not in text and len(text) < 300


def test_a_deep_object_is_refused_too():
    deep: dict = {}
    inner = deep
    for _ in range(100_000):
        inner["a"] = {}
        inner = inner["a"]
    assert "nested deeper than 64 levels" in answer(deep)


def test_no_tool_calls_and_odd_call_shapes_answer_what_they_can():
    assert execute_tool_calls(refund_guard(), None, TOOLS, []) == []  # message.tool_calls is None
    odd = [{"id": "c1"}, {"id": "c2", "function": "refund"}, SimpleNamespace(id="c3")]
    replies = [m["content"] for m in execute_tool_calls(refund_guard(), odd, TOOLS, [])]
    assert replies == ["Error: Tool  not found."] * 3


@pytest.mark.parametrize(
    ("call", "history", "wording"),
    [
        (None, [], "the call must be a ToolCall, got NoneType"),
        (
            {"name": "refund", "arguments": {"user": "bob"}},
            [],
            "the call must be a ToolCall, got dict (build one",
        ),
        (ToolCall("refund", {"user": "bob"}), None, "history must be a list of ToolCall, got NoneType"),
        (
            ToolCall("refund", {"user": "bob"}),
            [{"name": "check_user"}],
            "history[0] must be a ToolCall, got dict",
        ),
        (
            ToolCall("refund", {"user": "bob"}),
            [ToolCall("check_user", {"user": "bob"}), None],
            "history[1] must be",
        ),
        (ToolCall("refund", None), [], "the call: the arguments must be a mapping, got NoneType"),  # type: ignore[arg-type]
        (ToolCall(3, {}), [], "the call: the name must be text, got int"),  # type: ignore[arg-type]
        (ToolCall("refund", {"a": DEEP_LIST}), [], "nested deeper than 64 levels"),
    ],
)
def test_check_names_what_is_not_a_tool_call(call, history, wording):
    with pytest.raises(TypeError) as raised:
        refund_guard().check(call, history)
    assert wording in str(raised.value) and str(raised.value).startswith("Guard.check: ")


def test_check_still_judges_good_calls():
    guard = refund_guard()
    assert guard.check(
        ToolCall("refund", {"user": "bob"}), (ToolCall("check_user", {"user": "bob"}, True),)
    ).allowed
    assert not guard.check(ToolCall("refund", {"user": "bob"}), []).allowed
