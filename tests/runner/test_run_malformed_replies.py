"""Whatever a JSON-decoding server sends, ``run --agent openai`` finishes: a malformed reply is the
model's mistake (a counted problem, raw text kept), never the run's crash. The server runs in a
process of its own (tests/agents/chat_server.py ``--bodies``), as a real one would."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sopbench.runner import RunSpec, run

CHAT_SERVER = Path(__file__).resolve().parents[1] / "agents" / "chat_server.py"


def completion(message: object, usage: object = None, finish: object = "stop") -> dict:
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage if usage is not None else {"prompt_tokens": 3, "completion_tokens": 2},
    }


def calling(**fields: object) -> dict:
    call = {"id": "call_1", "type": "function", "function": {"name": "login_user", "arguments": "{}"}}
    for key, value in fields.items():
        if key in ("name", "arguments"):
            if value is ...:
                del call["function"][key]
            else:
                call["function"][key] = value
        elif value is ...:
            del call[key]
        else:
            call[key] = value
    return completion({"role": "assistant", "content": None, "tool_calls": [call]})


SHAPES = {
    "arguments a number": calling(arguments=42),
    "arguments a list": calling(arguments=[1, 2]),
    "arguments null": calling(arguments=None),
    "arguments an object": calling(arguments={"username": "john", "identification": "x"}),
    "arguments missing": calling(arguments=...),
    "integer call id": calling(id=7),
    "call id missing": calling(id=...),
    "function missing": calling(function=...),
    "function name a number": calling(name=5),
    "function name null": calling(name=None),
    "tool_calls an object": completion({"role": "assistant", "tool_calls": {"id": 1}}),
    "a tool call that is a string": completion({"role": "assistant", "tool_calls": ["login_user"]}),
    "content parts": completion({"role": "assistant", "content": [{"type": "text", "text": "Hello"}]}),
    "content a number": completion({"role": "assistant", "content": 5}),
    "content an object": completion({"role": "assistant", "content": {"text": "hi"}}),
    "message null": completion(None),
    "message a string": completion("hello"),
    "usage strings": completion({"role": "assistant", "content": "hi"}, usage={"prompt_tokens": "x"}),
    "finish_reason a number": completion({"role": "assistant", "content": "hi"}, finish=3),
}


# Read as well as possible without a problem: usage and finish_reason are bookkeeping, and servers
# that omit call ids (the agent gives the call one) are common.
TOLERATED = ("usage strings", "finish_reason a number", "call id missing")


@contextmanager
def chat_server_process(bodies: list, tmp_path: Path) -> Iterator[str]:
    file = tmp_path / "bodies.json"
    file.write_text(json.dumps(bodies))
    process = subprocess.Popen(
        [sys.executable, str(CHAT_SERVER), "--latency", "0", "--bodies", str(file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=10)


def rows(folder: Path) -> list[dict]:
    db = sqlite3.connect(folder / "results.sqlite")
    db.row_factory = sqlite3.Row
    return [dict(r) for r in db.execute("SELECT * FROM episodes ORDER BY task_id")]


def config(url: str, tasks: Path, output: Path, **agent: object) -> RunSpec:
    return RunSpec(
        agent="openai",
        agent_options={
            "base_url": url,
            "model": "m",
            "max_retries": 1,
            "retry_initial_backoff": 0.001,
            **agent,
        },
        tasks=tasks / "bank_tasks.json",
        limit=1,
        max_turns=6,
        output=output,
        baselines=False,
    )


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_malformed_shape_is_a_counted_problem_with_its_raw_text_and_the_run_finishes(
    shape, small_tasks, tmp_path
):
    with chat_server_process([SHAPES[shape]], tmp_path) as url:
        report = run(config(url, small_tasks, tmp_path / "run"))
        again = run(config(url, small_tasks, tmp_path / "run"))  # resume: nothing left to do
    assert report.complete and report.completed == 1 and again.ran == 0
    (row,) = rows(tmp_path / "run")
    assert row["status"] == "completed" and row["passed"] is not None
    problems = json.loads(row["problems"])
    raw = json.loads(row["raw_replies"])
    if shape in TOLERATED:  # bookkeeping only, or a server's quirk: nothing the model did wrong
        return
    assert problems, shape
    assert raw and all(isinstance(r["raw"], str) for r in raw)
    sent = SHAPES[shape]["choices"][0]["message"]
    assert json.loads(raw[0]["raw"]) == sent  # the message as the server sent it


def test_arguments_sent_as_an_object_are_not_counted_as_well_formed(small_tasks, tmp_path):
    with chat_server_process([SHAPES["arguments an object"]], tmp_path) as url:
        run(config(url, small_tasks, tmp_path / "run"))
    (row,) = rows(tmp_path / "run")
    calls = json.loads(row["tool_calls"])
    assert calls and all("not as a JSON string" in call["problem"] for call in calls)
    assert row["malformed_calls"] == len(calls)


def test_a_reply_that_is_not_json_is_retried(small_tasks, tmp_path):
    good = completion({"role": "assistant", "content": "I cannot help with that."})
    with chat_server_process(["<html>busy</html>", good], tmp_path) as url:
        report = run(config(url, small_tasks, tmp_path / "run").model_copy(update={"max_turns": 2}))
    assert report.complete
    (row,) = rows(tmp_path / "run")
    assert json.loads(row["usage"])["requests"] >= 2


def test_two_hundred_calls_in_one_reply_execute_at_most_max_actions(small_tasks, tmp_path):
    calls = [
        {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "internal_check_username_exist", "arguments": "{}"},
        }
        for i in range(200)
    ]
    many = completion({"role": "assistant", "content": None, "tool_calls": calls})
    with chat_server_process([many], tmp_path) as url:
        run(config(url, small_tasks, tmp_path / "run").model_copy(update={"max_turns": 20}))
    (row,) = rows(tmp_path / "run")
    assert len(json.loads(row["tool_calls"])) == 10 and row["end_reason"] == "max_actions"
    assert any("200 tool calls" in p for p in json.loads(row["problems"]))
