"""Sweeps and replicas against loopback chat servers (tests/agents/chat_server.py, each in its own
process) that answer after ``--latency`` seconds (default 0.2), all in one run:

* one configuration against 1, 2 and 4 replicas of a server that makes ``--slots`` replies at once
  (the endpoint is the bottleneck): throughput should grow about linearly with the replicas, so the
  run is long enough (``--replica-limit`` tasks per domain) that the command's start-up is small
  beside it;
* a 6-configuration sweep (three tool modes x two tool lists), run with ``sopbench sweep`` locally
  and on a Ray cluster of a head and 2 worker nodes started on this machine beforehand (``ray
  start``, as a user's cluster is; the sweep joins it with ``--address``), each as a ratio to a
  sequential loop of ``sopbench run --concurrency 1`` over the same configurations (goal: >= 40x).

    python benchmarks/sweep_scaling.py [--latency 0.2] [--limit 100] [--replica-limit 100]

Prints a table on stderr and one JSON document on stdout; exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "agents" / "chat_server.py"
sys.path.insert(0, str(ROOT / "tests" / "sweep"))
from ray_cluster import LocalCluster  # noqa: E402

SOPBENCH = [sys.executable, "-c", "from sopbench.cli import main; main()"]
RATIO_GOAL = 40.0
MODES = ("fc", "react", "act-only")
LISTS = ("full", "oracle")


def start_server(latency: float, slots: int | None = None) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, str(SERVER), "--latency", str(latency)]
    if slots:
        command += ["--slots", str(slots)]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


CPU_S: dict[str, float] = {}  # CPU seconds (user + system) of each timed command, by its label


def timed(command: list[str], env: dict[str, str], label: str = "") -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if label:
        CPU_S[label] = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[3:6])}... failed: {done.stderr.strip().splitlines()[-1:]}")
    return elapsed


def sweep_file(urls: list[str], domains: list[str], limit: int, concurrency: int) -> str:
    return f"""
domains = {json.dumps(domains)}
concurrency = {concurrency}
[limits]
limit = {limit}
[[agents]]
name = "loopback"
agent = "openai"
model = "loopback"
endpoint = {json.dumps(urls)}
[matrix]
agents = ["loopback"]
tool_modes = {json.dumps(list(MODES))}
tool_lists = {json.dumps(list(LISTS))}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--limit", type=int, default=100, help="tasks per domain in each sweep configuration")
    parser.add_argument("--replica-limit", type=int, default=100, help="tasks per domain in the replica runs")
    parser.add_argument("--slots", type=int, default=4, help="replies each replica makes at once")
    parser.add_argument("--skip-sequential", action="store_true", help="no sequential loop (no ratios)")
    args = parser.parse_args()
    env = {**os.environ, "OPENAI_API_KEY": "loopback", "RAY_USAGE_STATS_ENABLED": "0"}
    domains = ["bank", "dmv"]
    results: dict[str, float] = {}
    servers: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory(prefix="sw") as scratch:
        work = Path(scratch)
        try:
            # Replicas: the endpoint is the bottleneck (``--slots`` replies at once per replica).
            limited = [start_server(args.latency, args.slots) for _ in range(4)]
            servers += [p for p, _ in limited]
            for replicas in (1, 2, 4):
                urls = [u for _, u in limited[:replicas]]
                command = [
                    *SOPBENCH,
                    "run",
                    "--agent",
                    "openai",
                    "--model",
                    "loopback",
                    "--domain",
                    ",".join(domains),
                    "--limit",
                    str(args.replica_limit),
                    "--concurrency",
                    str(8 * args.slots),
                    "--no-baselines",
                    "--output",
                    str(work / f"replicas{replicas}"),
                ]
                for url in urls:
                    command += ["--base-url", url]
                results[f"replicas_{replicas}_s"] = timed(command, env, f"replicas_{replicas}")
            # The command's own start-up (imports, task set, client): one task of each domain.
            small = list(command)
            small[small.index("--limit") + 1] = "1"
            small[small.index("--output") + 1] = str(work / "startup")
            results["replicas_startup_s"] = timed(small, env) - 3 * args.latency
            # What the endpoint alone allows: 3 replies per episode, ``slots`` at once per replica.
            results["replicas_requests"] = 3 * len(domains) * args.replica_limit
            # The sweep: 4 unlimited replicas; a sequential loop of `sopbench run` at concurrency 1.
            free = [start_server(args.latency) for _ in range(4)]
            servers += [p for p, _ in free]
            urls = [u for _, u in free]
            if not args.skip_sequential:
                start = time.perf_counter()
                for mode in MODES:
                    for tool_list in LISTS:
                        timed(
                            [
                                *SOPBENCH,
                                "run",
                                "--agent",
                                "openai",
                                "--model",
                                "loopback",
                                "--base-url",
                                urls[0],
                                "--tool-mode",
                                mode,
                                "--tool-list",
                                tool_list,
                                "--domain",
                                ",".join(domains),
                                "--limit",
                                str(args.limit),
                                "--concurrency",
                                "1",
                                "--no-baselines",
                                "--output",
                                str(work / "sequential" / f"{mode}-{tool_list}"),
                            ],
                            env,
                        )
                results["sequential_s"] = time.perf_counter() - start
            file = work / "sweep.toml"
            file.write_text(sweep_file(urls, domains, args.limit, 256), encoding="utf-8")
            results["sweep_episodes"] = len(MODES) * len(LISTS) * len(domains) * args.limit
            results["sweep_local_s"] = timed(
                [*SOPBENCH, "sweep", str(file), "--output", str(work / "local")], env, "sweep_local"
            )
            with LocalCluster(worker_nodes=2, head_cpus=0, worker_cpus=1) as cluster:
                results["sweep_ray_s"] = timed(
                    [
                        *SOPBENCH,
                        "sweep",
                        str(file),
                        "--output",
                        str(work / "ray"),
                        "--executor",
                        "ray",
                        "--address",
                        cluster.address,
                    ],
                    {**cluster.env, **env},
                    "sweep_ray_driver",
                )
        finally:
            for server in servers:
                server.kill()
                server.wait()
    results["replicas_2_speedup"] = results["replicas_1_s"] / results["replicas_2_s"]
    results["replicas_4_speedup"] = results["replicas_1_s"] / results["replicas_4_s"]
    startup = results["replicas_startup_s"]  # throughput once running: the start-up left out
    for replicas in (2, 4):
        results[f"replicas_{replicas}_speedup_running"] = (results["replicas_1_s"] - startup) / (
            results[f"replicas_{replicas}_s"] - startup
        )
    if "sequential_s" in results:
        results["sweep_local_ratio"] = results["sequential_s"] / results["sweep_local_s"]
        results["sweep_ray_ratio"] = results["sequential_s"] / results["sweep_ray_s"]
    for replicas in (1, 2, 4):
        results[f"replicas_{replicas}_endpoint_bound_s"] = (
            results["replicas_requests"] / (replicas * args.slots) * args.latency
        )
    results |= {f"{label}_cpu_s": seconds for label, seconds in CPU_S.items()}
    results["load_average_1min"] = os.getloadavg()[0]  # other work on the machine slows the sweeps
    for key, value in results.items():
        print(f"{key:30} {value:8.2f}", file=sys.stderr)
    print(json.dumps(results, indent=2))
    met = (
        results.get("sweep_local_ratio", 0) >= RATIO_GOAL and results.get("sweep_ray_ratio", 0) >= RATIO_GOAL
    )
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
