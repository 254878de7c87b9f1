"""``sopbench mcp serve`` driven by the MCP SDK's own client, over stdio (a subprocess) and HTTP
(127.0.0.1), and ``run --via mcp`` against ``run`` (the parity proof, on a slice of the generated
set; the whole set is measured by benchmarks/mcp_parity.sh)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp.types", reason="the mcp extra is not installed (pip install 'sopbench[mcp]')")

from mcp import StdioServerParameters  # noqa: E402
from mcp.client import Client  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from sopbench.agents import Reference  # noqa: E402
from sopbench.mcp import ASK_USER, listed_tools  # noqa: E402
from sopbench.runner import RunSpec, read_run  # noqa: E402
from sopbench.runner.episode import episode_setup, select_tasks  # noqa: E402

TASK = "bank/apply_credit_card[0]"


def _serve_argv(output: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "sopbench.cli",
        "mcp",
        "serve",
        "--domain",
        "bank",
        "--output",
        str(output),
        *extra,
    ]


def _client(output: Path, *extra: str, errlog=None) -> Client:
    argv = _serve_argv(output, *extra)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    return Client(stdio_client(params, errlog=errlog or sys.stderr), mode="legacy")


def _rows(output: Path) -> list:
    return list(read_run(output, records=False).rows)


def _offered(task_id: str = TASK) -> tuple:
    spec = RunSpec(agent="reference", domains="bank", output="unused")
    task = next(t for t, i in select_tasks(spec) if i == task_id)
    return episode_setup(task, task_id, "full", 0, 0).tools


def test_the_listed_tools_are_runs_offered_tools_then_ask_user(tmp_path: Path) -> None:
    async def main() -> None:
        async with _client(tmp_path / "o", "--task", TASK) as client:
            listed = (await client.list_tools()).tools
            prompt = await client.get_prompt("task")
            instructions = client.instructions
        wanted = listed_tools(_offered())
        assert [t.name for t in listed] == [t["name"] for t in wanted]
        assert listed[-1].name == ASK_USER
        for tool, want in zip(listed, wanted, strict=True):
            assert tool.description == want["description"]
            assert tool.input_schema == want["inputSchema"]
        assert "## Your role" in prompt.messages[0].content.text
        assert prompt.messages[-1].content.text in instructions

    asyncio.run(main())
    [row] = _rows(tmp_path / "o")
    assert row.status == "infra_error" and "session closed" in row.reason  # dropped: named, retried


def _reference_episode(tmp_path: Path, *extra: str, bad_calls: bool = False) -> list:
    """Play the reference policy over MCP, with a bad call and an unknown tool first when asked."""
    answers: list = []

    async def main() -> None:
        async with _client(tmp_path / "o", "--task", TASK, *extra) as client:
            prompt = await client.get_prompt("task")
            opening = prompt.messages[-1].content.text
            if bad_calls:
                answers.append(await client.call_tool("no_such_tool", {"x": 1}))
                answers.append(await client.call_tool("login_user", {"wrong": 1}))
            spec = RunSpec(agent="reference", domains="bank", output="unused")
            task = next(t for t, i in select_tasks(spec) if i == TASK)
            agent = Reference()
            await agent.start(episode_setup(task, TASK, "full", 0, 0))
            messages = [{"role": "user", "content": opening}]
            for _ in range(30):
                turn = await agent.act(messages)
                if not turn.tool_calls:
                    messages.append({"role": "assistant", "content": turn.content})
                    result = await client.call_tool(ASK_USER, {"message": turn.content or ""})
                    messages.append({"role": "user", "content": result.content[0].text})
                    continue
                call = turn.tool_calls[0]
                result = await client.call_tool(call.name, json.loads(call.arguments or "{}"))
                messages.append(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": call.arguments},
                            }
                        ],
                    }
                )
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result.content[0].text})
                if (result.meta or {}).get("sopbench/ended"):
                    answers.append(result)
                    break
            answers.append(await client.call_tool("exit_conversation", {}))  # after the end: refused

    asyncio.run(main())
    return answers


def test_a_whole_episode_to_a_verdict_with_bad_calls_answered_as_errors(tmp_path: Path) -> None:
    answers = _reference_episode(tmp_path, bad_calls=True)
    unknown, bad = answers[0], answers[1]
    assert unknown.is_error and bad.is_error  # MCP error results; the episode went on
    assert answers[-1].is_error and "has ended" in answers[-1].content[0].text
    [row] = _rows(tmp_path / "o")
    assert row.status == "completed" and row.end_reason == "exit_conversation"
    assert row.passed is not None and row.malformed_calls == 2
    assert row.agent == "mcp"


def test_an_unknown_task_id_and_a_port_in_use_are_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        _serve_argv(tmp_path / "o", "--task", "bank/nope[0]"),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("error: --task bank/nope[0]: no such task")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        done = subprocess.run(
            _serve_argv(tmp_path / "p", "--all", "--transport", "http", "--port", str(port)),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2
    assert re.search(rf"error: --port {port}: cannot listen on 127.0.0.1:{port}", done.stderr)


def test_a_client_that_never_exits_then_floods_is_ended_counted_and_stored(tmp_path: Path) -> None:
    """A client that neither calls the exit tool nor closes is ended at --episode-timeout; its 10,000
    calls after that are each answered with an error, counted in the server's last line, and the
    stored episode is the one that timed out."""
    errlog = (tmp_path / "serve.log").open("w+")

    async def main() -> list:
        async with _client(tmp_path / "o", "--task", TASK, "--episode-timeout", "2", errlog=errlog) as client:
            await client.get_prompt("task")
            first = await client.call_tool("get_account_balance", {"account_number": "x"})
            assert not first.content[0].text.startswith("[sopbench]")
            await asyncio.sleep(4)  # idle past the episode timeout, without closing
            answers = []
            for _ in range(20):
                batch = [
                    client.call_tool("get_account_balance", {"account_number": str(i)}) for i in range(500)
                ]
                answers += await asyncio.gather(*batch)
            return answers

    with errlog:
        answers = asyncio.run(main())
    assert len(answers) == 10_000
    assert all(a.is_error and "has ended" in a.content[0].text for a in answers)
    log = (tmp_path / "serve.log").read_text()
    assert "10000 requests after their episode ended were refused" in log, log[-2000:]
    [row] = _rows(tmp_path / "o")
    assert (row.task_id, row.status, row.reason) == (TASK, "infra_error", "the episode timed out after 2 s")
    assert row.agent_steps == 1  # the call made before the timeout is kept
    with sqlite3.connect(tmp_path / "o" / "results.sqlite") as db:
        assert db.execute("pragma integrity_check").fetchone()[0] == "ok"


def _http_server(output: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    argv = _serve_argv(output, "--all", "--transport", "http", "--port", "0", *extra)
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    started = time.monotonic()
    while time.monotonic() - started < 120:
        line = proc.stderr.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
        if found:
            return proc, found.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"the HTTP server did not start: {proc.stderr.read()}")


def test_http_two_sessions_at_once_get_two_episodes_and_many_calls_are_counted(tmp_path: Path) -> None:
    proc, url = _http_server(tmp_path / "o", "--episode-timeout", "60")
    try:

        async def session(calls: int) -> tuple[str, list]:
            async with Client(url, mode="legacy") as client:
                prompt = await client.get_prompt("task")
                results = [
                    await client.call_tool("get_account_balance", {"account_number": "x"})
                    for _ in range(calls)
                ]
                return prompt.description, results

        async def main() -> list:
            return await asyncio.gather(session(3), session(40))

        (first, _), (second, many) = asyncio.run(main())
        assert first != second  # one episode per session, in order
        assert sum(r.is_error and "has ended" in r.content[0].text for r in many) == 30  # after max_actions
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    rows = {r.task_id: r for r in _rows(tmp_path / "o")}
    assert len(rows) == 2
    ends = sorted(r.end_reason for r in rows.values())
    assert ends == ["infra_error", "max_actions"]  # the 3-call session dropped; the other hit the limit
    with sqlite3.connect(tmp_path / "o" / "results.sqlite") as db:
        assert db.execute("pragma integrity_check").fetchone()[0] == "ok"


def test_run_via_mcp_gives_the_verdicts_of_run(tmp_path: Path) -> None:
    base = [
        sys.executable,
        "-m",
        "sopbench.cli",
        "run",
        "--agent",
        "reference",
        "--domain",
        "all",
        "--limit",
        "2",
        "--no-baselines",
        "--concurrency",
        "2",
    ]
    for name, extra in (("direct", []), ("mcp", ["--via", "mcp"])):
        done = subprocess.run(
            [*base, "--output", str(tmp_path / name), *extra], capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr
    verdicts = {}
    for name in ("direct", "mcp"):
        verdicts[name] = {
            (r.task_id, r.run): (r.status, r.end_reason, r.passed, r.verdict) for r in _rows(tmp_path / name)
        }
    assert len(verdicts["mcp"]) == 14
    assert verdicts["mcp"] == verdicts["direct"]
    assert {r.agent for r in _rows(tmp_path / "mcp")} == {"reference"}
