"""Ctrl-C of a sweep says what is stored, per configuration, and the stores hold exactly that.
Once it printed ``interrupted: nothing was finished`` while 1,152 episodes were stored. Real
subprocesses and a real SIGINT."""

from __future__ import annotations

import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

SWEEP = """
tasks = "{tasks}"
domains = ["bank"]
runs = {runs}
concurrency = 2
[[agents]]
name = "reference"
agent = "reference"
[[agents]]
name = "refuse-all"
agent = "refuse-all"
[matrix]
agents = ["reference", "refuse-all"]
tool_lists = ["full"]
"""


def rows(store: Path) -> int:
    if not store.exists():
        return 0
    db = sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True)
    try:
        return db.execute("SELECT count(*) FROM episodes").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        db.close()


def stores(output: Path) -> dict[str, Path]:
    return {folder.name: folder / "results.sqlite" for folder in sorted(output.iterdir()) if folder.is_dir()}


def test_ctrl_c_of_a_sweep_counts_what_each_configuration_stored(generated_bank_tasks, tmp_path):
    file = tmp_path / "sweep.toml"
    file.write_text(SWEEP.format(tasks=generated_bank_tasks.parent.as_posix(), runs=1))
    output = tmp_path / "out"
    first = subprocess.run(
        [sys.executable, "-m", "sopbench.cli", "sweep", str(file), "-o", str(output)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert first.returncode == 0, first.stderr
    before = {name: rows(store) for name, store in stores(output).items()}
    assert set(before.values()) == {156}
    file.write_text(
        SWEEP.format(tasks=generated_bank_tasks.parent.as_posix(), runs=200)
    )  # resumed, then more
    # Extending runs changes no setting a run is bound to: the same folders resume.
    process = subprocess.Popen(
        [sys.executable, "-m", "sopbench.cli", "sweep", str(file), "-o", str(output)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and sum(rows(s) for s in stores(output).values()) < 2 * 156 + 20:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    last = stderr.splitlines()[-1]
    after = {name: rows(store) for name, store in stores(output).items()}
    total = sum(after.values())
    now = total - 2 * 156
    assert now > 0
    assert last.startswith(f"interrupted: {total:,} of {2 * 156 * 200:,} episodes stored ({now:,} now): "), (
        last
    )
    for name, count in after.items():
        assert re.search(rf"\b{re.escape(name)} {count:,} of {156 * 200:,} \(\+156 before\)", last), (
            name,
            last,
        )
    assert last.endswith("; run the same command to resume")
