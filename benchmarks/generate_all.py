"""Generate the task set of all seven domains, time it, and check what the issue asks of it.

    .venv/bin/python benchmarks/generate_all.py [--seed S] [--compare ../shared/sopbench/tasks] [--repeat]

Prints per domain: combinations (goal, variant, assignment), how many were realised, tasks, seconds;
then the total time against the 60 s target. The baseline measured in the same run is the strict
oracle's own work on the generated set (each task's reference path run once, as the acceptance
test does), so the ratio says how many oracle runs one generated task costs. With ``--compare``
the combination-by-combination comparison with the published files is printed. With
``--repeat`` the set is generated a second time with the same seed (must be byte-identical) and
once with the next seed (must differ).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from sopbench.domains import PUBLISHED_DOMAINS, get_domain, run_reference_path
from sopbench.generation import compare, generate_domain
from sopbench.tasks import load_tasks, task_from_json


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--compare", type=Path, default=None, help="folder of published <domain>_tasks.json.gz"
    )
    parser.add_argument(
        "--repeat", action="store_true", help="check determinism (same seed) and variety (next seed)"
    )
    args = parser.parse_args()
    for name in PUBLISHED_DOMAINS:  # importing the domains is set-up, as for the scoring benchmark
        get_domain(name)

    started = time.perf_counter()
    results = {}
    for name in PUBLISHED_DOMAINS:
        results[name] = generate_domain(name, seed=args.seed)
    total = time.perf_counter() - started

    print(f"{'domain':14} {'combinations':>12} {'realised':>9} {'tasks':>6} {'seconds':>8}")
    for name, result in results.items():
        r = result.report
        print(f"{name:14} {r.assignments:12} {r.realised:9} {r.tasks:6} {r.seconds:8.2f}")
    combos = sum(r.report.assignments for r in results.values())
    realised = sum(r.report.realised for r in results.values())
    tasks = sum(r.report.tasks for r in results.values())
    print(f"{'all':14} {combos:12} {realised:9} {tasks:6} {total:8.2f}")
    print(
        f"generation of all seven domains: {total:.1f} s (target < 60 s: {'met' if total < 60 else 'NOT met'})"
    )

    verify_started = time.perf_counter()
    failures = 0
    for name, result in results.items():
        domain = get_domain(name)
        for goal, entries in result.tasks.items():
            for entry in entries:
                task = task_from_json(entry, domain=name, goal=goal)
                if run_reference_path(domain, task).goal_succeeded != task.action_should_succeed:
                    failures += 1
    verify = time.perf_counter() - verify_started
    print(
        f"baseline, one oracle run per generated task: {verify:.2f} s; {tasks - failures}/{tasks} tasks verified"
    )
    print(f"ratio generation / baseline: {total / verify:.1f}x")

    if args.compare is not None:
        print("\ncomparison with the published tasks, combination by combination")
        print(
            f"{'domain':14} {'combos':>7} {'published':>9} {'ours':>6} {'both':>6} {'pub-only':>8} {'ours-only':>9}"
        )
        sums = [0] * 6
        for name, result in results.items():
            source = args.compare / f"{name}_tasks.json.gz"
            if not source.is_file():
                source = args.compare / f"{name}_tasks.json"
            published = load_tasks(source, domain=name)
            c = compare(get_domain(name), result.variants, result.report.combinations, published).as_dict()
            row = [
                c["combinations"],
                c["covered_by_published"],
                c["covered_by_generated"],
                c["covered_by_both"],
                c["published_only"],
                c["generated_only"],
            ]
            sums = [a + b for a, b in zip(sums, row, strict=True)]
            print(f"{name:14} " + " ".join(f"{v:>{w}}" for v, w in zip(row, (7, 9, 6, 6, 8, 9), strict=True)))
        print(f"{'all':14} " + " ".join(f"{v:>{w}}" for v, w in zip(sums, (7, 9, 6, 6, 8, 9), strict=True)))

    if args.repeat:
        same = all(
            generate_domain(n, seed=args.seed).to_json() == results[n].to_json() for n in PUBLISHED_DOMAINS
        )
        other = sum(
            generate_domain(n, seed=args.seed + 1).to_json() != results[n].to_json()
            for n in PUBLISHED_DOMAINS
        )
        print(
            f"same seed byte-identical: {same}; next seed differs in {other}/{len(PUBLISHED_DOMAINS)} domains"
        )
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
