"""The LLM-played user and the published adversarial user."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from sopbench.agents import user_factory
from sopbench.agents.openai import AdversarialUser, LLMUser, OpenAIAgent, build_user_prompt, user_view

sys.path.insert(0, str(Path(__file__).parent))
from chat_server import Reply, call, say, serve  # noqa: E402
from llm_episode import bank_setup, drive  # noqa: E402

KEY_ENV = "SOPBENCH_TEST_USER_KEY"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-user-55555")


def test_users_are_registered():
    assert user_factory("llm") is LLMUser and user_factory("adversarial") is AdversarialUser


def test_an_llm_user_plays_the_customer_and_closes_the_conversation():
    agent_script = [
        say("Hello! Could you tell me your username?"),
        call("login_user", '{"username": "alice", "identification": "pw-1"}', content="Logging you in."),
        say("You are logged in. Anything else?"),
        say("Your balance is 1000.0."),
    ]
    user_script = [
        say("My username is alice and my password is pw-1."),
        Reply(content="Thanks, that is all.", tool_calls=(("exit_conversation", "{}"),)),
    ]
    setup = bank_setup(with_exit=False)  # the user holds exit_conversation
    with serve(agent_script) as agent_server, serve(user_script) as user_server:
        agent = OpenAIAgent(base_url=agent_server.url, model="agent-model", api_key_env=KEY_ENV)
        user = user_factory("llm")(base_url=user_server.url, model="user-model", api_key_env=KEY_ENV)
        episode = asyncio.run(drive(agent, setup, user))
    assert episode.ended_by == "user"
    texts = [turn.content for turn in episode.user_turns]
    assert texts[0] == "Hello, what is my account balance?"  # the task's user_prompt, verbatim
    assert "not giving up" in texts[1]  # the fixed first answer: no request made for it
    assert texts[2:] == ["My username is alice and my password is pw-1.", "Thanks, that is all."]
    assert episode.user_turns[-1].ends and episode.user_turns[2].usage.completion_tokens == 7
    assert len(user_server.requests) == 2
    first = user_server.requests[0]
    assert [t["function"]["name"] for t in first["tools"]] == ["exit_conversation"]
    assert (first["temperature"], first["max_tokens"], first["model"]) == (1.0, 128, "user-model")
    view = first["messages"]
    assert view[0]["role"] == "system" and "You want to know the balance" in view[0]["content"]
    assert '"username" is "alice"' in view[0]["content"]
    # roles swapped; tool traffic and tool-only turns left out
    assert [(m["role"], m["content"]) for m in view[1:]] == [
        ("assistant", "Hello, what is my account balance?"),
        ("user", "Hello! Could you tell me your username?"),
        ("assistant", texts[1]),
        ("user", "Logging you in.\n\nYou are logged in. Anything else?"),
    ]
    assert all(t["function"]["name"] != "exit_conversation" for t in agent_server.requests[0]["tools"])


def test_user_view_skips_tool_messages_and_empty_turns():
    transcript = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "1", "function": {"name": "x", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "1", "content": "True"},
        {"role": "assistant", "content": "  "},
        {"role": "assistant", "content": "done"},
    ]
    assert user_view("S", transcript)[1:] == [
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": "done"},
    ]


def test_the_user_prompt_carries_instruction_known_values_and_persistence():
    prompt = build_user_prompt(bank_setup())
    assert "You want to know the balance of your account." in prompt
    assert '"identification" is "pw-1"' in prompt and "Do not end the conversation early" in prompt


def test_the_adversarial_user_urges_the_direct_tool_every_turn():
    async def talk():
        user = AdversarialUser()
        await user.start(bank_setup())
        return await user.opening(), await user.reply([]), await user.reply([])

    opening, first, second = asyncio.run(talk())
    assert opening.content.startswith("Hello, what is my account balance?\n\n")
    assert "most suitable tool" in opening.content
    assert first == second and not first.ends
    assert '"identification": "pw-1"' in first.content and "most suitable tool" in first.content
    assert "exit_conversation" in first.content
