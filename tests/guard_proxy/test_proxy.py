"""`sopbench guard proxy` end to end: an MCP client (the SDK's, or raw JSON-RPC lines) talks through
the proxy to a small MCP server written with the SDK (upstream_server.py beside this file).

Allowed calls reach the server and come back with its result; refused ones never reach it and are
answered with the guard's explanation as a tool error; tools/list passes through; each call is one
JSON line of the decision log. Bad input: an upstream command that does not start, a server that
dies mid-session, a client sending 10,000 calls (every one answered and logged) and lines that are
not JSON-RPC (counted problems).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "mcp.types", reason="the optional extra mcp is not installed (pip install 'sopbench[mcp]')"
)

import anyio  # noqa: E402 - the SDK's own dependency, there only with the extra
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

HERE = Path(__file__).parent
SERVER = [sys.executable, str(HERE / "upstream_server.py")]
SOP = {
    "rules": [
        {
            "action": "refund",
            "params": ["user", "order", "amount"],
            "constraints": [
                "and",
                [
                    ["single", "verify_identity", {"user": "user"}],
                    ["single", "lookup_order", {"user": "user", "order": "order"}],
                ],
            ],
        },
        {"action": "lookup_order", "params": ["user", "order"], "constraints": None, "read_only": True},
    ]
}
REFUND = {"user": "alice", "order": "A1", "amount": 30}


@pytest.fixture
def sop_file(tmp_path: Path) -> Path:
    path = tmp_path / "sop.json"
    path.write_text(json.dumps(SOP))
    return path


def proxy_command(sop: Path, log: Path, upstream: list[str] = SERVER) -> list[str]:
    return [
        sys.executable,
        "-m",
        "sopbench.cli",
        "guard",
        "proxy",
        "--sop",
        str(sop),
        "--log",
        str(log),
        "--",
        *upstream,
    ]


def environment(calls: Path) -> dict[str, str]:
    return {**os.environ, "UPSTREAM_CALLS": str(calls)}


def log_lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content)


def test_allowed_calls_reach_the_server_refused_ones_get_the_explanation(
    sop_file: Path, tmp_path: Path
) -> None:
    log, calls = tmp_path / "decisions.jsonl", tmp_path / "calls.txt"
    command = proxy_command(sop_file, log)

    async def session(command: list[str]) -> dict[str, Any]:
        params = StdioServerParameters(command=command[0], args=command[1:], env=environment(calls))
        seen: dict[str, Any] = {}
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            seen["tools"] = sorted(tool.name for tool in (await client.list_tools()).tools)
            if command[0] != sys.executable or "sopbench.cli" not in command:
                return seen  # the server itself: only its tools
            seen["refused"] = await client.call_tool("refund", REFUND)
            seen["verify"] = await client.call_tool("verify_identity", {"user": "alice"})
            seen["lookup"] = await client.call_tool("lookup_order", {"user": "alice", "order": "A1"})
            seen["refund"] = await client.call_tool("refund", REFUND)
            seen["bob"] = await client.call_tool("refund", {**REFUND, "user": "bob"})
        return seen

    direct = anyio.run(session, SERVER)
    calls.unlink(missing_ok=True)
    seen = anyio.run(session, command)

    assert seen["tools"] == direct["tools"] == ["die", "echo", "lookup_order", "refund", "verify_identity"]
    refused = seen["refused"]
    assert refused.is_error
    assert text_of(refused).startswith("refund(user=alice, order=A1, amount=30) was not executed")
    assert 'Unverified: "verify_identity(user=alice)"' in text_of(refused)
    assert not seen["verify"].is_error and text_of(seen["verify"]) == "true"
    assert seen["refund"].structured_content == {"result": "refunded 30 to alice for A1"}
    assert seen["bob"].is_error and "verify_identity(user=bob)" in text_of(seen["bob"])
    # The server ran only what the guard allowed.
    assert calls.read_text().split() == ["verify_identity", "lookup_order", "refund"]

    lines = log_lines(log)
    assert lines[0]["event"] == "start" and lines[-1]["event"] == "end"
    decided = [(line["tool"], line["decision"], line["outcome"]) for line in lines[1:-1]]
    assert decided == [
        ("refund", "refused", None),
        ("verify_identity", "allowed", "ok"),
        ("lookup_order", "allowed", "ok"),
        ("refund", "allowed", "ok"),
        ("refund", "refused", None),
    ]
    assert lines[1]["arguments"] == REFUND
    assert lines[1]["unmet"][0] == {
        "constraint": "verify_identity(user=alice)",
        "helpers": ["verify_identity(user=alice)"],
    }
    assert lines[1]["explanation"] == text_of(refused)
    assert lines[-1] | {"time": None} == {
        "event": "end",
        "time": None,
        "calls": 5,
        "allowed": 3,
        "refused": 2,
        "invalid": 0,
        "not_run": 0,
        "problems": 0,
        "upstream_exited": None,
    }


def rpc(request_id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


INITIALIZE = (
    rpc(
        0,
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
    )
    + b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'
)


def call(request_id: int, tool: str, arguments: dict[str, Any]) -> bytes:
    return rpc(request_id, "tools/call", {"name": tool, "arguments": arguments})


def test_ten_thousand_calls_at_once_are_each_answered_and_logged(sop_file: Path, tmp_path: Path) -> None:
    log, calls = tmp_path / "decisions.jsonl", tmp_path / "calls.txt"
    sent = [INITIALIZE]
    for i in range(1, 10_001):  # one in ten runs (an echo), the rest are refused refunds
        sent.append(
            call(i, "echo", {"text": str(i)}) if i % 10 == 0 else call(i, "refund", {**REFUND, "amount": i})
        )
    sent.append(b"this is not JSON-RPC\n")
    sent.append(rpc(10_001, "tools/call", {"arguments": {}}))  # no tool name
    done = subprocess.run(
        proxy_command(sop_file, log),
        input=b"".join(sent),
        capture_output=True,
        env=environment(calls),
        timeout=600,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    by_id: dict[Any, list[dict[str, Any]]] = {}
    for answer in answers:
        by_id.setdefault(answer.get("id"), []).append(answer)
    for i in range(1, 10_001):
        (answer,) = by_id[i]
        if i % 10 == 0:
            assert answer["result"]["structuredContent"] == {"result": str(i)}, answer
        else:
            assert answer["result"]["isError"] is True
            assert "was not executed" in answer["result"]["content"][0]["text"]
    assert by_id[10_001][0]["error"]["code"] == -32602  # invalid params: no tool name
    assert by_id[None][0]["error"]["code"] == -32700  # the line that is not JSON-RPC
    lines = log_lines(log)
    decisions = [line for line in lines if "seq" in line]
    assert [line["seq"] for line in decisions] == list(range(1, 10_002))
    assert sum(line["decision"] == "allowed" for line in decisions) == 1_000
    assert sum(line["decision"] == "refused" for line in decisions) == 9_000
    assert decisions[-1]["decision"] == "invalid"
    assert lines[-1]["calls"] == 10_001 and lines[-1]["problems"] == 1
    # One problem is told in one line, and counted: exit 1.
    assert done.returncode == 1, done.stderr
    assert b"problem: the client sent a line that is not a JSON-RPC message" in done.stderr
    assert not calls.exists() or "refund" not in calls.read_text()


def test_an_upstream_command_that_does_not_start_is_one_line(sop_file: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        proxy_command(sop_file, tmp_path / "log.jsonl", ["no-such-mcp-server-command"]),
        input=INITIALIZE,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.decode().strip().splitlines() == [
        "error: the upstream command no-such-mcp-server-command could not be started "
        "(No such file or directory: no-such-mcp-server-command)"
    ]
    assert done.stdout == b""


def test_an_upstream_that_dies_mid_session_answers_what_waits_and_ends(
    sop_file: Path, tmp_path: Path
) -> None:
    log, calls = tmp_path / "decisions.jsonl", tmp_path / "calls.txt"
    sent = (
        INITIALIZE + call(1, "echo", {"text": "hi"}) + call(2, "die", {}) + call(3, "echo", {"text": "late"})
    )
    done = subprocess.run(
        proxy_command(sop_file, log), input=sent, capture_output=True, env=environment(calls), timeout=120
    )
    answers = {answer["id"]: answer for answer in map(json.loads, done.stdout.splitlines())}
    assert answers[1]["result"]["structuredContent"] == {"result": "hi"}
    assert answers[2]["error"]["code"] == -32000 and "exited" in answers[2]["error"]["message"]
    assert answers[3]["error"]["code"] == -32000
    assert done.returncode == 1
    assert (
        done.stderr.decode()
        .strip()
        .splitlines()[-1]
        .startswith("error: the upstream server exited mid-session")
    )
    decided = [(line["tool"], line["decision"], line["outcome"]) for line in log_lines(log) if "seq" in line]
    assert decided == [
        ("echo", "allowed", "ok"),
        ("die", "allowed", "upstream exited"),
        ("echo", "not run", "upstream exited"),
    ]
