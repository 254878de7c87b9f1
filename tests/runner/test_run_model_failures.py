"""How a run reports what a model or its endpoint did wrong: episodes cut by --episode-timeout keep
what they had (blocking plugins included), the user's endpoint is named as such, episodes in which
the model never replied are counted apart and not scored, baselines are compared on the agent's
scored tasks, and a request no retry can fix stops the run as an error of the invocation."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.agents import (
    Agent,
    AgentInfraError,
    AgentTurn,
    EpisodeSetup,
    OptionsError,
    ToolCallRequest,
    agent_names,
    register_agent,
)
from sopbench.cli import app
from sopbench.domains import EXIT_TOOL
from sopbench.runner import RunSpec, run

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from chat_server import Reply, call, error, say, serve  # noqa: E402

KEY_ENV = "SOPBENCH_TEST_RUN_FAILURES_KEY"
KEY = "sk-runfail-0a1b2c3d4e5f"

if "test-blocking" not in agent_names():

    @register_agent("test-blocking")
    class Blocking(Agent):
        """One tool call, then blocks the thread it runs on (a plugin doing blocking I/O)."""

        name = "test-blocking"

        async def act(self, messages: Sequence[dict]) -> AgentTurn:
            if len(messages) == 1:
                return AgentTurn(
                    tool_calls=(ToolCallRequest("c1", "internal_check_username_exist", '{"username": "x"}'),)
                )
            time.sleep(30)
            return AgentTurn(tool_calls=(ToolCallRequest("x", EXIT_TOOL, "{}"),))

    @register_agent("test-half-broken")
    class HalfBroken(Agent):
        """Refuses at once on tasks of an even index; an infrastructure failure on the others."""

        name = "test-half-broken"

        async def start(self, setup: EpisodeSetup) -> None:
            self.broken = setup.task.index % 2 == 1

        async def act(self, messages: Sequence[dict]) -> AgentTurn:
            if self.broken:
                raise AgentInfraError("down for this task")
            return AgentTurn(content="I cannot help with that.")

    @register_agent("test-wrong-turn")
    class WrongTurn(Agent):
        """A plugin with a bug: ``act`` returns text instead of an ``AgentTurn``."""

        name = "test-wrong-turn"

        async def act(self, messages: Sequence[dict]) -> AgentTurn:
            return "I cannot help."  # type: ignore[return-value]


def rows(folder: Path) -> list[dict]:
    db = sqlite3.connect(folder / "results.sqlite")
    db.row_factory = sqlite3.Row
    return [dict(r) for r in db.execute("SELECT * FROM episodes ORDER BY task_id")]


def openai_config(url: str, tasks: Path, output: Path, **update) -> RunSpec:
    return RunSpec(
        agent="openai",
        agent_options={"base_url": url, "model": "m", "api_key_env": KEY_ENV, "retry_initial_backoff": 0.001},
        tasks=tasks / "bank_tasks.json",
        limit=2,
        output=output,
        baselines=False,
    ).replace(**update)


def test_a_blocking_plugin_is_abandoned_at_the_episode_timeout_and_its_transcript_kept(small_tasks, tmp_path):
    started = time.monotonic()
    report = run(
        RunSpec(
            agent="test-blocking",
            tasks=small_tasks / "bank_tasks.json",
            limit=1,
            output=tmp_path / "r",
            episode_timeout=0.5,
            baselines=False,
        )
    )
    assert time.monotonic() - started < 5 and report.infra_errors == 1
    (row,) = rows(tmp_path / "r")
    assert "timed out after 0.5 s" in row["reason"]
    assert [m["role"] for m in json.loads(row["messages"])] == ["user", "assistant", "tool"]


def test_an_episode_timeout_keeps_the_transcript_usage_and_the_request_it_waited_on(
    small_tasks, tmp_path, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, KEY)

    def answer(request):
        if sum(m["role"] == "assistant" for m in request["messages"]) == 0:
            return call("internal_check_username_exist", '{"username": "x"}')
        return Reply(delay=10.0, content="late")

    with serve(answer) as server:
        run(openai_config(server.url, small_tasks, tmp_path / "r", limit=1, episode_timeout=1.5))
    (row,) = rows(tmp_path / "r")
    assert row["status"] == "infra_error"
    assert len(json.loads(row["messages"])) == 3 and json.loads(row["usage"])["prompt_tokens"] > 0
    assert "while waiting" in row["reason"] and "model m" in row["reason"]


def test_a_failing_user_endpoint_is_named_as_the_users(small_tasks, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)

    def answer(request):
        if request["model"] == "user-model":
            return error(503, "overloaded")
        return say("Could you tell me more?")

    with serve(answer) as server:
        run(
            openai_config(
                server.url,
                small_tasks,
                tmp_path / "r",
                limit=1,
                user="llm",
                user_options={"base_url": server.url, "model": "user-model", "max_retries": 0},
            )
        )
    (row,) = rows(tmp_path / "r")
    assert row["reason"].startswith("user endpoint error:") and "user-model" in row["reason"]


def test_episodes_in_which_the_model_never_replied_are_counted_apart_not_scored_and_exit_1(
    small_tasks, tmp_path, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, KEY)
    overflow = error(
        400, "This model's maximum context length is 8192 tokens", code="context_length_exceeded"
    )
    with serve(lambda request: overflow) as server:
        report = run(openai_config(server.url, small_tasks, tmp_path / "r"))
        assert report.no_reply == {"context_length": 2} and report.completed == 0
        assert report.summary.overall.runs == 0 and not report.complete
        result = CliRunner().invoke(
            app,
            [
                "run", "--agent", "openai", "--model", "m", "--base-url", server.url, "--api-key-env", KEY_ENV,
                "--tasks", str(small_tasks / "bank_tasks.json"), "--limit", "2", "--output", str(tmp_path / "c"),
            ],
        )  # fmt: skip
    assert result.exit_code == 1
    assert "2 episodes ended at the first request: context_length" in result.output


def test_baselines_are_compared_on_the_agents_scored_tasks_only(small_tasks, tmp_path):
    report = run(
        RunSpec(agent="test-half-broken", tasks=small_tasks / "bank_tasks.json", output=tmp_path / "r")
    )
    scored = report.summary.overall.runs
    assert report.infra_errors == 3 and scored == 3
    assert all(baseline.overall.runs == scored for baseline in report.baselines.values())


def test_a_request_no_retry_can_fix_stops_the_run_with_exit_2_and_stores_nothing_for_it(
    small_tasks, tmp_path, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, KEY + " ")
    rejected = Reply(status=401, error={"message": "Incorrect API key"}, echo_headers=True)
    with serve(lambda request: rejected) as server:
        result = CliRunner().invoke(
            app,
            [
                "run", "--agent", "openai", "--model", "m", "--base-url", server.url, "--api-key-env", KEY_ENV,
                "--tasks", str(small_tasks / "bank_tasks.json"), "--output", str(tmp_path / "r"),
                "--concurrency", "1",
            ],
        )  # fmt: skip
    assert result.exit_code == 2 and "rejected the API key (HTTP 401)" in result.output
    assert len(server.requests) == 1 and rows(tmp_path / "r") == []
    assert KEY not in result.output


def test_neither_a_key_in_the_base_url_nor_one_echoed_by_the_server_reaches_the_store(
    small_tasks, tmp_path, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, KEY + "\n")

    def answer(request):
        if sum(m["role"] == "assistant" for m in request["messages"]) == 0:
            return Reply(status=503, error={"message": "busy"}, echo_headers=True)
        return call(EXIT_TOOL)

    with serve(answer) as server:
        url = server.url.replace("http://", f"http://user:{KEY}@")
        with pytest.raises(OptionsError, match="carries credentials") as refused:  # before any request
            run(openai_config(url, small_tasks, tmp_path / "r", limit=1))
        run(openai_config(server.url, small_tasks, tmp_path / "s", limit=1, agent_options={
            "base_url": server.url, "model": "m", "api_key_env": KEY_ENV, "max_retries": 0}))  # fmt: skip
    assert KEY not in str(refused.value) and not (tmp_path / "r").exists()
    stored = b"".join(p.read_bytes() for p in (tmp_path / "s").iterdir() if p.is_file())
    assert KEY.encode() not in stored
    assert "authorization" in rows(tmp_path / "s")[0]["reason"]  # the echo is kept, scrubbed


def test_an_agent_that_breaks_its_contract_is_an_error_of_the_invocation(small_tasks, tmp_path):
    result = CliRunner().invoke(
        app,
        ["run", "--agent", "test-wrong-turn", "--tasks", str(small_tasks), "--output", str(tmp_path / "r"),
         "--no-baselines"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "agent 'test-wrong-turn' is broken: act() returned str, not an AgentTurn" in result.output
    assert rows(tmp_path / "r") == []


def test_run_options_for_what_the_model_is_sent(small_tasks, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    base = ["run", "--agent", "openai", "--model", "m", "--api-key-env", KEY_ENV, "--no-baselines",
            "--tasks", str(small_tasks / "bank_tasks.json"), "--limit", "1"]  # fmt: skip
    with serve(lambda request: call(EXIT_TOOL)) as server:
        default = CliRunner().invoke(app, [*base, "--base-url", server.url, "-o", str(tmp_path / "a")])
        chosen = CliRunner().invoke(
            app,
            [*base, "--base-url", server.url, "-o", str(tmp_path / "b"), "--max-tokens", "none",
             "--tool-choice", "required"],
        )  # fmt: skip
    assert default.exit_code == 0 and chosen.exit_code == 0
    first, second = server.requests
    assert first["max_tokens"] == 512 and first["tool_choice"] == "auto"
    assert "max_tokens" not in second and second["tool_choice"] == "required"
    bad = CliRunner().invoke(app, [*base, "--base-url", "http://127.0.0.1:9/v1", "-o", str(tmp_path / "c"),
                                   "--max-tokens", "0"])  # fmt: skip
    assert bad.exit_code == 2 and "--max-tokens 0" in bad.output
    assert "[default: (512)]" in CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).output


def test_the_llm_users_sampling_and_timeout_are_options_of_run_recorded_in_the_manifest(
    small_tasks, tmp_path, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, KEY)

    def answer(request):
        if request["model"] == "user-model":
            return Reply(content="That is all.", tool_calls=(("exit_conversation", "{}"),))
        return say("Could you tell me more?")

    common = ["--agent", "openai", "--model", "m", "--api-key-env", KEY_ENV, "--tasks", str(small_tasks / "bank_tasks.json"),
              "--limit", "1", "--no-baselines", "--user", "llm", "--user-model", "user-model"]  # fmt: skip
    with serve(answer) as server:
        done = CliRunner().invoke(
            app,
            ["run", *common, "--base-url", server.url, "--user-base-url", server.url, "--output", str(tmp_path / "r"),
             "--user-temperature", "0.25", "--user-max-tokens", "40", "--user-request-timeout", "7"],
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        sent = [r for r in server.requests if r["model"] == "user-model"]
        assert sent and all((r["temperature"], r["max_tokens"]) == (0.25, 40) for r in sent)
        assert all(r["tool_choice"] == "auto" for r in sent)
        manifest = json.loads(
            sqlite3.connect(tmp_path / "r" / "results.sqlite")
            .execute("SELECT value FROM meta WHERE key = 'manifest'")
            .fetchone()[0]
        )
        assert manifest["config"]["user_options"] == {"max_tokens": 40, "temperature": 0.25}
        # 'default' and 'none' send no temperature and no limit; a changed setting is another run
        done = CliRunner().invoke(
            app,
            ["run", *common, "--base-url", server.url, "--user-base-url", server.url, "--output", str(tmp_path / "n"),
             "--user-temperature", "default", "--user-max-tokens", "none"],
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        last = [r for r in server.requests if r["model"] == "user-model"][-1]
        assert "temperature" not in last and "max_tokens" not in last
    done = CliRunner().invoke(
        app, ["run", *common, "--output", str(tmp_path / "x"), "--user-max-tokens", "0"]
    )
    assert done.exit_code == 2 and "--user-max-tokens 0: give a positive whole number" in done.output
    done = CliRunner().invoke(
        app, ["run", "--agent", "refuse-all", "--tasks", str(small_tasks), "--output", str(tmp_path / "y"),
              "--user-temperature", "0.5"]
    )  # fmt: skip
    assert done.exit_code == 2 and "does not take --user-temperature" in done.output


def test_endpoint_slots_make_requests_wait_here_and_the_wait_is_reported_apart(
    small_tasks, tmp_path, monkeypatch
):
    """Three episodes at once against one slot: the requests are answered one at a time, and the
    time they waited for the slot is reported apart from the time the model took (summary, export)."""
    monkeypatch.setenv(KEY_ENV, KEY)
    common = ["--agent", "openai", "--model", "m", "--api-key-env", KEY_ENV, "--tasks", str(small_tasks / "bank_tasks.json"),
              "--limit", "3", "--concurrency", "3", "--max-turns", "2", "--no-baselines", "--json"]  # fmt: skip
    with serve(lambda request: say("Could you tell me more?"), latency=0.3) as server:
        done = CliRunner().invoke(
            app,
            [
                "run",
                *common,
                "--base-url",
                server.url,
                "--endpoint-slots",
                "1",
                "--output",
                str(tmp_path / "one"),
            ],
        )
        assert done.exit_code == 0, done.output
        timing = json.loads(done.stdout)["request_time_s"]
        assert timing["model"] >= 0.85 and timing["queued"] >= 0.8  # waits of 0, 0.3 and 0.6 s
        assert "waited" in done.stderr and "--endpoint-slots" in done.stderr
        done = CliRunner().invoke(
            app, ["run", *common, "--base-url", server.url, "--output", str(tmp_path / "all")]
        )
        assert done.exit_code == 0, done.output
        assert json.loads(done.stdout)["request_time_s"]["queued"] == 0  # no cap: nothing waits here
    lines = [
        json.loads(line)
        for line in CliRunner().invoke(app, ["export", str(tmp_path / "one")]).stdout.splitlines()
    ]
    waits = sorted(line["queue_s"] for line in lines)  # one went at once, the others behind it
    assert waits[0] < 0.1 and waits[1] >= 0.25 and waits[2] >= waits[1] + 0.25
    assert all(line["model_s"] >= 0.3 for line in lines)
    assert all(list(line)[-3:] == ["latency_s", "queue_s", "model_s"] for line in lines)
    assert all("queue_s" not in line["usage"] and line["usage"]["requests"] == 1 for line in lines)
    plain = CliRunner().invoke(app, ["export", str(tmp_path / "one"), "--no-timings"]).stdout
    assert "queue_s" not in plain and "model_s" not in plain and "latency_s" not in plain
