"""The reference policy through Inspect AI against ``sopbench run``: same verdicts, and the cost.

1. Equivalence: every task of the selection (default: the whole generated set, all seven domains)
   is played by ``sopbench run --agent reference`` and by ``inspect eval sopbench/sopbench`` with the
   ``sopbench-reference`` model (the reference agent's decisions, through Inspect's native tool
   calling); each task's sound verdict and seven published checks must be equal.
2. Time per sample: the wall time of each path over its samples, and their difference (Inspect's
   overhead per sample: its scheduler, transcript events and log writing). Baseline: ``sopbench run``
   in the same process on the same tasks.
3. ``sopbench evaluate`` on the Inspect log gives the verdicts the log holds.

Needs the inspect extra. Usage: python benchmarks/inspect_equivalence.py [--domains all] [--tasks DIR]
[--max-samples 8]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log_sample_summaries

from sopbench.inspect_eval import SCORER_NAME, reference_model, sopbench
from sopbench.runner import RunSpec, run
from sopbench.runner.store import STORE_NAME

assert reference_model  # registers the sopbench-reference provider


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default="all")
    parser.add_argument("--tasks", default="generated", help="a task folder, or 'generated'")
    parser.add_argument("--max-samples", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        started = time.perf_counter()
        run(
            RunSpec(
                agent="reference",
                domains=args.domains,
                tasks=None if args.tasks == "generated" else Path(args.tasks),
                output=base / "run",
                baselines=False,
            )
        )
        runner_s = time.perf_counter() - started
        db = sqlite3.connect(base / "run" / STORE_NAME)
        runner = {
            t: (json.loads(v), None if c is None else json.loads(c))
            for t, v, c in db.execute("SELECT task_id, verdict, compat FROM episodes")
        }
        db.close()

        started = time.perf_counter()
        (log,) = inspect_eval(
            sopbench(domain=args.domains, tasks=args.tasks),
            model="sopbench-reference/reference",
            log_dir=str(base / "logs"),
            display="none",
            max_samples=args.max_samples,
            log_realtime=False,
        )
        inspect_s = time.perf_counter() - started
        inspect = {}
        errors = 0
        for sample in read_eval_log_sample_summaries(log.location):
            if sample.error is not None:
                errors += 1
                continue
            meta = sample.scores[SCORER_NAME].metadata
            inspect[str(sample.id)] = (meta["verdict"], meta["compat"])

        from typer.testing import CliRunner

        from sopbench.cli import app

        out = base / "evaluated.jsonl"
        result = CliRunner().invoke(app, ["evaluate", log.location, "--output", str(out)])
        if result.exit_code != 0:
            print(f"sopbench evaluate exited {result.exit_code}: {result.output[-500:]}")
        evaluated = {
            json.loads(line)["task_id"]: json.loads(line)["verdict"] for line in out.read_text().splitlines()
        }

    same = sum(1 for t in runner if inspect.get(t) == runner[t])
    passed_runner = sum(v["passed"] for v, _ in runner.values())
    passed_inspect = sum(v["passed"] for v, _ in inspect.values())
    evaluate_same = sum(1 for t, (v, _) in inspect.items() if evaluated.get(t) == v)
    n = len(runner)
    print(f"tasks: {n} (sopbench run) / {len(inspect)} (Inspect, {errors} sample errors)")
    print(f"verdicts equal (sound verdict and the seven published checks): {same}/{n}")
    print(f"passed: sopbench run {passed_runner}, Inspect {passed_inspect}")
    print(f"sopbench evaluate on the Inspect log: {evaluate_same}/{len(inspect)} verdicts as the log holds")
    print(f"sopbench run: {runner_s:.1f} s, {1000 * runner_s / n:.1f} ms per task (play, score, store)")
    print(
        f"inspect eval: {inspect_s:.1f} s, {1000 * inspect_s / n:.1f} ms per sample (max_samples {args.max_samples})"
    )
    print(
        f"Inspect overhead per sample: {1000 * (inspect_s - runner_s) / n:.1f} ms; ratio {inspect_s / runner_s:.1f}x"
    )
    return 0 if same == n == len(inspect) and evaluate_same == len(inspect) else 1


if __name__ == "__main__":
    sys.exit(main())
