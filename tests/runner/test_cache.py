"""Exact reruns at no cost (``--cache``): a run recorded against a model replays without any server,
byte for byte, and a replay that meets a request it never recorded says which field changed; a
damaged entry, a newer cache, a folder named as the cache and two runs sharing one file are each one
line, and nothing in a run folder is lost."""

from __future__ import annotations

import json
import socket
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sopbench.cli import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from chat_server import Reply, benchmark_model, say, serve  # noqa: E402

KEY_ENV = "SOPBENCH_TEST_CACHE_KEY"
KEY = "sk-cache-test-9f8e7d6c5b4a3210"


def model(request: dict[str, Any]) -> Reply:
    """The agent plays ``benchmark_model``; the ``llm`` user (it holds exit_conversation) answers
    twice, then ends the conversation."""
    tools = [t["function"]["name"] for t in request.get("tools") or ()]
    if tools == ["exit_conversation"]:
        turns = sum(1 for m in request["messages"] if m["role"] == "assistant")
        if turns >= 2:
            return Reply(tool_calls=(("exit_conversation", "{}"),), call_ids=("end",))
        return say(f"I still need it ({turns}).")
    return benchmark_model(request)


def invoke(*args: Any):
    return CliRunner().invoke(app, [str(a) for a in args])


def run_args(tasks: Path, output: Path, url: str, mode: str, *extra: Any) -> list[Any]:
    return [
        "run", "--agent", "openai", "--model", "m", "--tool-mode", mode, "--base-url", url,
        "--api-key-env", KEY_ENV, "--user", "llm", "--user-model", "u", "--user-base-url", url,
        "--user-api-key-env", KEY_ENV, "--tasks", tasks / "bank_tasks.json", "--limit", "2",
        "--no-baselines", "--output", output, "--json", *extra,
    ]  # fmt: skip


def export(folder: Path, *extra: Any) -> str:
    done = invoke("export", folder, "--no-timings", *extra)
    assert done.exit_code == 0, done.output
    return done.stdout


class Network:
    """``cut()``: every connection attempted from then on is refused and listed in ``attempts``."""

    def __init__(self, monkeypatch) -> None:
        self.monkeypatch = monkeypatch
        self.attempts: list[Any] = []

    def cut(self) -> None:
        def refuse(sock, address, *args):
            self.attempts.append(address)
            raise ConnectionRefusedError(f"the test forbids connecting to {address}")

        self.monkeypatch.setattr(socket.socket, "connect", refuse)
        self.monkeypatch.setattr(socket.socket, "connect_ex", refuse)


@pytest.fixture
def network(monkeypatch) -> Network:
    return Network(monkeypatch)


def record(small_tasks: Path, tmp_path: Path, monkeypatch, mode: str, *extra: Any) -> tuple[Path, Path, dict]:
    monkeypatch.setenv(KEY_ENV, KEY)
    cache, folder = tmp_path / "replies.sqlite", tmp_path / f"rec-{mode}"
    with serve(model) as server:
        done = invoke(*run_args(small_tasks, folder, server.url, mode, "--cache", cache, *extra))
        assert done.exit_code == 0, done.output
    return cache, folder, json.loads(done.stdout)


@pytest.mark.parametrize("mode", ["fc", "react"])
def test_a_recorded_run_replays_byte_for_byte_without_the_network(
    small_tasks, tmp_path, monkeypatch, network, mode
):
    cache, first, recorded = record(small_tasks, tmp_path, monkeypatch, mode)
    assert recorded["cache"]["hits"] == 0 and recorded["cache"]["recorded"] > 4
    network.cut()
    # the server is gone: its URL refuses; the replay must not even try
    done = invoke(*run_args(small_tasks, tmp_path / "replay", "http://127.0.0.1:9/v1", mode,
                            "--cache", cache, "--cache-mode", "replay"))  # fmt: skip
    assert done.exit_code == 0, done.output
    assert network.attempts == []
    summary = json.loads(done.stdout)
    assert summary["cache"]["hits"] == recorded["cache"]["recorded"] and summary["cache"]["misses"] == 0
    assert summary["cache"]["hit_tokens"]["prompt"] > 0 and summary["request_time_s"]["model"] == 0
    assert export(tmp_path / "replay") == export(first)
    lines = [json.loads(line) for line in invoke("export", tmp_path / "replay").stdout.splitlines()]
    assert all(line["cache_hits"] > 0 and "requests" not in line and "model_s" not in line for line in lines)
    if mode == "fc":  # the llm user's replies came from the cache too (react's agent ends it itself)
        assert all(line["user_cache_hits"] > 0 for line in lines)


def test_a_changed_ablation_misses_at_the_first_changed_request_and_names_the_field(
    small_tasks, tmp_path, monkeypatch, network
):
    cache, _, _ = record(small_tasks, tmp_path, monkeypatch, "fc")
    network.cut()
    done = invoke(*run_args(small_tasks, tmp_path / "shuffled", "http://127.0.0.1:9/v1", "fc",
                            "--cache", cache, "--cache-mode", "replay", "--shuffle-tools"))  # fmt: skip
    assert done.exit_code == 1, done.output
    assert network.attempts == []
    reasons = json.loads(done.stdout)["infra_reasons"]
    assert len(reasons) == 2 and "\n" not in reasons[0]
    assert "episode bank/" in reasons[0] and "agent request 0" in reasons[0]
    assert "tools (the same tools in another order)" in reasons[0]


def test_export_with_cache_ships_what_a_run_used_and_it_replays_elsewhere(
    small_tasks, tmp_path, monkeypatch, network
):
    cache, first, _ = record(small_tasks, tmp_path, monkeypatch, "fc")
    # a second run folder records into the same cache: the shipped file holds only the first's entries
    with serve(model) as server:
        assert (
            invoke(
                *run_args(small_tasks, tmp_path / "other", server.url, "react", "--cache", cache)
            ).exit_code
            == 0
        )
    shipped = tmp_path / "ship" / "replies.sqlite"
    done = invoke("export", first, "--with-cache", shipped, "--output", tmp_path / "first.jsonl")
    assert done.exit_code == 0, done.output
    db = sqlite3.connect(shipped)
    count = db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    assert 0 < count < sqlite3.connect(cache).execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    db.close()
    network.cut()
    done = invoke(*run_args(small_tasks, tmp_path / "elsewhere", "http://127.0.0.1:9/v1", "fc",
                            "--cache", shipped, "--cache-mode", "replay"))  # fmt: skip
    assert done.exit_code == 0, done.output
    assert network.attempts == [] and export(tmp_path / "elsewhere") == export(first)


def test_the_cache_holds_no_secret(small_tasks, tmp_path, monkeypatch):
    """Neither the key (echoed by the server in its replies), nor the Authorization header, nor the
    base URL reach it."""
    monkeypatch.setenv(KEY_ENV, KEY)
    cache = tmp_path / "replies.sqlite"

    def echo(request: dict[str, Any]) -> Reply:
        reply = model(request)
        return Reply(content=f"{reply.content or ''} Bearer {KEY}", tool_calls=reply.tool_calls,
                     call_ids=reply.call_ids)  # fmt: skip

    with serve(echo) as server:
        done = invoke(*run_args(small_tasks, tmp_path / "r", server.url, "fc", "--cache", cache))
        assert done.exit_code == 0, done.output
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("replies.sqlite"))
    cells = repr(list(sqlite3.connect(cache).execute("SELECT * FROM entries")))
    assert KEY.encode() not in stored and KEY not in cells
    assert "authorization" not in cells.lower() and "127.0.0.1" not in cells


def test_a_damaged_entry_is_recorded_again_and_in_replay_is_a_named_miss(
    small_tasks, tmp_path, monkeypatch, network
):
    cache, first, _ = record(small_tasks, tmp_path, monkeypatch, "fc")
    db = sqlite3.connect(cache)
    db.execute('UPDATE entries SET reply = \'{"kind": "reply", "content": "tampered"}\' WHERE rowid = 1')
    db.commit()
    db.close()
    done = invoke(*run_args(small_tasks, tmp_path / "replay", "http://127.0.0.1:9/v1", "fc",
                            "--cache", cache, "--cache-mode", "replay"))  # fmt: skip
    assert done.exit_code == 1
    summary = json.loads(done.stdout)
    assert any("damaged" in reason for reason in summary["infra_reasons"])
    assert summary["completed"] == 1 and summary["infra_errors"] == 1
    with serve(model) as server:  # read-write records it again, and says so in one line
        done = invoke(*run_args(small_tasks, tmp_path / "again", server.url, "fc", "--cache", cache))
    assert done.exit_code == 0, done.output
    assert "1 damaged entries were recorded again" in done.stderr
    assert export(tmp_path / "again") == export(first)


def test_refused_caches_are_one_line_and_touch_no_run_folder(small_tasks, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    folder = tmp_path / "run"
    newer = tmp_path / "newer.sqlite"
    db = sqlite3.connect(newer)
    db.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                     "CREATE TABLE entries (key TEXT); CREATE TABLE uses (key TEXT);"
                     "INSERT INTO meta VALUES ('format', '99');")  # fmt: skip
    db.close()
    (tmp_path / "folder").mkdir()
    (tmp_path / "text.sqlite").write_text("not a database")
    cases = {
        tmp_path / "folder": "is a folder",
        newer: "written by a newer sopbench (cache format 99",
        tmp_path / "text.sqlite": "not a sopbench cache",
    }
    for cache, said in cases.items():
        done = invoke(*run_args(small_tasks, folder, "http://127.0.0.1:9/v1", "fc", "--cache", cache))
        assert done.exit_code == 2, done.output
        assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
        assert not folder.exists()
    done = invoke(*run_args(small_tasks, folder, "http://127.0.0.1:9/v1", "fc", "--cache-mode", "replay"))
    assert done.exit_code == 2 and "--cache-mode replay needs --cache" in done.stderr


def test_two_runs_share_one_cache_and_a_locked_one_costs_no_episode(small_tasks, tmp_path, monkeypatch):
    cache, first, _ = record(small_tasks, tmp_path, monkeypatch, "fc")
    from sopbench.agents.openai import ReplyCache

    monkeypatch.setattr(ReplyCache, "busy_timeout_s", 0.2)
    holder = sqlite3.connect(cache, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another run writing the cache, for ever
    try:
        with serve(model) as server:
            done = invoke(*run_args(small_tasks, tmp_path / "second", server.url, "react", "--cache", cache))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert done.exit_code == 1  # the episodes are stored; the recording is incomplete
    summary = json.loads(done.stdout)
    assert summary["completed"] == 2 and summary["cache"]["problems"]
    assert all("\n" not in p and str(cache) in p for p in summary["cache"]["problems"])
    # the first run's entries are intact and both runs replay what they recorded
    done = invoke(*run_args(small_tasks, tmp_path / "replay", "http://127.0.0.1:9/v1", "fc",
                            "--cache", cache, "--cache-mode", "replay"))  # fmt: skip
    assert done.exit_code == 0 and export(tmp_path / "replay") == export(first)


def test_episodes_played_elsewhere_get_their_replies_and_send_the_recording_back(
    small_tasks, tmp_path, monkeypatch, network
):
    """As on Ray: the episode and its cache session travel by pickle to a worker that cannot reach
    the cache file, and what it recorded comes back to the driver, which alone writes it."""
    import pickle

    from sopbench.runner import RunSpec
    from sopbench.runner.episode import play_row
    from sopbench.runner.frontend import run_many

    async def remote(config, episode, attempts, cache):  # the task itself is read on the worker (Ray)
        config, cache = pickle.loads(pickle.dumps((config, cache)))
        assert cache is None or cache.fallback is None  # no file on the worker
        return pickle.loads(pickle.dumps(await play_row(config, episode, attempts, cache)))

    monkeypatch.setenv(KEY_ENV, KEY)
    cache = tmp_path / "replies.sqlite"

    def spec(url: str, folder: str, **more: Any) -> RunSpec:
        return RunSpec(
            agent="openai", agent_options={"model": "m", "base_url": url, "api_key_env": KEY_ENV},
            user="llm", user_options={"model": "u", "base_url": url, "api_key_env": KEY_ENV},
            tasks=small_tasks / "bank_tasks.json", limit=2, output=tmp_path / folder, baselines=False,
            cache=cache, **more,
        )  # fmt: skip

    with serve(model) as server:
        [recorded] = run_many([spec(server.url, "remote")], concurrency=2, player=remote)
    assert recorded.cache is not None and recorded.cache.recorded > 4
    network.cut()
    [replayed] = run_many(
        [spec("http://127.0.0.1:9/v1", "again", cache_mode="replay")], concurrency=2, player=remote
    )
    assert replayed.cache is not None and replayed.cache.hits == recorded.cache.recorded
    assert network.attempts == [] and export(tmp_path / "again") == export(tmp_path / "remote")


def test_a_sweep_file_names_one_cache_for_every_configuration(small_tasks, tmp_path, monkeypatch, network):
    monkeypatch.setenv(KEY_ENV, KEY)
    cache = tmp_path / "replies.sqlite"

    def sweep(url: str, mode: str) -> Path:
        file = tmp_path / f"{mode}.toml"
        file.write_text(
            f'tasks = "{small_tasks / "bank_tasks.json"}"\ndomains = ["bank"]\ncache = "{cache}"\n'
            f'cache_mode = "{mode}"\n[limits]\nlimit = 2\n[[agents]]\nname = "m"\nagent = "openai"\n'
            f'model = "m"\nendpoint = "{url}"\napi_key_env = "{KEY_ENV}"\n[matrix]\nagents = ["m"]\n'
            'tool_modes = ["fc", "react"]\n',
            encoding="utf-8",
        )
        return file

    with serve(model) as server:
        done = invoke("sweep", sweep(server.url, "read-write"), "--output", tmp_path / "rec")
    assert done.exit_code == 0, done.output
    network.cut()
    done = invoke("sweep", sweep("http://127.0.0.1:9/v1", "replay"), "--output", tmp_path / "rep")
    assert done.exit_code == 0, done.output
    assert network.attempts == []
    for name in ("m-fc-full", "m-react-full"):
        assert export(tmp_path / "rep" / name) == export(tmp_path / "rec" / name)


def test_a_cache_with_via_mcp_is_refused_in_one_line(
    small_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over MCP the simulated user plays in the server's process, which keeps no recording."""
    monkeypatch.setenv("SOPBENCH_TEST_CACHE_KEY", "sk-test-0123456789")
    folder = tmp_path / "run"
    args = run_args(small_tasks, folder, "http://127.0.0.1:9/v1", "fc", "--cache", tmp_path / "c.sqlite")
    done = invoke(*args, "--via", "mcp")
    assert done.exit_code == 2, done.output
    assert "--cache is not available with --via mcp" in done.stderr
    assert not folder.exists() and not (tmp_path / "c.sqlite").exists()
