"""Generate the task set of all seven domains, time it, and check what the issue asks of it.

    .venv/bin/python benchmarks/generate_all.py [--seed S] [--compare ../shared/sopbench/tasks] [--repeat]
    .venv/bin/python benchmarks/generate_all.py --seeds 0-49 [--jobs N]

With ``--seeds A-B`` (or a comma list) every seed's seven domains are generated in one process each
(``--jobs`` seeds at a time) and one line per seed gives realised / realisable / enumerated
combinations, combinations excluded by design, failures (realisable but not realised, or a task the
strict oracle does not verify) and seconds; then min / median / max seconds and total failures.

Prints per domain: combinations (goal, variant, assignment), how many were realised, tasks, seconds;
then the total time against the 15 s target (judged on CPU time: jobs sharing the cores inflate the wall time). The baseline measured in the same run is the strict
oracle's own work on the generated set (each task's reference path run once, as the acceptance
test does), so the ratio says how many oracle runs one generated task costs. With ``--compare``
the combination-by-combination comparison with the published files is printed. With
``--repeat`` the set is generated a second time with the same seed (must be byte-identical) and
once with the next seed (must differ).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from sopbench.domains import PUBLISHED_DOMAINS, get_domain, run_reference_path
from sopbench.generation import DIFFICULTY_MEASURES, compare, difficulty, generate_domain
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
    parser.add_argument("--seeds", default=None, help="a range A-B or comma-separated seeds")
    parser.add_argument("--jobs", type=int, default=1, help="seeds generated at the same time (processes)")
    args = parser.parse_args()
    if args.seeds is not None:
        return over_seeds(_seed_list(args.seeds), args.jobs)
    for name in PUBLISHED_DOMAINS:  # importing the domains is set-up, as for the scoring benchmark
        get_domain(name)

    started, cpu_started = time.perf_counter(), time.process_time()
    results = {}
    for name in PUBLISHED_DOMAINS:
        results[name] = generate_domain(name, seed=args.seed)
    total = time.perf_counter() - started
    cpu = time.process_time() - cpu_started

    print(f"{'domain':14} {'combinations':>12} {'realised':>9} {'excluded':>8} {'tasks':>6} {'seconds':>8}")
    for name, result in results.items():
        r = result.report
        print(f"{name:14} {r.assignments:12} {r.realised:9} {len(r.excluded):8} {r.tasks:6} {r.seconds:8.2f}")
        for u in r.unrealisable:
            print(f"    NOT realised: {u.goal} variant {u.variant}: {u.reason[:160]}")
    combos = sum(r.report.assignments for r in results.values())
    realised = sum(r.report.realised for r in results.values())
    tasks = sum(r.report.tasks for r in results.values())
    excluded = sum(len(r.report.excluded) for r in results.values())
    print(f"{'all':14} {combos:12} {realised:9} {excluded:8} {tasks:6} {total:8.2f}")
    print(
        f"generation of all seven domains: {total:.1f} s, {cpu:.1f} s of CPU (target < 15 s of CPU: {'met' if cpu < 15 else 'NOT met'};"
        " CPU time, since other jobs sharing the cores inflate the wall time)"
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
        profiles = {}
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
            profiles[name] = (difficulty(result.task_list()), difficulty(published))
        print(f"{'all':14} " + " ".join(f"{v:>{w}}" for v, w in zip(sums, (7, 9, 6, 6, 8, 9), strict=True)))
        print("\ndifficulty, generated vs published: median (mean) [min-max] per task; must-succeed share")
        print(
            f"{'domain':14} {'set':9} {'constraints':>20} {'expanded':>20} {'distinct expanded':>20} "
            f"{'depth':>16} {'succeed':>8}"
        )
        for name, pair in profiles.items():
            for label, profile in zip(("generated", "published"), pair, strict=True):
                cells = [
                    f"{profile[m]['median']} ({profile[m]['mean']}) [{profile[m]['min']}-{profile[m]['max']}]"
                    for m in DIFFICULTY_MEASURES
                ]
                print(
                    f"{name if label == 'generated' else '':14} {label:9} {cells[0]:>20} {cells[1]:>20} "
                    f"{cells[2]:>20} {cells[3]:>16} {profile['must_succeed_share']:8.3f}"
                )

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


def _seed_list(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        seeds += list(range(int(first), int(last) + 1)) if last else [int(first)]
    return seeds


def one_seed(seed: int) -> dict:
    """All seven domains for one seed, timed; failures: realisable combinations not realised, and
    tasks whose reference path on the strict oracle disagrees with their outcome."""
    started, cpu_started = time.perf_counter(), time.process_time()
    results = {name: generate_domain(name, seed=seed) for name in PUBLISHED_DOMAINS}
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    failures = [
        f"{name} {u.goal} variant {u.variant}: {u.reason[:120]}"
        for name, result in results.items()
        for u in result.report.unrealisable
    ]
    for name, result in results.items():
        domain = get_domain(name)
        for task in result.task_list():
            if run_reference_path(domain, task).goal_succeeded != task.action_should_succeed:
                failures.append(f"{name} {task.goal}[{task.index}]: the strict oracle disagrees")
    enumerated = sum(r.report.assignments for r in results.values())
    excluded = sum(len(r.report.excluded) for r in results.values())
    return {
        "seed": seed,
        "enumerated": enumerated,
        "excluded": excluded,
        "realisable": enumerated - excluded,
        "realised": sum(r.report.realised for r in results.values()),
        "seconds": seconds,
        "cpu_seconds": cpu,
        "failures": failures,
    }


def over_seeds(seeds: list[int], jobs: int) -> int:
    for name in PUBLISHED_DOMAINS:
        get_domain(name)
    print(
        f"{'seed':>5} {'realised':>9} {'realisable':>10} {'enumerated':>10} {'excluded':>8} {'failures':>8} {'seconds':>8}"
    )
    rows = []
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs) as pool:
            outcomes = pool.map(one_seed, seeds)
            rows = _print_rows(outcomes)
    else:
        rows = _print_rows(one_seed(s) for s in seeds)
    times = sorted(r["seconds"] for r in rows)
    cpu = sorted(r["cpu_seconds"] for r in rows)
    failures = sum(len(r["failures"]) for r in rows)
    print(
        f"{len(rows)} seeds: seconds min {times[0]:.1f} / median {statistics.median(times):.1f} / max {times[-1]:.1f}"
        f" (CPU {cpu[0]:.1f} / {statistics.median(cpu):.1f} / {cpu[-1]:.1f});"
        f" total failures {failures}; seeds over 15 s of CPU: {sum(t >= 15 for t in cpu)}"
    )
    return 0 if failures == 0 else 1


def _print_rows(outcomes) -> list[dict]:
    rows = []
    for r in outcomes:
        rows.append(r)
        print(
            f"{r['seed']:>5} {r['realised']:>9} {r['realisable']:>10} {r['enumerated']:>10} {r['excluded']:>8}"
            f" {len(r['failures']):>8} {r['seconds']:>8.1f} {r['cpu_seconds']:>6.1f}",
            flush=True,
        )
        for failure in r["failures"]:
            print(f"      {failure}", flush=True)
    return rows


if __name__ == "__main__":
    sys.exit(main())
