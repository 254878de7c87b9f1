"""A server that echoes the API key, in every form, in every field of its 200 replies (and of its
errors) leaves no trace of it in any artefact: the store with its WAL, the JSON Lines export, the
trajectory files, the viewer's pages and API, a report with the episodes embedded, a sweep's folder,
nor anything printed. Each command runs as a user types it (a real process); the server runs on
127.0.0.1. The leak finder (key_forms.py) decodes every escape itself: it does not trust the
scrubber it checks."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
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


class Hostile:
    """The agent's replies carry the agent's key and the user's replies the user's key (each server
    knows only the key it is sent), in every form, in every field; the agent's first request is
    answered with an error echoing the key once (then retried). The requests of a second task wait
    for ``release``, so that the test can copy the store while its WAL holds the first episode."""

    def __init__(self) -> None:
        self.errored = False
        self.tasks: list[str] = []
        self.second_task = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: dict[str, Any]) -> Reply:
        opening = next(m["content"] for m in request["messages"] if m["role"] != "system")
        if opening not in self.tasks:
            self.tasks.append(opening)
        if self.tasks.index(opening) == 1 and not self.release.is_set():
            self.second_task.set()
            self.release.wait(120)
        tools = [t["function"]["name"] for t in request.get("tools") or ()]
        turns = sum(1 for m in request["messages"] if m.get("role") == "assistant")
        if tools == ["exit_conversation"]:  # the llm user
            return self.user(turns, all_forms(USER_KEY))
        forms = all_forms(KEY)
        by_form = dict(forms_of(KEY))
        if turns == 0 and not self.errored:
            self.errored = True
            return Reply(status=500, error={"message": f"overloaded, key {forms}"})
        if turns == 0:  # a call to an unknown tool named by the key, and a real tool given the key
            calls = ((f"tool {forms}", json.dumps(by_form)), ("login_user", json.dumps({"username": forms})))
            return Reply(
                content=f"Bearer {forms}", tool_calls=calls, call_ids=(f"id {forms}", f"id2 {forms}")
            )
        if turns == 1:  # malformed: kept raw, with problems
            call = {"id": 7, "function": {"name": forms, "arguments": by_form}}
            message = {"role": "assistant", "content": {"text": forms}, "tool_calls": [call]}
            extra = {"usage": {"prompt_tokens": forms}, "system_fingerprint": forms}
            return Reply(body=completion(message, forms, **extra))
        return Reply(content=f"Anything else? {forms}")

    @staticmethod
    def user(turns: int, forms: str) -> Reply:
        if turns >= 3:
            ending = (("exit_conversation", json.dumps({"why": forms})),)
            return Reply(content=f"bye {forms}", tool_calls=ending, call_ids=(forms,))
        return Reply(content=f"My key is {forms}")


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
def hostile() -> Hostile:
    return Hostile()


@pytest.fixture(scope="module")
def server(hostile: Hostile) -> Iterator[ChatServer]:
    with ChatServer(hostile) as running:
        yield running


def run_args(url: str, output: Path, *extra: str, limit: int = 1) -> list[str]:
    agent = ["--agent", "openai", "--model", "m", "--base-url", url, "--api-key-env", KEY_ENV]
    return ["run", *agent, "--domain", "bank", "--limit", str(limit), "--max-retries", "1", "--no-baselines",
            "-o", str(output), *extra]  # fmt: skip


def stored_rows(store: Path) -> int:
    db = sqlite3.connect(store)
    try:
        return db.execute("SELECT count(*) FROM episodes").fetchone()[0]
    finally:
        db.close()


def run_with_a_wal_snapshot(
    server: ChatServer, hostile: Hostile, run: Path, snapshot: Path
) -> dict[str, str]:
    """Two tasks; once the first episode is stored, the folder's files (store, WAL, lock) are read
    as they are mid-run, before the second episode may go on. Returns their texts by name."""
    user = [
        "--user",
        "llm",
        "--user-model",
        "u",
        "--user-base-url",
        server.url,
        "--user-api-key-env",
        USER_KEY_ENV,
    ]
    args = run_args(server.url, run, *user, "--concurrency", "1", limit=2)
    env = {**os.environ, KEY_ENV: KEY, USER_KEY_ENV: USER_KEY, "COLUMNS": "100000"}
    process = subprocess.Popen([sys.executable, "-m", "sopbench.cli", *args], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    texts: dict[str, str] = {}
    try:
        assert hostile.second_task.wait(120), "the second task never started"
        for attempt in range(100):
            copy = snapshot / f"copy{attempt}"
            copy.mkdir(parents=True)
            for path in run.iterdir():
                (copy / path.name).write_bytes(path.read_bytes())
            wal = copy / "results.sqlite-wal"
            if wal.exists() and wal.stat().st_size:
                # read before SQLite opens the copy (it folds the WAL in when it closes it)
                texts = {p.name: p.read_bytes().decode("utf-8", errors="replace") for p in copy.iterdir()}
                if stored_rows(copy / "results.sqlite") == 1:
                    break
            time.sleep(0.1)
        else:
            raise AssertionError("the first episode never reached the WAL")
    finally:
        hostile.release.set()
        out, err = process.communicate(timeout=300)
        PRINTED.extend((out, err))
    assert process.returncode == 0, out[-2000:] + err[-2000:]
    shutil.rmtree(snapshot)
    return texts


def test_every_form_of_the_key_in_every_reply_field_reaches_no_artefact(server, hostile, tmp_path):
    run = tmp_path / "run"
    mid_run = run_with_a_wal_snapshot(server, hostile, run, tmp_path / "snapshot")
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"  # the keys were sent, and echoed
    assert any(h["authorization"] == f"Bearer {USER_KEY}" for h in server.headers)
    episodes = [json.loads(line) for line in sopbench("export", str(run), "-o", "-").splitlines()]
    assert [e["status"] for e in episodes] == ["completed", "completed"]
    assert all("***" in json.dumps(e) and "malformed reply" in json.dumps(e) for e in episodes)  # masked
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

    assert {"results.sqlite", "results.sqlite-wal"} <= set(mid_run)
    for name, text in mid_run.items():
        assert_no_leak(f"{name} mid-run", text)
    assert_no_leak("the output of the commands", printed)
    for where, text in pages:
        assert_no_leak(f"viewer {where}", text)
    checked = assert_folder_clean(tmp_path)
    assert checked >= 8  # store, manifests, exports, trajectory files, report, sweep folder
