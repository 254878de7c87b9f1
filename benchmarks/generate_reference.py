"""Generate the task set and play the reference agent on it: every generated task must be passable.

    .venv/bin/python benchmarks/generate_reference.py [--seed S] [--domain bank,hotel] [--goals a,b]

The reference agent follows each goal's SOP using only what an agent is shown (the offered tools,
the SOPs, the user's known values, the tool results). A generated task it fails is a task no careful
agent could pass (a credential the user does not know, a refusal resting on a check no offered tool
shows), so the target is every episode passing under the sound protocol. Prints per domain the
episodes, passes and the seconds of generation and of the run; then every failing episode with the
scorer's explanation.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

import orjson

from sopbench.domains import PUBLISHED_DOMAINS
from sopbench.generation import generate
from sopbench.runner import RunSpec, export_jsonl, run
from sopbench.runner.store import open_existing


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--domain", default="all", help="comma-separated domains (default: all seven)")
    parser.add_argument("--goals", default=None, help="comma-separated goals (default: every goal)")
    args = parser.parse_args()
    domains = list(PUBLISHED_DOMAINS) if args.domain == "all" else args.domain.split(",")
    goals = None if args.goals is None else args.goals.split(",")

    with tempfile.TemporaryDirectory() as folder:
        tasks, runs = Path(folder) / "tasks", Path(folder) / "run"
        started = time.perf_counter()
        generate(domains, tasks, seed=args.seed, goals=goals)
        generating = time.perf_counter() - started
        started = time.perf_counter()
        config = RunSpec(agent="reference", domains=tuple(domains), tasks=tasks, output=runs, baselines=False)
        report = run(config)
        playing = time.perf_counter() - started
        sink = io.BytesIO()
        store = open_existing(runs)
        try:
            export_jsonl(store, sink, timings=False)
        finally:
            store.close()
    episodes = [orjson.loads(line) for line in sink.getvalue().splitlines()]

    print(f"seed {args.seed}: generation {generating:.1f} s, reference run {playing:.1f} s")
    print(f"{'domain':14} {'episodes':>8} {'passed':>7} {'must succeed':>13} {'must refuse':>12}")
    for name in [*domains, "all"]:
        row = report.summary.domains.get(name)
        if row is not None:
            succeed = "{}/{}".format(*row.should_succeed)
            refuse = "{}/{}".format(*row.should_refuse)
            print(f"{name:14} {row.runs:8} {row.passed:7} {succeed:>13} {refuse:>12}")
    overall = report.summary.overall
    print(f"reference agent passes {overall.passed}/{overall.runs} generated tasks (target: all)")
    for episode in episodes:
        if not episode["verdict"]["passed"]:
            print(f"FAIL {episode['task_id']}: {'; '.join(episode['explanations'])[:400]}")
    return 0 if overall.passed == overall.runs and report.complete else 1


if __name__ == "__main__":
    sys.exit(main())
