"""How well the ``openai`` agent overlaps model latency: episodes against a loopback endpoint.

A chat-completions server on 127.0.0.1 (tests/agents/chat_server.py, in its own process) answers
every request after ``--latency`` seconds (default 0.2) with a deterministic three-reply episode
(a tool call, a message to the user, ``exit_conversation``). Through the runner's public API it
measures, in one run:

* throughput at ``--concurrency`` (default 64) as a ratio to ``--concurrency 1`` (goal: >= 40x);
* peak memory (max RSS of a child process) of all 903 published tasks at that concurrency
  (goal: < 1 GiB).

    python benchmarks/llm_concurrency.py --tasks ../shared/sopbench/tasks [--tool-mode react]

Prints a table on stderr and one JSON document on stdout; exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sopbench.domains import PUBLISHED_DOMAINS

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "agents" / "chat_server.py"
RATIO_GOAL = 40.0
MEMORY_GOAL_MB = 1024.0


def run_episodes(
    url: str, args: argparse.Namespace, *, domains, concurrency: int, limit: int | None, output: Path
):
    """One ``sopbench.runner.run`` call; returns its report and the wall time."""
    from sopbench.runner import RunSpec, run

    config = RunSpec(
        domains=tuple(domains),
        agent="openai",
        agent_options={"base_url": url, "model": "loopback", "tool_mode": args.tool_mode},
        tasks=args.tasks,
        output=output,
        concurrency=concurrency,
        limit=limit,
        baselines=False,  # the refuse-all / no-verify summaries are not what is measured
    )
    start = time.perf_counter()
    report = run(config)
    if inspect.isawaitable(report):
        report = asyncio.run(report)
    return report, time.perf_counter() - start


def episodes_in(report, requested: int) -> int:
    """How many episodes the report says ran (the number asked for when it does not say)."""
    for name in ("ran", "completed", "episodes"):
        value = getattr(report, name, None)
        if isinstance(value, int):
            return value
        if isinstance(value, list | tuple):
            return len(value)
    return requested


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--latency", str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    url = server.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        server.kill()
        raise SystemExit(f"the loopback server did not start (said {url!r})")
    return server, url


def stop_server(server: subprocess.Popen) -> None:
    server.stdin.close()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    server.stdout.close()


def throughput(url: str, args: argparse.Namespace) -> dict:
    figures = {}
    with tempfile.TemporaryDirectory(prefix="sopbench-llm-bench-") as scratch:
        # warm-up: imports, task loading and the first connection stay out of both timings
        run_episodes(
            url, args, domains=[args.domain], concurrency=1, limit=1, output=Path(scratch) / "warm-up"
        )
        for concurrency, limit in ((1, args.baseline_episodes), (args.concurrency, args.episodes)):
            report, seconds = run_episodes(
                url,
                args,
                domains=[args.domain],
                concurrency=concurrency,
                limit=limit,
                output=Path(scratch) / f"c{concurrency}",
            )
            done = episodes_in(report, limit)
            figures[concurrency] = {"episodes": done, "seconds": round(seconds, 3), "per_s": done / seconds}
            print(
                f"concurrency {concurrency:>3}: {done} episodes in {seconds:.2f} s "
                f"({done / seconds:.2f} episodes/s)",
                file=sys.stderr,
            )
    ratio = figures[args.concurrency]["per_s"] / figures[1]["per_s"]
    return {"runs": figures, "ratio": round(ratio, 2)}


def memory_child(url: str, args: argparse.Namespace) -> None:
    """Runs all tasks and prints this process's peak RSS (MB) and the episode count as JSON."""
    with tempfile.TemporaryDirectory(prefix="sopbench-llm-bench-") as scratch:
        report, seconds = run_episodes(
            url,
            args,
            domains=PUBLISHED_DOMAINS,
            concurrency=args.concurrency,
            limit=None,
            output=Path(scratch) / "all",
        )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {"episodes": episodes_in(report, 903), "seconds": round(seconds, 2), "peak_mb": round(peak_mb, 1)}
        )
    )


def memory(url: str, args: argparse.Namespace) -> dict:
    command = [
        sys.executable,
        __file__,
        "--phase",
        "memory-child",
        "--url",
        url,
        "--tasks",
        str(args.tasks),
        "--concurrency",
        str(args.concurrency),
        "--tool-mode",
        args.tool_mode,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the all-tasks run failed:\n{done.stderr[-2000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"all tasks at concurrency {args.concurrency}: {figures['episodes']} episodes in "
        f"{figures['seconds']} s, peak {figures['peak_mb']} MB",
        file=sys.stderr,
    )
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=ROOT.parent / "shared" / "sopbench" / "tasks")
    parser.add_argument("--tool-mode", choices=("fc", "react", "act-only"), default="fc")
    parser.add_argument(
        "--latency", type=float, default=0.2, help="seconds the server waits before each reply"
    )
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--domain", default="hotel", help="domain of the throughput runs (196 tasks)")
    parser.add_argument("--baseline-episodes", type=int, default=8, help="episodes at concurrency 1")
    parser.add_argument("--episodes", type=int, default=192, help="episodes at --concurrency")
    parser.add_argument("--skip-memory", action="store_true", help="leave out the all-tasks memory run")
    parser.add_argument("--phase", choices=("all", "memory-child"), default="all", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.tasks.exists():
        parser.error(f"task files not found: {args.tasks} (give --tasks)")
    if args.phase == "memory-child":
        memory_child(args.url, args)
        return 0
    server, url = start_server(args.latency)
    try:
        result = {"tool_mode": args.tool_mode, "latency_s": args.latency, "concurrency": args.concurrency}
        result["throughput"] = throughput(url, args)
        print(
            f"ratio concurrency {args.concurrency} / 1: {result['throughput']['ratio']}x (goal >= {RATIO_GOAL:g}x)",
            file=sys.stderr,
        )
        if not args.skip_memory:
            result["all_tasks"] = memory(url, args)
    finally:
        stop_server(server)
    print(json.dumps(result))
    ok = result["throughput"]["ratio"] >= RATIO_GOAL
    if "all_tasks" in result:
        ok = ok and result["all_tasks"]["peak_mb"] < MEMORY_GOAL_MB
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
