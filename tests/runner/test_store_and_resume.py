"""The store: resume skips finished episodes, retries infra errors, survives SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sopbench.runner import RunSpec, StoreError, export_jsonl, read_run, run
from sopbench.runner.store import open_existing


def _config(output: Path, tasks: Path, agent: str = "reference", **extra) -> RunSpec:
    return RunSpec(agent=agent, tasks=tasks, output=output, baselines=False, **extra)


def test_resume_skips_finished_episodes(small_tasks, tmp_path):
    first = run(_config(tmp_path / "run", small_tasks, limit=3))
    assert (first.episodes, first.ran, first.completed) == (6, 6, 6)
    again = run(_config(tmp_path / "run", small_tasks, limit=3))
    assert (again.ran, again.skipped, again.completed) == (0, 6, 6)
    grown = run(_config(tmp_path / "run", small_tasks, limit=4, runs=2))  # a larger selection continues
    assert (grown.episodes, grown.ran, grown.skipped) == (16, 10, 6)


def test_infra_errors_are_not_scored_and_are_retried_on_resume(small_tasks, tmp_path):
    marker = tmp_path / "outage"
    marker.touch()
    config = _config(
        tmp_path / "run", small_tasks, agent="test-flaky", agent_options={"marker": str(marker)}, limit=2
    )
    broken = run(config)
    assert broken.infra_errors == 4 and broken.completed == 0 and broken.summary.overall.runs == 0
    assert not broken.complete
    marker.unlink()
    healed = run(config)
    assert healed.ran == 4 and healed.infra_errors == 0 and healed.completed == 4 and healed.complete
    store = open_existing(tmp_path / "run")
    attempts = [row.attempts for row in store.rows()]
    store.close()
    assert attempts == [2, 2, 2, 2]


def test_a_folder_holding_another_run_is_refused(small_tasks, tmp_path):
    run(_config(tmp_path / "run", small_tasks, limit=1))
    with pytest.raises(
        StoreError, match=r"holds another run \(agent: \"reference\" stored, \"refuse-all\" now\)"
    ):
        run(_config(tmp_path / "run", small_tasks, agent="refuse-all", limit=1))


KILLABLE_RUN = """
import sys
sys.path.insert(0, {tests!r})
import conftest  # registers test-slow-reference
from sopbench.cli import main
sys.argv = ["sopbench", "run", "--agent", "test-slow-reference", "--tasks", {tasks!r}, "--output", {output!r},
            "--concurrency", "3", "--no-baselines"]
main()
"""


def _start_and_wait(output: Path, tasks: Path) -> subprocess.Popen:
    """A CLI run in a subprocess, returned once at least 3 episodes are stored (and it still runs)."""
    script = KILLABLE_RUN.format(tests=str(Path(__file__).parent), tasks=str(tasks), output=str(output))
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    stored = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if (output / "results.sqlite").exists():
            try:
                with sqlite3.connect(output / "results.sqlite") as probe:
                    stored = probe.execute("SELECT count(*) FROM episodes").fetchone()[0]
            except sqlite3.OperationalError:
                stored = 0
            if stored >= 3:
                break
        time.sleep(0.005)
    assert process.poll() is None, f"the run ended before it could be stopped: {process.stderr.read()!r}"
    return process


def test_ctrl_c_exits_130_and_keeps_every_finished_episode(small_tasks, tmp_path):
    output = tmp_path / "interrupted"
    process = _start_and_wait(output, small_tasks)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert b"resume" in stderr and b"Traceback" not in stderr
    with sqlite3.connect(output / "results.sqlite") as check:
        kept = check.execute("SELECT count(*) FROM episodes WHERE status = 'completed'").fetchone()[0]
    assert 3 <= kept < 12
    resumed = run(_config(output, small_tasks, agent="test-slow-reference", concurrency=3))
    assert resumed.skipped == kept and resumed.completed == 12


def test_sigkill_mid_run_loses_nothing_and_resume_runs_every_task_once(small_tasks, tmp_path):
    output = tmp_path / "killed"
    process = _start_and_wait(output, small_tasks)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    with sqlite3.connect(output / "results.sqlite") as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        survivors = check.execute("SELECT count(*) FROM episodes").fetchone()[0]
    assert 3 <= survivors < 12
    resumed = run(_config(output, small_tasks, agent="test-slow-reference", concurrency=3))
    assert resumed.skipped == survivors and resumed.ran == 12 - survivors and resumed.completed == 12
    store = open_existing(output)
    rows = list(store.rows())
    store.close()
    assert sorted(r.task_id for r in rows) == sorted({r.task_id for r in rows}) and len(rows) == 12
    assert all(r.attempts == 1 for r in rows)
    # the interrupted-then-resumed run equals an uninterrupted one, byte for byte (timings aside)
    fresh = tmp_path / "fresh"
    run(_config(fresh, small_tasks, agent="test-slow-reference", concurrency=4))
    assert _export(output) == _export(fresh)


def _export(folder: Path) -> bytes:
    import io

    buffer = io.BytesIO()
    export_jsonl(read_run(folder, records=False), buffer, timings=False)
    return buffer.getvalue()
