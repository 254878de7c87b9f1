"""A sweep joining an existing two-node Ray cluster (``--address``), each node started by ``ray start``
on this machine: SIGKILLing the worker node mid-sweep (its raylet and its workers) loses nothing,
stores nothing twice, and the stores equal a local sweep's (``export --no-timings``). The model is
the loopback chat server (200 ms per reply), so that the sweep is still running when the node dies."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'sopbench[ray]')")

sys.path.insert(0, str(Path(__file__).parent))
from ray_cluster import LocalCluster  # noqa: E402
from sweep_stores import SOPBENCH, export_hash, rows  # noqa: E402

CHAT_SERVER = Path(__file__).resolve().parents[1] / "agents" / "chat_server.py"
CONFIGURATIONS = ("loopback-fc-full", "loopback-react-full")
EPISODES = 8 * 2  # tasks x runs, in each configuration


def sweep_file(url: str) -> str:
    return f"""
domains = ["bank"]
runs = 2
concurrency = 6
[limits]
limit = 8
[[agents]]
name = "loopback"
agent = "openai"
model = "loopback"
endpoint = "{url}"
[matrix]
agents = ["loopback"]
tool_modes = ["fc", "react"]
"""


def playing(pids: list[int]) -> list[int]:
    """Those of ``pids`` that are sopbench's episode workers (Ray names a worker after its actor)."""
    found = []
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::EpisodeWorker"):
                found.append(pid)
        except OSError:
            continue
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="finds the node's processes in /proc")
def test_worker_node_killed_mid_sweep_on_a_joined_cluster(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, str(CHAT_SERVER), "--latency", "0.2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    env = {**os.environ, "OPENAI_API_KEY": "loopback"}
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(sweep_file(url), encoding="utf-8")
    out = tmp_path / "ray"
    try:
        local = subprocess.run(
            [*SOPBENCH, "sweep", str(sweep), "--output", str(tmp_path / "local")],
            capture_output=True,
            text=True,
            env=env,
        )
        assert local.returncode == 0, local.stderr
        with LocalCluster(worker_nodes=1, head_cpus=1, worker_cpus=1) as cluster:
            run = subprocess.Popen(
                [
                    *SOPBENCH,
                    "sweep",
                    str(sweep),
                    "--output",
                    str(out),
                    "--executor",
                    "ray",
                    "--address",
                    cluster.address,
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                env={**cluster.env, **env},
            )
            killed: list[int] = []
            deadline = time.monotonic() + 120
            while not killed and time.monotonic() < deadline and run.poll() is None:
                stored = sum(len(rows(out / name)) for name in CONFIGURATIONS)
                if stored >= 4:
                    killed = playing(cluster.node_processes(0))  # the worker node's episode worker
                    if killed:
                        cluster.kill_node(0)  # the whole node: raylet, workers, monitors
                time.sleep(0.01)
            stored_at_kill = sum(len(rows(out / name)) for name in CONFIGURATIONS)
            try:
                _, errors = run.communicate(timeout=180)
            finally:
                if run.poll() is None:
                    run.kill()
    finally:
        server.kill()
        server.wait()
    print(f"worker node killed with episode workers {killed}; episodes stored at the kill: {stored_at_kill}")
    assert killed, "the sweep ended before the worker node's episode worker was seen"
    assert stored_at_kill < 2 * EPISODES
    assert run.returncode == 0, errors
    for name in CONFIGURATIONS:
        stored = rows(out / name)
        assert len(stored) == EPISODES and len({(t, r) for t, r, _ in stored}) == EPISODES  # no duplicates
        assert all(status == "completed" for _, _, status in stored)
        assert export_hash(out / name) == export_hash(tmp_path / "local" / name)
