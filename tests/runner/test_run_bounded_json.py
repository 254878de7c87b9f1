"""JSON a model sends is bounded in depth and size: anything past the bound is a counted malformed
call or reply, the episode goes on, its row is stored, and resuming has nothing left to do.

Once a tool call whose arguments nested 260 levels (615 bytes) aborted ``run`` in ``Store.put``
(orjson writes at most 254 levels), on every resume; 900 to 5,000 levels became an ``infra_error``
retried for ever. The CLI runs in a process of its own, as a user types it; the server is on
127.0.0.1.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from chat_server import Reply, serve  # noqa: E402

MAX_VALUE_DEPTH = 64  # the documented bounds on one value a model supplies
MAX_VALUE_BYTES = 4 << 20


def nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def completion_bytes(message_json: str) -> bytes:
    return (
        '{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,'
        f'"message":{message_json},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":1,"completion_tokens":1}}}}'
    ).encode()


def scripted(first: Reply):
    """Every episode: ``first``, then ``exit_conversation``."""

    def respond(request: dict[str, Any]) -> Reply:
        turns = sum(1 for m in request.get("messages", ()) if m.get("role") == "assistant")
        return first if turns == 0 else Reply(tool_calls=(("exit_conversation", "{}"),))

    return respond


def sopbench(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sopbench.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def stored(folder: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(folder / "results.sqlite")
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute("SELECT * FROM episodes ORDER BY task_id")]
    finally:
        db.close()


CASES = {
    "arguments 260 deep": (
        Reply(tool_calls=(("login_user", nested(260)),)),
        f"deeper than {MAX_VALUE_DEPTH} levels",
    ),
    "arguments 900 deep": (
        Reply(tool_calls=(("login_user", nested(900)),)),
        f"deeper than {MAX_VALUE_DEPTH} levels",
    ),
    "arguments 5,000 deep": (
        Reply(tool_calls=(("login_user", nested(5000)),)),
        f"deeper than {MAX_VALUE_DEPTH} levels",
    ),
    "arguments 100,000 deep with NaN": (
        Reply(tool_calls=(("login_user", '{"n": NaN, "a":' + nested(100_000) + "}"),)),
        f"deeper than {MAX_VALUE_DEPTH} levels",
    ),
    "arguments larger than the bound": (
        Reply(tool_calls=(("login_user", json.dumps({"username": "x" * MAX_VALUE_BYTES})),)),
        "larger than 4 MiB",
    ),
    "arguments sent as a 90-deep object": (
        Reply(
            body=completion_bytes(
                '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",'
                '"function":{"name":"login_user","arguments":' + nested(90) + "}}]}"
            )
        ),
        f"deeper than {MAX_VALUE_DEPTH} levels",
    ),
    "a reply 5,000 deep": (
        Reply(body=completion_bytes('{"role":"assistant","content":' + nested(5000) + "}")),
        "the reply is JSON nested deeper than 254 levels",
    ),
}


@pytest.fixture
def two_tasks(tmp_path, generated_bank_tasks) -> Path:
    """A task file of two generated bank tasks."""
    goal, tasks = next(iter(json.loads(generated_bank_tasks.read_text()).items()))
    path = tmp_path / "bank_tasks.json"
    path.write_text(json.dumps({goal: tasks[:2]}))
    return path


@pytest.mark.parametrize("case", list(CASES))
def test_json_past_the_bound_is_a_counted_problem_and_the_run_finishes_and_resumes(case, two_tasks, tmp_path):
    reply, wording = CASES[case]
    folder = tmp_path / "run"
    tasks_before = two_tasks.read_bytes()
    with serve(scripted(reply)) as server:
        args = (
            "run",
            "--agent",
            "openai",
            "--base-url",
            server.url,
            "--model",
            "m",
            "--max-retries",
            "0",
            "--tasks",
            two_tasks,
            "--no-baselines",
            "-o",
            folder,
        )
        first = sopbench(*args)
        assert first.returncode == 0, first.stderr
        rows = stored(folder)
        requests = len(server.requests)
        again = sopbench(*args)
        assert again.returncode == 0, again.stderr
        assert len(server.requests) == requests  # resume: nothing was sent again
    assert "0 run now, 2 already stored" in again.stdout
    assert [r["status"] for r in rows] == ["completed", "completed"]
    assert stored(folder) == rows  # every row, as it was
    assert two_tasks.read_bytes() == tasks_before
    for row in rows:
        problems = json.loads(row["problems"])
        assert any(wording in p for p in problems), problems
        assert all(len(p) < 1000 for p in problems)  # the raw text is kept in its column, not repeated
        if case.startswith("arguments"):
            assert row["malformed_calls"] >= 1
    export = sopbench("export", folder, "--format", "sopbench", "-o", tmp_path / "traj")
    assert export.returncode == 0, export.stderr
    evaluate = sopbench("evaluate", tmp_path / "traj", "-o", tmp_path / "verdicts.jsonl")
    assert evaluate.returncode == 0, evaluate.stderr
