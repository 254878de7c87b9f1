"""Endpoint replicas: requests spread over them, and a replica that stops is left out while the run
goes on with the others (each server in a process of its own, as a real one would be)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from sopbench.agents.openai import pick_replica, replica_health

CHAT_SERVER = Path(__file__).resolve().parent / "chat_server.py"


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, str(CHAT_SERVER), "--latency", str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def stored(folder: Path) -> list[tuple[str, str]]:
    store = folder / "results.sqlite"
    if not store.exists():
        return []
    try:
        with sqlite3.connect(store, timeout=5) as db:
            return list(db.execute("SELECT task_id, status FROM episodes"))
    except sqlite3.OperationalError:
        return []


def test_least_outstanding_replica_is_chosen_and_a_failed_one_is_skipped():
    a, b = "http://127.0.0.1:1/a", "http://127.0.0.1:1/b"
    replica_health(a).outstanding = 2
    replica_health(b).outstanding = 1
    assert pick_replica([a, b], now=0.0) == b
    replica_health(b).out_until = 10.0
    assert pick_replica([a, b], now=5.0) == a  # b is out for its back-off period
    assert pick_replica([a, b], now=11.0) == b  # and back afterwards


def test_one_replica_stopped_mid_run_the_run_completes_on_the_other(tmp_path: Path):
    first, first_url = start_server(0.05)
    second, second_url = start_server(0.05)
    out = tmp_path / "run"
    try:
        run = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from sopbench.cli import main; main()",
                "run",
                "--agent",
                "openai",
                "--model",
                "m",
                "--base-url",
                first_url,
                "--base-url",
                second_url,
                "--domain",
                "bank",
                "--limit",
                "12",
                "--concurrency",
                "2",
                "--max-retries",
                "1",
                "--no-baselines",
                "--output",
                str(out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "OPENAI_API_KEY": "k"},
        )
        deadline = time.monotonic() + 60
        while len(stored(out)) < 2 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.05)
        assert run.poll() is None, "the run ended before the replica could be stopped"
        os.kill(first.pid, signal.SIGKILL)  # the replica goes away mid-run, connections and all
        _, errors = run.communicate(timeout=120)
    finally:
        for process in (first, second):
            process.kill()
            process.wait()
    assert run.returncode == 0, errors
    rows = stored(out)
    assert len(rows) == 12
    assert [task for task, status in rows if status != "completed"] == []
