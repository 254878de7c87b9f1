"""A Ray cluster of several nodes on this machine, each started by ``ray start`` in a session of its
own (so that a node, its raylet and its workers, can be found and SIGKILLed together: Ray gives each
worker a process group of its own, but the session stays the node's), for the tests and
benchmarks/sweep_scaling.py.

    with LocalCluster(worker_nodes=2, head_cpus=0) as cluster:
        ... sopbench sweep FILE --executor ray --address cluster.address ...
        cluster.kill_node(0)
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import sopbench

RAY = Path(sys.executable).with_name("ray")
SOURCE = str(Path(sopbench.__file__).resolve().parents[1])  # the workers import this sopbench


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LocalCluster:
    """A head node and ``worker_nodes`` worker nodes (``worker_cpus`` CPUs each)."""

    def __init__(self, worker_nodes: int, *, head_cpus: int = 1, worker_cpus: int = 1) -> None:
        self.worker_nodes, self.head_cpus, self.worker_cpus = worker_nodes, head_cpus, worker_cpus
        self.temp = tempfile.mkdtemp(prefix="r")  # short: Ray's socket paths must fit in 107 characters
        self.port = free_port()
        self.sessions: list[int] = []  # the session of each node: the head first
        self.env = {
            **os.environ,
            "RAY_TMPDIR": self.temp,
            "RAY_USAGE_STATS_ENABLED": "0",
            "PYTHONPATH": os.pathsep.join(p for p in (SOURCE, os.environ.get("PYTHONPATH")) if p),
            # Token authentication with a token of this cluster's own: Ray 2.x turns it on by itself
            # once a token file exists in the home folder, and nodes or a driver that disagree on it
            # cannot connect (InvalidAuthToken).
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": secrets.token_hex(32),
            # A dead node is noticed within seconds (the defaults take tens of seconds).
            "RAY_health_check_initial_delay_ms": "1000",
            "RAY_health_check_period_ms": "500",
            "RAY_health_check_timeout_ms": "1000",
            "RAY_health_check_failure_threshold": "3",
        }

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _start(self, *options: str) -> None:
        node = subprocess.Popen(
            [str(RAY), "start", "--node-ip-address", "127.0.0.1", "--disable-usage-stats", *options],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.sessions.append(node.pid)  # its daemons stay in its session after it returns
        output, _ = node.communicate(timeout=120)
        if node.returncode != 0:
            raise RuntimeError(f"ray start {' '.join(options)} failed:\n{output[-2000:]}")

    def start(self) -> LocalCluster:
        self._start(
            "--head",
            "--port",
            str(self.port),
            "--num-cpus",
            str(self.head_cpus),
            "--include-dashboard",
            "false",
        )
        for _ in range(self.worker_nodes):
            self._start("--address", self.address, "--num-cpus", str(self.worker_cpus))
        return self

    def node_processes(self, node: int) -> list[int]:
        """The processes of worker node ``node`` (its raylet, its workers, ...)."""
        return _session(self.sessions[1 + node])

    def kill_node(self, node: int) -> None:
        _kill_session(self.sessions[1 + node])

    def stop(self) -> None:
        for session in self.sessions:
            _kill_session(session)
        shutil.rmtree(self.temp, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _session(session: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getsid(int(entry.name)) == session:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _kill_session(session: int) -> None:
    for _ in range(3):  # a raylet may start a worker while its siblings die
        for pid in _session(session):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
