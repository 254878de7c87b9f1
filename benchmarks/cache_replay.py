"""An exact rerun at no cost: a run recorded against a model (``--cache``) replayed with
``--cache-mode replay`` against no server at all.

A chat-completions server on 127.0.0.1 (tests/agents/chat_server.py, in this process) answers every
request after ``--latency`` seconds (default 0.2): the agent plays ``benchmark_model`` and the
``llm`` user answers twice, then ends the conversation. For each tool mode (fc, react) the runner's
public API records a run into one cache; then the server is stopped, every socket connection is
refused and counted, and the same runs are replayed from the cache (the ``openai`` client is
imported before either is timed). Measured in the same process:

* the replay's wall time as a ratio of the recording's (goal: < 10 %);
* network connections attempted during the replay (goal: 0);
* ``export --no-timings`` of the replay byte-identical to the recording's (goal: yes).

    python benchmarks/cache_replay.py --tasks ../shared/sopbench/tasks [--limit 4] [--latency 0.2]

Prints a table on stderr and one JSON document on stdout; exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "agents"))
from chat_server import ChatServer, Reply, benchmark_model, say  # noqa: E402

RATIO_GOAL = 0.10
KEY_ENV = "SOPBENCH_BENCH_CACHE_KEY"


def model(request: dict[str, Any]) -> Reply:
    tools = [t["function"]["name"] for t in request.get("tools") or ()]
    if tools == ["exit_conversation"]:  # the llm user
        turns = sum(1 for m in request["messages"] if m["role"] == "assistant")
        if turns >= 2:
            return Reply(tool_calls=(("exit_conversation", "{}"),), call_ids=("end",))
        return say(f"I still need it ({turns}).")
    return benchmark_model(request)


def spec(args: argparse.Namespace, url: str, mode: str, output: Path, cache: Path, replay: bool):
    from sopbench.runner import RunSpec

    endpoint = {"base_url": url, "api_key_env": KEY_ENV}
    return RunSpec(
        agent="openai",
        agent_options={"model": "loopback", "tool_mode": mode, **endpoint},
        user="llm",
        user_options={"model": "loopback-user", **endpoint},
        domains=("bank",),
        tasks=args.tasks,
        limit=args.limit,
        concurrency=args.concurrency,
        output=output,
        baselines=False,
        cache=cache,
        cache_mode="replay" if replay else "read-write",
    )


def exported(folder: Path) -> bytes:
    from sopbench.runner import export_jsonl, read_run

    sink = io.BytesIO()
    export_jsonl(read_run(folder, records=False), sink, timings=False)
    return sink.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=ROOT.parent / "shared" / "sopbench" / "tasks")
    parser.add_argument("--limit", type=int, default=6, help="bank tasks per mode")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per reply")
    parser.add_argument("--concurrency", type=int, default=1, help="episodes at once (1: a one-slot model)")
    args = parser.parse_args(argv)
    os.environ[KEY_ENV] = "sk-benchmark-not-a-real-key"
    import openai  # noqa: F401 - imported before either is timed: the recording would pay it alone

    from sopbench.runner import run

    modes = ("fc", "react")
    results: dict[str, Any] = {"latency_s": args.latency, "limit": args.limit, "modes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cache = root / "replies.sqlite"
        recorded: dict[str, tuple[float, Any]] = {}
        with ChatServer(model, latency=args.latency) as server:
            for mode in modes:
                started = time.perf_counter()
                report = run(spec(args, server.url, mode, root / f"rec-{mode}", cache, replay=False))
                recorded[mode] = (time.perf_counter() - started, report)
        attempts: list[Any] = []
        original = socket.socket.connect, socket.socket.connect_ex

        def refuse(sock: socket.socket, address: Any, *_: Any) -> Any:
            attempts.append(address)
            raise ConnectionRefusedError("the benchmark forbids the network during the replay")

        socket.socket.connect = refuse  # type: ignore[method-assign]
        socket.socket.connect_ex = refuse  # type: ignore[method-assign]
        try:
            for mode in modes:
                started = time.perf_counter()
                report = run(
                    spec(args, "http://127.0.0.1:9/v1", mode, root / f"rep-{mode}", cache, replay=True)
                )
                replay_s = time.perf_counter() - started
                record_s, first = recorded[mode]
                results["modes"][mode] = {
                    "episodes": report.episodes,
                    "record_s": round(record_s, 3),
                    "replay_s": round(replay_s, 3),
                    "ratio": round(replay_s / record_s, 4),
                    "recorded_replies": first.cache.recorded,
                    "replay_hits": report.cache.hits,
                    "replay_misses": report.cache.misses,
                    "identical_export": exported(root / f"rep-{mode}") == exported(root / f"rec-{mode}"),
                    "complete": report.complete,
                }
        finally:
            socket.socket.connect, socket.socket.connect_ex = original  # type: ignore[method-assign]
    results["network_connections_during_replay"] = len(attempts)
    record_total = sum(m["record_s"] for m in results["modes"].values())
    replay_total = sum(m["replay_s"] for m in results["modes"].values())
    results["ratio"] = round(replay_total / record_total, 4)
    ok = (
        results["ratio"] < RATIO_GOAL
        and not attempts
        and all(
            m["identical_export"] and m["complete"] and not m["replay_misses"]
            for m in results["modes"].values()
        )
    )
    results["goals_met"] = ok
    for mode, m in results["modes"].items():
        print(
            f"{mode:6} {m['episodes']} episodes: recorded in {m['record_s']:.2f} s ({m['recorded_replies']} replies), "
            f"replayed in {m['replay_s']:.2f} s ({m['replay_hits']} hits, {m['replay_misses']} misses): "
            f"ratio {m['ratio']:.3f}, export --no-timings identical: {m['identical_export']}",
            file=sys.stderr,
        )
    print(
        f"replay / recording wall time: {results['ratio']:.3f} (goal < {RATIO_GOAL}); network connections "
        f"during the replay: {len(attempts)}",
        file=sys.stderr,
    )
    print(json.dumps(results, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
