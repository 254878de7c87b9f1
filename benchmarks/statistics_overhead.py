"""What the statistics add to ``sopbench evaluate`` over every dev trajectory (target: < 10%).

    .venv/bin/python benchmarks/statistics_overhead.py [TRAJECTORY_DIR] [--protocol sound|sopbench]

Baseline, measured in the same run: what evaluate does per run without the statistics, i.e. every
run of every file scored (``score_paths``, caches cold at the start as for a fresh process) and
its JSON line encoded. Then, on those very scores, the statistics evaluate adds: the summary per
configuration (Wilson intervals, the balanced interval, pass^k / pass@k / first-k pass@k), the three
breakdowns, tokens and latency, the JSON document and the tables; timed three times, the fastest
kept (the scores are in memory, so nothing is re-scored). The ratio is (baseline + statistics) /
baseline.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import orjson

from sopbench.report import EvaluationReport
from sopbench.results import Evaluation, configuration_summaries
from sopbench.scoring import ScoringReport, cold_caches, protocol_by_name, score_paths

DEFAULT_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "sopbench" / "trajectories"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trajectories", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--protocol", default="sopbench")
    args = parser.parse_args()
    protocol = protocol_by_name(args.protocol)
    scoring = ScoringReport()
    with cold_caches():
        start = time.perf_counter()
        scores = []
        size = 0
        for score in score_paths(args.trajectories, protocol, report=scoring):
            size += len(orjson.dumps(score.to_json(), option=orjson.OPT_NON_STR_KEYS))
            scores.append(score)
        baseline = time.perf_counter() - start
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        evaluation = Evaluation(
            protocol=str(protocol), configurations=configuration_summaries(scores), scoring=scoring
        )
        report = EvaluationReport(evaluation, by=("goal", "judgement", "constraint"))
        document = orjson.dumps(report.as_dict())
        tables = "".join(table.markdown() for table in report.tables())
        timings.append(time.perf_counter() - start)
    statistics = min(timings)
    print(
        f"runs scored: {len(scores)} in {scoring.files} files, {len(evaluation.configurations)} configurations"
    )
    print(
        f"JSON lines: {size / 1e6:.1f} MB; summary document: {len(document) / 1e3:.0f} kB; tables: {len(tables) / 1e3:.0f} kB"
    )
    print(f"baseline (score every run, encode its line): {baseline:.2f} s")
    print(
        f"statistics (summaries, intervals, pass^k, breakdowns, usage, document, tables): {statistics:.3f} s"
    )
    print(f"ratio (baseline + statistics) / baseline: {(baseline + statistics) / baseline:.3f}")


if __name__ == "__main__":
    main()
