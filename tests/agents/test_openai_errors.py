"""How the ``openai`` agent classifies what goes wrong at the endpoint, and that keys stay secret."""

from __future__ import annotations

import asyncio
import logging
import random
import sys
from pathlib import Path

import pytest

from sopbench.agents import AgentInfraError, ContextLengthExceeded
from sopbench.agents.openai import LLMUser, OpenAIAgent, RetryPolicy, public_url

sys.path.insert(0, str(Path(__file__).parent))
from chat_server import Reply, call, error, say, serve  # noqa: E402
from llm_episode import bank_setup, drive  # noqa: E402

KEY_ENV = "SOPBENCH_TEST_ERRORS_KEY"
KEY = "sk-secret-errors-9f8e7d6c5b4a"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def agent(server, **options) -> OpenAIAgent:
    options.setdefault("retry_initial_backoff", 0.001)
    options.setdefault("retry_max_backoff", 0.005)
    options.setdefault("max_retries", 3)
    return OpenAIAgent(base_url=server.url, model="scripted-model", api_key_env=KEY_ENV, **options)


def run(server, **options):
    return asyncio.run(drive(agent(server, **options), bank_setup()))


def test_rate_limit_then_success_is_retried():
    script = [
        error(429, "Rate limit reached", code="rate_limit_exceeded"),
        error(429, "again"),
        call("exit_conversation"),
    ]
    with serve(script) as server:
        episode = run(server)
    assert episode.ended_by == "agent" and len(server.requests) == 3


def test_server_errors_until_give_up_raise_agent_infra_error():
    with (
        serve(lambda request: error(500, "The server had an error")) as server,
        pytest.raises(
            AgentInfraError, match=r"gave up after 4 attempts; last error: HTTP 500: The server had an error"
        ),
    ):
        run(server, max_retries=3)
    assert len(server.requests) == 4


def test_a_timeout_is_retried_then_given_up():
    with serve([Reply(delay=3.0), call("exit_conversation")]) as server:
        assert run(server, request_timeout=0.5).ended_by == "agent"
    with (
        serve(lambda request: Reply(delay=3.0)) as server,
        pytest.raises(
            AgentInfraError, match=r"gave up after 2 attempts; last error: no complete reply within 0.5 s"
        ),
    ):
        run(server, request_timeout=0.5, max_retries=1)


def test_a_refused_connection_and_a_reply_without_choices_are_retried_then_given_up():
    with serve([]) as server:
        url = server.url  # a port nobody listens on once the server is gone
    with pytest.raises(AgentInfraError, match=r"gave up after 2 attempts; last error: connection failed"):
        asyncio.run(
            drive(
                OpenAIAgent(base_url=url, model="m", max_retries=1, retry_initial_backoff=0.001), bank_setup()
            )
        )
    no_choices = Reply(
        body={"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
    )
    gave_up = pytest.raises(AgentInfraError, match="last error: the reply holds no choices")
    with serve(lambda request: no_choices) as server, gave_up:
        run(server, max_retries=1)
    assert len(server.requests) == 2


def test_a_context_length_error_ends_the_episode_as_the_agents_failure():
    message = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."
    reply = error(400, message, code="context_length_exceeded", kind="invalid_request_error")
    with (
        serve([reply]) as server,
        pytest.raises(ContextLengthExceeded, match="maximum context length is 4096"),
    ):
        run(server)
    assert len(server.requests) == 1  # not retried


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (
            error(404, "The model `nope` does not exist", code="model_not_found"),
            r"refused the request \(HTTP 404\)",
        ),
        (error(429, "You exceeded your current quota", code="insufficient_quota"), "quota exhausted"),
    ],
)
def test_errors_that_waiting_cannot_fix_are_not_retried(reply, match):
    with serve([reply, call("exit_conversation")]) as server, pytest.raises(AgentInfraError, match=match):
        run(server)
    assert len(server.requests) == 1


def test_retry_after_header_is_honoured_within_the_cap(monkeypatch):
    policy = RetryPolicy(max_retries=2, initial_backoff=10.0, max_backoff=0.05)
    assert policy.delay(0, random.Random(1), retry_after=30.0) == 0.05
    slept, real_sleep = [], asyncio.sleep

    async def record(seconds, *args, **kwargs):
        slept.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", record)
    with serve([error(429, "slow down", retry_after_ms="1"), call("exit_conversation")]) as server:
        assert run(server, retry_initial_backoff=30.0, retry_max_backoff=30.0).ended_by == "agent"
    assert slept[0] == pytest.approx(0.001)  # the server's 1 ms, not the configured 30 s backoff


def test_the_api_key_never_leaks(caplog: pytest.LogCaptureFixture):
    """The key is sent to the endpoint, and nowhere else: not in errors, reprs, turns or logs."""
    caplog.set_level(logging.DEBUG)
    echo = f"Incorrect API key provided: {KEY}. You can find your API key at https://example.invalid."
    url_with_secret = None
    with serve(
        [
            call("login_user", '{"username": "a", "identification": "b"}'),
            error(401, echo, code="invalid_api_key"),
        ]
    ) as server:
        made = agent(server)
        with pytest.raises(AgentInfraError) as caught:
            asyncio.run(drive(made, bank_setup()))
        url_with_secret = server.url.replace("http://", f"http://user:{KEY}@")
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"  # it was used
    texts = [str(caught.value), repr(caught.value), *map(str, caught.value.args), repr(made), str(vars(made))]
    with pytest.raises(ValueError, match="carries credentials") as refused:  # named without them
        LLMUser(base_url=url_with_secret, model="m", api_key_env=KEY_ENV)
    texts += [caplog.text, str(refused.value)]
    assert "rejected the API key (HTTP 401)" in str(caught.value) and f"${KEY_ENV}" in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    assert "/chat/completions" in caplog.text  # the client's debug logs were captured and are clean
    for text in texts:
        assert KEY not in text
    assert public_url(url_with_secret) == server.url


def test_an_unset_key_variable_named_explicitly_is_a_clear_error(monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(ValueError, match=f"{KEY_ENV} named by --api-key-env is not set"):
        OpenAIAgent(model="m", api_key_env=KEY_ENV)


def test_local_servers_need_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serve([say("Hello"), call("exit_conversation")]) as server:
        made = OpenAIAgent(base_url=server.url, model="llama3")
        assert asyncio.run(drive(made, bank_setup())).ended_by == "agent"


def test_concurrent_episodes_share_one_client_and_release_it():
    async def many(url):
        agents = [OpenAIAgent(base_url=url, model="m", api_key_env=KEY_ENV) for _ in range(8)]
        for made in agents:
            await made.start(bank_setup())
        shared = {id(made.endpoint._clients[url]) for made in agents}
        await asyncio.gather(*(drive(made, bank_setup()) for made in agents))
        return shared, agents

    with serve(lambda request: call("exit_conversation")) as server:
        shared, agents = asyncio.run(many(server.url))
    assert len(shared) == 1 and len(server.requests) == 8
    assert all(not made.endpoint._clients for made in agents)


def test_episodes_run_one_after_another_keep_the_client():
    async def one_by_one(url):
        clients = []
        for _ in range(2):
            made = OpenAIAgent(base_url=url, model="m", api_key_env=KEY_ENV)
            await made.start(bank_setup())
            clients.append(made.endpoint._clients[url])
            await made.close()
        return clients

    first, second = asyncio.run(one_by_one("http://127.0.0.1:9/v1"))  # no request is made
    assert first is second
