"""Build time and size of ``sopbench report`` on the dev set and on a run folder of the reference agent.

    .venv/bin/python benchmarks/report_build.py [--trajectories DIR] [--tasks DIR] [--skip-dev]

Baseline, measured in the same run: ``sopbench leaderboard`` (``sopbench.results.leaderboard``) over
the same sources, i.e. reading and scoring them; the ratio says what the report adds (figures, paired
comparisons, breakdowns, the page; with ``--embed-episodes`` every episode drawn). The run folder
(903 episodes: every published task once, agent ``reference``) is made in a temporary folder.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from sopbench.report import build_html_report
from sopbench.results import ScoringOptions, Sources, leaderboard, report_leaderboard
from sopbench.runner import RunSpec, run
from sopbench.tasks import iter_all_tasks

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "sopbench"


def measure(name: str, sources: list[Path], tasks_dir: Path, embed: bool) -> None:
    found = Sources.of(sources)
    options = ScoringOptions(floor_tasks=tuple(iter_all_tasks(tasks_dir)))
    started = time.perf_counter()
    leaderboard(found, options)
    baseline = time.perf_counter() - started
    started = time.perf_counter()
    built = build_html_report(report_leaderboard(found, options), found, embed_episodes=embed)
    elapsed = time.perf_counter() - started
    size = len(built.html.encode())
    print(
        f"{name}{' --embed-episodes' if embed else ''}: {built.episodes} runs, {len(built.rows)} rows, "
        f"{len(built.comparisons)} comparisons; built in {elapsed:.1f} s (leaderboard alone {baseline:.1f} s, "
        f"{elapsed / baseline:.2f}x); {size / 1e6:.2f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=Path, default=SHARED / "trajectories")
    parser.add_argument("--tasks", type=Path, default=SHARED / "tasks")
    parser.add_argument("--skip-dev", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "reference"
        run(RunSpec(agent="reference", tasks=args.tasks, output=folder, baselines=False))
        for embed in (False, True):
            measure("run folder of the reference agent", [folder], args.tasks, embed)
    if not args.skip_dev:
        measure("dev set", [args.trajectories], args.tasks, False)


if __name__ == "__main__":
    main()
