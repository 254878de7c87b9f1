"""``run`` bounds what a user may ask for before anything is written (runs per task, the seed),
plans episodes as it plays them, and hears Ctrl-C at once even with 1,000 runs of every task.

Once ``run --runs 100000000`` grew to gigabytes while planning, wrote nothing and ignored Ctrl-C,
and a seed of 2**64 crashed after the run folder was written."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest


def sopbench(*args: object, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sopbench.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def stored_rows(folder: Path) -> int:
    db = sqlite3.connect(f"{(folder / 'results.sqlite').as_uri()}?mode=ro", uri=True)
    try:
        return db.execute("SELECT count(*) FROM episodes").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not there yet
        return 0
    finally:
        db.close()


@pytest.mark.parametrize(
    ("option", "value", "wording"),
    [
        ("--runs", "100000000", "error: --runs: Input should be less than or equal to 1000"),
        ("--runs", "1001", "error: --runs: Input should be less than or equal to 1000"),
        ("--seed", str(2**64), "error: --seed: Input should be less than or equal to 9223372036854775807"),
        ("--seed", "-1", "error: --seed: Input should be greater than or equal to 0"),
    ],
)
def test_runs_and_seed_out_of_bounds_are_refused_before_anything_is_written(
    option, value, wording, generated_bank_tasks, tmp_path
):
    before = generated_bank_tasks.read_bytes()
    result = sopbench(
        "run", "--agent", "refuse-all", "--tasks", generated_bank_tasks, "-o", tmp_path / "run", option, value
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [wording]
    assert not (tmp_path / "run").exists()
    assert generated_bank_tasks.read_bytes() == before


def test_the_largest_seed_runs_and_resumes(generated_bank_tasks, tmp_path):
    args = (
        "run",
        "--agent",
        "refuse-all",
        "--tasks",
        generated_bank_tasks,
        "--limit",
        "1",
        "--no-baselines",
        "--seed",
        2**63 - 1,
        "-o",
        tmp_path / "run",
    )
    assert sopbench(*args).returncode == 0
    again = sopbench(*args)
    assert again.returncode == 0 and "0 run now, 1 already stored" in again.stdout


def test_help_names_the_bound():
    assert "at most 1,000" in " ".join(sopbench("run", "--help").stdout.split())


def test_a_thousand_runs_of_every_task_start_at_once_and_stop_on_ctrl_c(generated_bank_tasks, tmp_path):
    folder = tmp_path / "run"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sopbench.cli",
            "run",
            "--agent",
            "refuse-all",
            "--tasks",
            str(generated_bank_tasks),
            "--runs",
            "1000",
            "--no-baselines",
            "-o",
            str(folder),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60  # 156,000 episodes planned: the first is stored in seconds
        while time.monotonic() < deadline and not (
            (folder / "results.sqlite").exists() and stored_rows(folder)
        ):
            time.sleep(0.05)
        assert stored_rows(folder) > 0
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    last = stderr.splitlines()[-1]
    assert last.startswith("interrupted: ") and "episodes finished and stored" in last
    stored = stored_rows(folder)
    assert 0 < stored < 156_000
    assert f"interrupted: {stored} of 156000 episodes finished and stored" in last
