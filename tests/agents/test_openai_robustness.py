"""The ``openai`` agent against servers that misbehave: slow drips, dropped connections, odd
Retry-After values, strict request validation, keys in odd forms; and what it sends (tool_choice,
content beside tool calls, the token limit)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from sopbench.agents import AgentInfraError, AgentRequestError
from sopbench.agents.openai import LLMUser, OpenAIAgent, build_system_prompt, redact_url, scrub_secret

sys.path.insert(0, str(Path(__file__).parent))
from chat_server import Reply, call, error, say, serve  # noqa: E402
from llm_episode import bank_setup, drive  # noqa: E402

KEY_ENV = "SOPBENCH_TEST_ROBUST_KEY"
KEY = "sk-robust-5e4d3c2b1a"


def agent(url: str, **options) -> OpenAIAgent:
    options.setdefault("retry_initial_backoff", 0.001)
    options.setdefault("retry_max_backoff", 0.01)
    options.setdefault("max_retries", 2)
    return OpenAIAgent(base_url=url, model="scripted-model", api_key_env=KEY_ENV, **options)


def play(url: str, **options):
    return asyncio.run(drive(agent(url, **options), bank_setup()))


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


# ---- what is sent -----------------------------------------------------------------------------------
def test_fc_requests_carry_tool_choice_the_published_token_limit_and_empty_content_beside_calls():
    script = [call("login_user", '{"username": "a", "identification": "b"}'), call("exit_conversation")]
    with serve(script) as server:
        play(server.url)
    first, second = server.requests
    assert first["tool_choice"] == "auto" and first["max_tokens"] == 512 and first["tools"]
    assistant = next(m for m in second["messages"] if m["role"] == "assistant")
    assert assistant["content"] == "" and assistant["tool_calls"]


def test_tool_choice_and_the_token_limit_can_be_changed_or_left_out():
    with serve([call("exit_conversation")]) as server:
        play(server.url, tool_choice="required", max_tokens=None)
    (request,) = server.requests
    assert request["tool_choice"] == "required" and "max_tokens" not in request
    with pytest.raises(ValueError, match="(?s)tool_choice.*'auto', 'required' or 'none'"):
        agent("http://127.0.0.1:9/v1", tool_choice="sometimes")


def test_the_llm_user_sends_tool_choice_with_its_exit_tool():
    user = LLMUser(model="u", base_url=None, api_key_env=KEY_ENV)

    def answer(request):
        return call("exit_conversation") if request["model"] == "u" else say("Please tell me your username.")

    with serve(answer) as server:
        user.endpoint.base_url = server.url
        asyncio.run(drive(agent(server.url), bank_setup(with_exit=False), user, max_messages=8))
    user_requests = [r for r in server.requests if r["model"] == "u"]
    assert user_requests and all(r["tool_choice"] == "auto" for r in user_requests)


def test_compact_tools_shorten_the_text_mode_prompt_and_the_published_rendering_stays_default():
    setup = bank_setup()
    published = build_system_prompt(setup, "react")
    compact = build_system_prompt(setup, "react", compact_tools=True)
    assert '\n  {\n    "type": "function"' in published and len(compact) < len(published) * 0.9
    assert '[{"type":"function"' in compact
    with serve([say("Thought: done\nAction: exit_conversation\nAction Input: {}")]) as server:
        play(server.url, tool_mode="react", compact_tools=True)
    assert server.requests[0]["messages"][0]["content"] == compact


# ---- timeouts -----------------------------------------------------------------------------------------
def test_the_request_timeout_bounds_a_slow_drip_reply():
    started = time.monotonic()
    with (
        serve(lambda request: Reply(content="x" * 50, drip=0.05)) as server,
        pytest.raises(AgentInfraError, match="no complete reply within 0.5 s"),
    ):
        play(server.url, request_timeout=0.5, max_retries=1)
    assert time.monotonic() - started < 4  # two attempts of 0.5 s, not the 10 s the drip takes


def test_a_timed_out_request_is_counted_and_sent_again_after_a_whole_backoff_step(monkeypatch):
    slept, real_sleep = [], asyncio.sleep

    async def record(seconds, *args, **kwargs):
        slept.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", record)
    the_agent = agent("", request_timeout=0.3, retry_initial_backoff=0.2, retry_max_backoff=5.0)
    with serve([Reply(delay=1.0), call("exit_conversation")]) as server:
        the_agent.endpoint.base_url = server.url
        asyncio.run(drive(the_agent, bank_setup()))
    assert the_agent.endpoint.timed_out_requests == 1 and the_agent.endpoint.requests == 2
    assert 0.2 in slept  # the full step (no jitter towards zero): the server may still be busy


@pytest.mark.parametrize(
    "value",
    [
        "nan",
        "inf",
        "-inf",
        "-5",
        "1e308",
        "Wed, 21 Oct 2015 07:28:00 GMT",
        "soon",
        "",
        "Fri, 31 Dec 9999 23:59:59 GMT",
    ],
)
def test_any_retry_after_value_gives_a_bounded_wait(value):
    started = time.monotonic()
    with serve([error(429, "slow down", retry_after=value), call("exit_conversation")]) as server:
        assert play(server.url, retry_max_backoff=0.05).ended_by == "agent"
    assert time.monotonic() - started < 3


def test_a_dropped_connection_is_reported_as_such_not_as_a_timeout():
    with (
        serve(lambda request: Reply(drop=True)) as server,
        pytest.raises(AgentInfraError, match=r"last error: connection failed") as caught,
    ):
        play(server.url, request_timeout=30.0, max_retries=1)
    assert "within" not in str(caught.value)


# ---- permanent errors -----------------------------------------------------------------------------
def test_a_server_error_naming_a_validation_failure_is_a_permanent_error_not_retried():
    reply = error(500, "1 validation error for ChatCompletionRequest: messages.1.content: field required")
    with serve(lambda request: reply) as server, pytest.raises(AgentRequestError, match="not retried"):
        play(server.url, max_retries=5)
    assert len(server.requests) == 1


def test_a_404_on_a_base_url_without_v1_says_so_and_is_not_retried():
    with serve(lambda request: error(404, "Not Found")) as server:
        root = server.url.removesuffix("/v1")
        with pytest.raises(AgentRequestError, match=r"under /v1: try --base-url http://127\.0\.0\.1:\d+/v1"):
            play(root, max_retries=5)
    assert len(server.requests) == 1


# ---- secrets ------------------------------------------------------------------------------------------
def test_a_key_with_a_trailing_space_works_and_is_scrubbed_in_every_form(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY + " \n")
    with serve([call("exit_conversation")]) as server:
        play(server.url)
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"
    secret = "sk-a/b+c=d9f8e7 "
    echoed = f"key {secret.strip()} / {secret}/ url ?api_key={quote(secret.strip(), safe='')}&x=1"
    scrubbed = scrub_secret(echoed, secret)
    assert scrubbed.count("***") == 3 and "d9f8e7" not in scrubbed


def test_an_echoed_authorization_header_never_reaches_an_error_message():
    reply = Reply(status=401, error={"message": "bad key"}, echo_headers=True)
    with serve(lambda request: reply) as server, pytest.raises(AgentRequestError) as caught:
        play(server.url)
    assert "authorization" in str(caught.value) and KEY not in str(caught.value)


def test_a_base_url_is_stored_without_its_credentials():
    url = f"https://user:{KEY}@llm.example.invalid:8443/v1?api-key={KEY}&api-version=2024"
    assert redact_url(url) == "https://llm.example.invalid:8443/v1?api-key=***&api-version=2024"
