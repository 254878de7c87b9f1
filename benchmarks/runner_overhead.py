"""The runner's own cost with the reference agent, on every published task.

1. Overhead per agent step: all tasks played through ``run_episode`` (no scoring, no store) with the
   reference agent, whose own ``act`` time is measured and subtracted. What remains is the runner:
   the loop, the tool calls on the lenient system, building messages. Goal: under 1 ms per step.
   Baseline in the same run: the same tool calls executed directly on fresh systems.
2. Throughput of the whole pipeline (play, score both protocols, store one transaction per episode)
   at concurrency 1 and 64, as episodes per second, and their ratio.

Usage: python benchmarks/runner_overhead.py [--tasks ../shared/sopbench/tasks] [--repeat 3]
Peak memory of a full run at concurrency 64 (goal: under 1 GiB):
    env time -v sopbench run --agent reference --concurrency 64 --tasks ../shared/sopbench/tasks --output DIR
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import shutil
import tempfile
import time
from pathlib import Path

from sopbench.agents import NoUser, Reference
from sopbench.domains import LenientSystem, get_domain
from sopbench.runner import Limits, RunSpec, run
from sopbench.runner.episode import episode_setup, run_episode, select_tasks


class TimedReference(Reference):
    """The reference agent, with the time spent in its own ``act`` added up."""

    spent = 0.0
    steps = 0

    async def act(self, messages):
        started = time.perf_counter()
        turn = await super().act(messages)
        TimedReference.spent += time.perf_counter() - started
        TimedReference.steps += 1
        return turn


async def play_all(pairs, calls: list | None = None) -> float:
    started = time.perf_counter()
    for task, task_id in pairs:
        setup = episode_setup(task, task_id, "full", 0, 0)
        result = await run_episode(setup, TimedReference(), NoUser(), Limits())
        if calls is not None:
            calls.append((task, [(c.name, c.arguments) for c in result.calls]))
    return time.perf_counter() - started


def tool_calls_alone(played) -> float:
    """The baseline: the same tool calls executed directly on fresh lenient systems, nothing else."""
    started = time.perf_counter()
    for task, calls in played:
        system = LenientSystem(
            get_domain(task.domain), task.initial_database, task.constraint_parameters, atomic=False
        )
        for name, arguments in calls:
            system.execute(name, arguments, offered_only=False).content("value")
        system.close()
    return time.perf_counter() - started


def overhead(pairs, repeat: int) -> tuple[float, float, int]:
    best = None
    for _ in range(repeat):
        TimedReference.spent, TimedReference.steps = 0.0, 0
        total = asyncio.run(play_all(pairs))
        runner = total - TimedReference.spent
        if best is None or runner < best[0]:
            best = (runner, TimedReference.spent, TimedReference.steps)
    assert best is not None
    return best


def throughput(tasks: Path, concurrency: int) -> tuple[float, int]:
    folder = Path(tempfile.mkdtemp(prefix="sopbench-bench-"))
    try:
        config = RunSpec(
            agent="reference", tasks=tasks, output=folder, concurrency=concurrency, baselines=False
        )
        started = time.perf_counter()
        report = run(config)
        return time.perf_counter() - started, report.completed
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=Path("../shared/sopbench/tasks"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    pairs = select_tasks(RunSpec(agent="reference", tasks=args.tasks, output=Path("unused")))
    runner, agent, steps = overhead(pairs, args.repeat)
    played: list = []
    asyncio.run(play_all(pairs, played))
    baseline = min(tool_calls_alone(played) for _ in range(args.repeat))
    print(f"{len(pairs)} episodes, {steps} agent steps (best of {args.repeat})")
    print(
        f"baseline, the same tool calls alone on fresh systems: {1000 * baseline / steps:.3f} ms per step; "
        f"runner (tool calls included) / baseline = {runner / baseline:.2f}"
    )
    print(
        f"runner overhead: {1000 * runner / steps:.3f} ms per step (goal < 1 ms); "
        f"the reference agent itself: {1000 * agent / steps:.3f} ms per step"
    )
    results = {}
    for concurrency in (1, 64):
        seconds, done = throughput(args.tasks, concurrency)
        results[concurrency] = done / seconds
        print(
            f"concurrency {concurrency:>2}: {done} episodes in {seconds:.2f} s = {done / seconds:.0f} episodes/s "
            "(play, score with both protocols, store)"
        )
    print(
        f"throughput ratio 64/1: {results[64] / results[1]:.2f} (the reference agent waits on nothing, "
        "so concurrency cannot help a CPU-bound run on one core)"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of this process: {peak:.0f} MB")


if __name__ == "__main__":
    main()
