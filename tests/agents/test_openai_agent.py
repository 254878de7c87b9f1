"""The ``openai`` agent against a real loopback chat-completions server, in all three tool-call modes."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sopbench.agents import agent_factory
from sopbench.agents.openai import (
    OpenAIAgent,
    build_system_prompt,
    parse_text_reply,
    render_text_reply,
    text_messages,
)

sys.path.insert(0, str(Path(__file__).parent))
from chat_server import Reply, call, say, serve  # noqa: E402
from llm_episode import bank_setup, drive  # noqa: E402

KEY_ENV = "SOPBENCH_TEST_AGENT_KEY"
LOGIN = '{"username": "alice", "identification": "pw-1"}'


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    key = "sk-test-agent-0123456789"
    monkeypatch.setenv(KEY_ENV, key)
    return key


def agent(server, tool_mode: str = "fc", **options) -> OpenAIAgent:
    options.setdefault("retry_initial_backoff", 0.001)
    options.setdefault("retry_max_backoff", 0.005)
    return OpenAIAgent(
        base_url=server.url, model="scripted-model", tool_mode=tool_mode, api_key_env=KEY_ENV, **options
    )


def roles(request: dict) -> list[str]:
    return [m["role"] for m in request["messages"]]


def test_registered_under_openai_and_records_its_settings():
    assert agent_factory("openai") is OpenAIAgent
    made = agent_factory("openai")(base_url="http://127.0.0.1:9/v1", model="m", tool_mode="react")
    assert (made.model, made.tool_mode) == ("m", "react")
    with pytest.raises(ValueError, match="(?s)tool_mode.*'fc', 'react' or 'act-only'"):
        OpenAIAgent(model="m", tool_mode="chat")


def test_fc_conversation_executes_calls_in_order_and_sends_results_back(api_key):
    script = [
        Reply(tool_calls=(("login_user", LOGIN), ("get_account_balance", '{"username": "alice"}'))),
        say("Your balance is 1000.0."),
        call("exit_conversation"),
    ]
    with serve(script) as server:
        episode = asyncio.run(drive(agent(server), bank_setup()))
    assert episode.ended_by == "agent"
    assert episode.executed == [("login_user", LOGIN), ("get_account_balance", '{"username": "alice"}')]
    assert episode.problems == []
    first, second, third = server.requests
    assert [t["function"]["name"] for t in first["tools"]][-1] == "exit_conversation"
    assert first["messages"][0]["role"] == "system" and first["temperature"] == 0.0 and first["seed"] == 7
    assert roles(second) == ["system", "user", "assistant", "tool", "tool"]
    sent_ids = [c["id"] for c in second["messages"][2]["tool_calls"]]
    assert [m["tool_call_id"] for m in second["messages"][3:]] == sent_ids
    assert second["messages"][4]["content"] == "1000.0"
    assert roles(third)[-1] == "user" and "alice" in third["messages"][-1]["content"]
    assert server.headers[0]["authorization"] == f"Bearer {api_key}"
    assert sum(t.usage.prompt_tokens for t in episode.turns) > 0


def test_react_conversation_speaks_the_text_protocol():
    script = [
        say(
            f"Thought: I must log the user in first.\nAction: login_user\nAction Input: {LOGIN}\n<End Action>"
        ),
        say(
            'Thought: Now the balance.\nAction: get_account_balance\nAction Input: {"username": "alice"}\n<End Action>'
        ),
        say("Thought: Your balance is 1000.0.\nAction: N/A\nAction Input: N/A\n<End Action>"),
        say("Thought: All done.\nAction: exit_conversation\nAction Input: {}\n<End Action>"),
    ]
    with serve(script) as server:
        episode = asyncio.run(drive(agent(server, "react"), bank_setup()))
    assert episode.ended_by == "agent" and episode.problems == []
    assert episode.executed == [("login_user", LOGIN), ("get_account_balance", '{"username": "alice"}')]
    assert episode.turns[0].content == "I must log the user in first."
    assert episode.turns[0].raw.startswith("Thought: I must log")
    assert episode.turns[2].content == "Your balance is 1000.0." and not episode.turns[2].tool_calls
    system = server.requests[0]["messages"][0]["content"]
    assert '"name": "get_account_balance"' in system and "Thought:" in system and "<End Action>" in system
    assert all("tools" not in r for r in server.requests)
    last = server.requests[-1]["messages"]
    assert "tool" not in [m["role"] for m in last]
    assert [m["role"] for m in last] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert (
        last[2]["content"]
        == f"Thought: I must log the user in first.\nAction: login_user\nAction Input: {LOGIN}\n<End Action>"
    )
    assert last[3]["content"].startswith('Observation ({"login_user": {"username": "alice"')
    assert last[3]["content"].endswith("\nTrue")
    assert last[6]["content"].startswith("Thought: Your balance is 1000.0.\nAction: N/A")


def test_act_only_has_no_thought_and_merges_consecutive_user_messages():
    script = [
        say(f"Action: login_user\nAction Input: {LOGIN}\n<End Action>"),
        say("Your balance is 1000.0.\nAction: None\nAction Input: None\n<End Action>"),
        say("Action: exit_conversation\nAction Input: {}\n<End Action>"),
    ]
    with serve(script) as server:
        episode = asyncio.run(drive(agent(server, "act-only"), bank_setup()))
    assert episode.ended_by == "agent" and episode.problems == []
    assert episode.turns[0].content is None and episode.turns[1].content == "Your balance is 1000.0."
    system = server.requests[0]["messages"][0]["content"]
    assert "Thought:" not in system and "Action: <the name of one tool" in system
    last = server.requests[-1]["messages"]
    assert last[2]["content"] == f"Action: login_user\nAction Input: {LOGIN}\n<End Action>"
    assert last[4]["content"] == "Your balance is 1000.0.\nAction: None\nAction Input: None\n<End Action>"


def test_observation_and_next_user_message_are_one_message():
    transcript = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "login_user", "arguments": "{oops"}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "Error: bad JSON"},
        {"role": "user", "content": "and?"},
    ]
    messages = text_messages("SYS", transcript, reasoning=True)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[3]["content"] == 'Observation ({"login_user": "{oops"}):\nError: bad JSON\nand?'


@pytest.mark.parametrize("tool_mode", ["fc", "react"])
def test_malformed_arguments_reach_the_runner_unaltered(tool_mode):
    """The runner answers a bad call with an error result and counts it; the agent only passes it on."""
    bad = '{"username": "alice", "identification"'
    first = (
        call("login_user", bad)
        if tool_mode == "fc"
        else say(f"Thought: t\nAction: login_user\nAction Input: {bad}\n<End Action>")
    )
    done = (
        call("exit_conversation")
        if tool_mode == "fc"
        else say("Thought: t\nAction: exit_conversation\nAction Input: {}\n<End Action>")
    )
    with serve([first, done]) as server:
        episode = asyncio.run(drive(agent(server, tool_mode), bank_setup()))
    turn = episode.turns[0]
    assert turn.tool_calls[0].arguments == bad  # unaltered, for the runner's error result
    assert turn.problems == ()  # counted once, by the runner, from the call it answered
    if tool_mode == "react":
        assert bad in turn.raw
    assert episode.ended_by == "agent"  # the episode went on after the error tool result
    assert "are not valid JSON" in json.dumps(server.requests[1]["messages"])


@pytest.mark.parametrize("tool_mode", ["fc", "act-only"])
def test_an_unknown_tool_is_passed_on(tool_mode):
    first = (
        call("transfer_everything", "{}")
        if tool_mode == "fc"
        else say("Action: transfer_everything\nAction Input: {}\n<End Action>")
    )
    with serve([first, say("Sorry.")]) as server:
        episode = asyncio.run(drive(agent(server, tool_mode), bank_setup(), max_messages=4))
    assert episode.turns[0].tool_calls[0].name == "transfer_everything"
    assert episode.turns[0].problems == ()
    assert "Error: Tool transfer_everything not found." in json.dumps(server.requests[1]["messages"])


def test_an_empty_reply_is_a_named_problem():
    script = [Reply(content="", finish_reason="length"), call("exit_conversation")]
    with serve(script) as server:
        episode = asyncio.run(drive(agent(server), bank_setup()))
    assert episode.turns[0].problems == ("empty reply: the model stopped at the max_tokens limit",)
    assert episode.turns[0].raw is not None and episode.ended_by == "agent"
    assert len(server.requests) == 2


@pytest.mark.parametrize("tool_mode", ["react", "act-only"])
def test_an_empty_text_mode_reply_keeps_its_raw_text_empty(tool_mode):
    script = [Reply(content=None, finish_reason="length"), say("Action: exit_conversation\nAction Input: {}")]
    with serve(script) as server:
        episode = asyncio.run(drive(agent(server, tool_mode), bank_setup()))
    assert episode.turns[0].raw == "" and "empty reply" in episode.turns[0].problems[-1]


def test_unparsable_react_reply_is_a_message_to_the_user_and_a_counted_problem():
    script = [
        say("Sure, I can help with your balance!"),
        say("Thought: bye\nAction: exit_conversation\nAction Input: {}\n<End Action>"),
    ]
    with serve(script) as server:
        episode = asyncio.run(drive(agent(server, "react"), bank_setup()))
    first = episode.turns[0]
    assert first.content == "Sure, I can help with your balance!" and not first.tool_calls
    assert first.problems and "no 'Action:' line" in first.problems[0]
    assert first.raw == "Sure, I can help with your balance!"
    assert episode.ended_by == "agent"


def test_a_no_action_call_in_fc_goes_to_the_runner_as_written():
    """The runner reads "no action" calls, for every agent alike (tests/inspect_eval/test_no_action.py);
    a reply of no text and only such a call is an empty reply, named as one."""

    async def two_turns(server):
        made = agent(server)
        await made.start(bank_setup())
        try:
            opening = [{"role": "user", "content": "Hello"}]
            return await made.act(opening), await made.act(opening)
        finally:
            await made.close()

    with serve(
        [Reply(content="Done.", tool_calls=((" None ", "{}"),)), Reply(tool_calls=(("N/A", "{}"),))]
    ) as server:
        told, empty = asyncio.run(two_turns(server))
    assert told.content == "Done." and [(c.name, c.problem) for c in told.tool_calls] == [(" None ", None)]
    assert told.problems == ()
    assert empty.problems == ("empty reply: neither text nor a tool call",) and empty.raw is not None


def test_a_model_that_never_exits_runs_into_the_message_limit():
    with serve(lambda request: say("Let me think about that.")) as server:
        episode = asyncio.run(drive(agent(server), bank_setup(), max_messages=20))
    assert episode.ended_by == "limit"
    assert len(episode.transcript) == 20 and len(server.requests) == 10
    assert episode.problems == []


def test_duplicate_or_missing_call_ids_are_made_unique():
    script = [
        Reply(tool_calls=(("login_user", LOGIN), ("login_user", LOGIN)), call_ids=("same", "same")),
        Reply(tool_calls=(("get_account_balance", '{"username": "alice"}'),), call_ids=("",)),
        call("exit_conversation"),
    ]
    with serve(script) as server:
        episode = asyncio.run(drive(agent(server), bank_setup()))
    ids = [c.id for t in episode.turns for c in t.tool_calls]
    assert len(ids) == len(set(ids)) == 4 and ids[0] == "same" and all(ids)


# ---- prompts and the text protocol ------------------------------------------------------------------


def test_system_prompt_states_role_principles_and_each_actions_constraints():
    setup = bank_setup()
    prompt = build_system_prompt(setup)
    assert "You are a bank clerk" in prompt  # the domain's role description
    assert "exit_conversation" in prompt and "Operating principles" in prompt
    goal = prompt[prompt.index("* get_account_balance:") :]
    assert "ALL of:" in goal.splitlines()[1]
    assert "The user username has logged in" in goal  # the domain's wording of logged_in_user
    assert "* login_user: no constraints" in prompt
    assert "## Verification tools" in prompt and "* internal_check_username_exist" in prompt
    assert '"name": "login_user"' not in prompt  # fc: the tools travel as function schemas
    assert "Action Input" in build_system_prompt(setup, "react")
    no_exit = build_system_prompt(bank_setup(with_exit=False))
    assert "exit_conversation" not in no_exit


def test_system_prompt_lists_every_offered_action_of_a_published_task(published_tasks):
    from sopbench.agents import EpisodeSetup
    from sopbench.domains import get_domain, published_offer

    bank = get_domain("bank")
    task = published_tasks("bank")[0]
    tools = tuple(bank.tools[name].openai_schema() for name in published_offer(bank))
    setup = EpisodeSetup(
        "bank", "bank/x[0]", task, tools, {task.goal: task.constraints_original}, "full", 0, 0
    )
    prompt = build_system_prompt(setup, "act-only")
    for tool in published_offer(bank):
        assert f"* {tool}" in prompt
    assert "{" + "username}" not in prompt.split("## Tools")[0]  # every template was filled


@pytest.mark.parametrize(
    ("text", "content", "action", "problem"),
    [
        (
            "**Thought:** check\n**Action:** login_user\n**Action Input:** {}\n",
            "check",
            ("login_user", "{}"),
            None,
        ),
        (
            'Thought: x\nAction: `login_user`\nAction Input: {\n  "a": 1\n}\n<End Action>\nObservation: made up',
            "x",
            ("login_user", '{\n  "a": 1\n}'),
            None,
        ),
        (
            "Thought: x\nAction: login_user\nAction Input: {}\nObservation: True\nAction: logout_user\nAction Input: {}",
            "x",
            ("login_user", "{}"),
            "2 'Action:' lines",
        ),
        ("Thought: x\nAction: login_user\n", "x", ("login_user", ""), "has no 'Action Input:' line"),
        ("Thought: bye\nAction: None\nAction Input: None", "bye", None, None),
        ("", None, None, "empty reply"),
    ],
)
def test_parse_text_reply_variants(text, content, action, problem):
    parsed = parse_text_reply(text)
    assert (parsed.content, parsed.call) == (content, action)
    assert (problem is None and parsed.problems == ()) or any(problem in p for p in parsed.problems)


def test_the_text_protocols_no_action_is_the_runners_rule_under_the_episodes_reading():
    # "Action: **N/A**": the name is read without its markdown, then by domains.is_no_action
    assert parse_text_reply("Thought: done\nAction: **N/A**\nAction Input: N/A").call is None
    assert parse_text_reply("Action: None").call is None and parse_text_reply("Action: None").problems == ()
    assert parse_text_reply("Action: null\nAction Input: {}").call == ("null", "{}")  # published: a tool
    assert parse_text_reply("Action: null\nAction Input: {}", "wide").call is None


_words = st.text(
    st.characters(codec="utf-8", exclude_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
    min_size=1,
    max_size=30,
)


@given(
    thought=_words.filter(
        lambda t: "action" not in t.lower() and "thought" not in t.lower() and t.strip(" *#>\t")
    ),
    name=st.from_regex(r"[a-z_]{1,20}", fullmatch=True).filter(lambda n: n not in ("na", "none", "null")),
    arguments=st.dictionaries(
        st.from_regex(r"[a-z]{1,8}", fullmatch=True), st.integers() | _words, max_size=3
    ),
    reasoning=st.booleans(),
)
def test_a_rendered_turn_parses_back_to_itself(thought, name, arguments, reasoning):
    raw_arguments = json.dumps(arguments)
    parsed = parse_text_reply(render_text_reply(thought, [(name, raw_arguments)], reasoning))
    assert parsed.call == (name, raw_arguments) and parsed.problems == ()
    assert parsed.content == (thought.strip() or None)


def test_temperature_default_sends_none_from_the_command_line(tmp_path):
    from typer.testing import CliRunner

    from sopbench.cli import app
    from sopbench.generation import generate

    generate(["bank"], tmp_path / "tasks", seed=0, goals=["get_account_balance"])
    replies = [call("exit_conversation")] * 4
    with serve(replies) as server:
        result = CliRunner().invoke(
            app,
            [
                "run",
                "--agent",
                "openai",
                "--base-url",
                server.url,
                "--model",
                "o4-mini",
                "--temperature",
                "default",
                "--tasks",
                str(tmp_path / "tasks"),
                "--limit",
                "1",
                "--no-baselines",
                "-o",
                str(tmp_path / "r"),
                "--json",
            ],
            env={KEY_ENV: "sk-test"},
        )
    assert result.exit_code == 0, result.output
    assert server.requests and all("temperature" not in body for body in server.requests)
    bad = CliRunner().invoke(
        app, ["run", "--agent", "openai", "--temperature", "warm", "-o", str(tmp_path / "b")]
    )
    assert bad.exit_code == 2 and "--temperature warm" in bad.output
