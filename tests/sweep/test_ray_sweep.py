"""A sweep on a real local Ray cluster (a head and a worker node, each its own processes): a worker
node SIGKILLed mid-sweep loses nothing, and the stores equal a local sweep's (export --no-timings)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'sopbench[ray]')")

sys.path.insert(0, str(Path(__file__).parent))
from sweep_stores import SOPBENCH, export_hash, rows  # noqa: E402

SWEEP = """
domains = ["bank", "dmv"]
runs = 2
concurrency = 4
[limits]
limit = 12
[[agents]]
name = "reference"
agent = "reference"
[[agents]]
name = "no-verify"
agent = "no-verify"
[matrix]
agents = ["reference", "no-verify"]
"""


def descendants(root: int) -> list[int]:
    """Processes under ``root`` (read from /proc: Ray's workers are children of its raylet)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        children = [child for child, parent in parents.items() if parent == pid]
        found += children
        frontier += children
    return found


def playing_workers(root: int) -> list[int]:
    """The Ray worker processes under ``root`` playing an episode now (Ray names them after the task)."""
    busy = []
    for pid in descendants(root):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::EpisodeWorker"):
                busy.append(pid)
        except OSError:
            continue
    return busy


@pytest.mark.skipif(sys.platform != "linux", reason="finds Ray's worker processes in /proc")
def test_worker_killed_mid_sweep_loses_nothing_and_matches_local(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(SWEEP, encoding="utf-8")
    local = subprocess.run(
        [*SOPBENCH, "sweep", str(sweep), "--output", str(tmp_path / "local")], capture_output=True, text=True
    )
    assert local.returncode == 0, local.stderr

    ray_dir = tempfile.mkdtemp(prefix="r")  # short: Ray's socket paths must fit in 107 characters
    env = {**os.environ, "RAY_TMPDIR": ray_dir, "RAY_USAGE_STATS_ENABLED": "0"}
    out = tmp_path / "ray"
    killed: list[int] = []
    try:
        # No --address: the sweep starts its own Ray instance on 127.0.0.1 (its workers: processes).
        run = subprocess.Popen(
            [*SOPBENCH, "sweep", str(sweep), "--output", str(out), "--executor", "ray"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while not killed and time.monotonic() < deadline and run.poll() is None:
            if len(rows(out / "reference-full")) >= 3:
                for pid in playing_workers(run.pid)[:1]:
                    os.kill(pid, signal.SIGKILL)  # a worker dies in the middle of an episode
                    killed.append(pid)
            time.sleep(0.005)
        stored_at_kill = len(rows(out / "reference-full"))
        _, errors = run.communicate(timeout=150)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
        shutil.rmtree(ray_dir, ignore_errors=True)
    print(f"worker killed: {bool(killed)}; episodes stored at the kill: {stored_at_kill}")
    assert killed, "the sweep ended before a worker could be killed"
    assert run.returncode == 0, errors
    for name in ("reference-full", "no-verify-full"):
        stored = rows(out / name)
        assert len(stored) == 48 and len({(t, r) for t, r, _ in stored}) == 48  # complete, no duplicates
        assert all(status == "completed" for _, _, status in stored)
        assert export_hash(out / name) == export_hash(tmp_path / "local" / name)
