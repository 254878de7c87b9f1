"""A server that echoes the API key, in every form, in every field of its 200 replies (and of its
errors) leaves no trace of it in any artefact: the store with its WAL, the JSON Lines export, the
trajectory files, the viewer's pages and API, a report with the episodes embedded, a sweep's folder,
nor anything printed. Each command runs as a user types it (a real process); the server runs on
127.0.0.1. The leak finder (key_forms.py) decodes every escape itself: it does not trust the
scrubber it checks."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from chat_server import ChatServer, Reply  # noqa: E402
from key_forms import KEY, forms_of, leaks  # noqa: E402

USER_KEY = "uk-simulated-user/Zq9+Yx8_Wv7-Ut6Sr5Qp4On3"
KEY_ENV, USER_KEY_ENV = "SOPBENCH_TEST_LEAK_KEY", "SOPBENCH_TEST_LEAK_USER_KEY"
KEYS = [KEY, USER_KEY]


def all_forms(key: str) -> str:
    return " | ".join(forms_of(key).values())


def completion(message: Any, finish: str, **extra: Any) -> dict[str, Any]:
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice], **extra}


def hostile(request: dict[str, Any]) -> Reply:
    """The agent's replies carry the agent's key and the user's replies the user's key (each server
    knows only the key it is sent), in every form, in every field; the agent's first request is
    answered with an error echoing the key once (then retried)."""
    tools = [t["function"]["name"] for t in request.get("tools") or ()]
    turns = sum(1 for m in request["messages"] if m.get("role") == "assistant")
    if tools == ["exit_conversation"]:  # the llm user
        forms = all_forms(USER_KEY)
        if turns >= 3:
            return Reply(
                content=f"bye {forms}",
                tool_calls=(("exit_conversation", json.dumps({"why": forms})),),
                call_ids=(forms,),
            )
        return Reply(content=f"My key is {forms}")
    forms = all_forms(KEY)
    by_form = {name: form for name, form in forms_of(KEY).items()}
    if turns == 0 and not hostile.errored.get(len(request["messages"])):
        hostile.errored[len(request["messages"])] = True
        return Reply(status=500, error={"message": f"overloaded, key {forms}"})
    if turns == 0:  # a call to an unknown tool named by the key, and a real tool given the key
        return Reply(
            content=f"Bearer {forms}",
            tool_calls=(
                (f"tool {forms}", json.dumps(by_form)),
                ("login_user", json.dumps({"username": forms})),
            ),
            call_ids=(f"id {forms}", f"id2 {forms}"),
        )
    if turns == 1:  # malformed: kept raw, with problems
        message = {
            "role": "assistant",
            "content": {"text": forms},
            "tool_calls": [{"id": 7, "function": {"name": forms, "arguments": by_form}}],
        }
        return Reply(
            body=completion(message, forms, usage={"prompt_tokens": forms}, system_fingerprint=forms)
        )
    return Reply(content=f"Anything else? {forms}")


hostile.errored = {}  # type: ignore[attr-defined]


PRINTED: list[str] = []  # everything the commands printed, checked at the end


def sopbench(*args: str, ok: tuple[int, ...] = (0,)) -> str:
    """The command's standard output (both streams are kept in ``PRINTED``)."""
    # a wide console: a line wrapped inside a key would hide it from the leak finder
    env = {**os.environ, KEY_ENV: KEY, USER_KEY_ENV: USER_KEY, "COLUMNS": "100000"}
    done = subprocess.run(
        [sys.executable, "-m", "sopbench.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode in ok, done.stdout[-2000:] + done.stderr[-2000:]
    PRINTED.extend((done.stdout, done.stderr))
    return done.stdout


def files(folder: Path) -> Iterator[Path]:
    return (path for path in sorted(folder.rglob("*")) if path.is_file())


def texts_of(path: Path) -> list[str]:
    """The file's bytes as text and, for a SQLite store, every cell read through SQLite (a long
    value spans overflow pages, where a grep of the bytes could miss it)."""
    found = [path.read_bytes().decode("utf-8", errors="replace")]
    if path.name.endswith(".sqlite"):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
                found += [repr(row) for row in db.execute(f'SELECT * FROM "{table}"')]
        finally:
            db.close()
    return found


def assert_no_leak(where: str, text: str) -> None:
    found = leaks(text, KEYS)
    assert not found, f"{where} betrays a key: {found[:3]}"


def assert_folder_clean(folder: Path) -> int:
    count = 0
    for path in files(folder):
        for text in texts_of(path):
            assert_no_leak(str(path.relative_to(folder.parent)), text)
        count += 1
    return count


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as reply:  # noqa: S310 - the viewer on 127.0.0.1
        return reply.read().decode()


def viewer_texts(sources: list[Path]) -> list[tuple[str, str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "sopbench.cli", "view", *map(str, sources), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert "http://" in line, line + process.stderr.read()
        base = line.split()[2].rstrip("/")
        pages = [("/", fetch(base + "/")), ("/api/episodes", fetch(base + "/api/episodes"))]
        count = len(json.loads(pages[1][1])["episodes"])
        assert count >= 2
        for number in range(count):
            pages += [
                (f"/episode/{number}", fetch(f"{base}/episode/{number}")),
                (f"/api/episode/{number}", fetch(f"{base}/api/episode/{number}")),
            ]
        return pages
    finally:
        process.terminate()
        process.wait(timeout=30)


def failing(request: dict[str, Any]) -> Reply:
    """Errors that echo the key: a server error (retried, then the episode's infra_error) or a
    refused key (the run stops)."""
    status = 401 if request["model"] == "refused" else 500
    return Reply(status=status, error={"message": f"no: {all_forms(KEY)}", "code": all_forms(KEY)})


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with ChatServer(hostile) as running:
        yield running


def run_args(url: str, output: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--agent",
        "openai",
        "--model",
        "m",
        "--base-url",
        url,
        "--api-key-env",
        KEY_ENV,
        "--domain",
        "bank",
        "--limit",
        "1",
        "--max-retries",
        "1",
        "--no-baselines",
        "-o",
        str(output),
        *extra,
    ]


def test_every_form_of_the_key_in_every_reply_field_reaches_no_artefact(server, tmp_path):
    run = tmp_path / "run"
    sopbench(
        *run_args(
            server.url,
            run,
            "--user",
            "llm",
            "--user-model",
            "u",
            "--user-base-url",
            server.url,
            "--user-api-key-env",
            USER_KEY_ENV,
        )
    )
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"  # the keys were sent, and echoed
    assert any(h["authorization"] == f"Bearer {USER_KEY}" for h in server.headers)
    stored = json.loads(sopbench("export", str(run), "-o", "-"))
    assert stored["status"] == "completed" and "***" in json.dumps(stored)  # the echoes are stored, masked
    assert any("malformed reply" in p for p in stored.get("problems", []) + [json.dumps(stored)])
    sopbench("export", str(run), "-o", str(tmp_path / "episodes.jsonl"))
    sopbench("export", str(run), "--format", "sopbench", "-o", str(tmp_path / "trajectories"))
    sopbench("report", str(run), "--embed-episodes", "-o", str(tmp_path / "report.html"), ok=(0, 1))
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        f'domains = ["bank"]\n[limits]\nlimit = 1\n[[agents]]\nname = "hostile"\nagent = "openai"\n'
        f'model = "m"\nendpoint = "{server.url}"\napi_key_env = "{KEY_ENV}"\n'
        f'options.max_retries = 1\n[matrix]\nagents = ["hostile"]\ntool_modes = ["fc"]\n'
    )
    sopbench("sweep", str(sweep), "-o", str(tmp_path / "swept"), ok=(0, 1))
    with ChatServer(failing) as errors:
        sopbench(*run_args(errors.url, tmp_path / "infra"), ok=(1,))
        sopbench(*run_args(errors.url, tmp_path / "refused", "--model", "refused"), ok=(1, 2))
    printed = "\n".join(PRINTED)
    assert "infra_error" in printed and "rejected the API key" in printed and "***" in printed
    pages = viewer_texts([run, tmp_path / "trajectories"])
    assert_no_leak("the output of the commands", printed)
    for where, text in pages:
        assert_no_leak(f"viewer {where}", text)
    checked = assert_folder_clean(tmp_path)
    assert checked >= 8  # store (+ WAL/lock), manifests, exports, trajectory files, report, sweep
