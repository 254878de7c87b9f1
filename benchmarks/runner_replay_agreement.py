"""The replay agent over recorded trajectories: does our runner reproduce each recorded run?

For every run of every record, the replay agent plays the recorded assistant turns through our
runner (our environment answers the calls; the record's own task and tool list). Per run we compare:

- calls: the executed calls (name and argument text, in order) equal the recorded answered calls;
- verdict: the sound verdict of our live episode equals the sound verdict ``sopbench evaluate``
  gives the recording (all eleven keys), and the pass/fail alone.

Usage: python benchmarks/runner_replay_agreement.py ../shared/sopbench/trajectories
       [--misaligned ../shared/sopbench/misaligned_files.csv] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import sys
import time
from collections import Counter
from pathlib import Path

from sopbench.agents import NoUser, Replay
from sopbench.domains import get_domain, published_offer
from sopbench.runner import Limits
from sopbench.runner.episode import episode_setup, run_episode, score_finished_episode
from sopbench.scoring import SOUND, ScoringError, load_records, score_run
from sopbench.traces import detect_output_format, iter_trajectory_files


async def replay_file(path: Path, counts: Counter, differences: list[str], misaligned: bool) -> None:
    records = load_records(path, on_error=lambda e: differences.append(f"load: {e}"))
    fmt = detect_output_format(records)
    # The tools the original offered in this file: its published list plus any tool the recordings
    # show answered (older runs were offered internal_get_database).
    answered = {
        step.call.name
        for record in records
        for run in record.runs
        for step in run.tool_steps()
        if step.output_text is not None and not step.output_text.startswith("Error: Tool ")
    }
    for record in records:
        tool_list = record.setup.tool_list if record.setup.tool_list in ("full", "oracle") else "full"
        for index, recorded in enumerate(record.runs):
            counts["runs"] += 1
            try:
                theirs = score_run(record, index, SOUND, output_format=fmt)
            except ScoringError as exc:
                counts["recording_not_scorable"] += 1
                differences.append(
                    f"{path.name} record {record.index} run {index}: recording not scorable: {exc}"
                )
                continue
            task_id = f"{record.domain}/{record.task.goal}[record {record.index}]"
            tools = published_offer(get_domain(record.task.domain), record.task, tool_list, answered)
            setup = episode_setup(record.task, task_id, tool_list, 0, index, tool_names=tools)
            result = await run_episode(setup, Replay.of_run(recorded), NoUser(), Limits())
            if result.status != "completed":
                counts["infra_error"] += 1
                differences.append(f"{path.name} record {record.index} run {index}: {result.reason}")
                continue
            ours = score_finished_episode(
                record.task, result.messages, result.final_database, tool_list=tool_list
            ).sound
            recorded_calls = [
                (s.call.name, s.call.arguments_text)
                for s in recorded.tool_steps()
                if s.output_text is not None
            ]
            our_calls = [(c.name, c.arguments_text) for c in result.calls]
            counts["calls_reproduced"] += our_calls == recorded_calls
            counts["passed_agree"] += ours.passed == theirs.passed
            counts["verdict_agree"] += ours.verdict == theirs.verdict
            if not misaligned:
                counts["aligned_runs"] += 1
                counts["aligned_passed_agree"] += ours.passed == theirs.passed
                counts["aligned_verdict_agree"] += ours.verdict == theirs.verdict
            if ours.passed != theirs.passed:
                differences.append(
                    f"{path.name} record {record.index} run {index}: live {ours.passed} vs recording {theirs.passed}: "
                    f"{'; '.join(ours.explanations or theirs.explanations)[:300]}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--misaligned", type=Path, help="misaligned_files.csv: also report the agreement on the other files"
    )
    args = parser.parse_args()
    counts: Counter = Counter()
    differences: list[str] = []
    started = time.perf_counter()
    files = list(iter_trajectory_files(args.paths))
    skip: set[str] = set()
    if args.misaligned is not None:
        with args.misaligned.open(newline="") as handle:
            skip = {row["file"] for row in csv.DictReader(handle)}
    for path in files:
        name = path.name[:-3] if path.name.endswith(".gz") else path.name
        asyncio.run(replay_file(path, counts, differences, name in skip))
    elapsed = time.perf_counter() - started
    report = {"files": len(files), **counts, "seconds": round(elapsed, 1), "differences": differences}
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        return
    runs = counts["runs"] - counts["recording_not_scorable"] - counts["infra_error"]
    print(f"{len(files)} files, {counts['runs']} runs in {elapsed:.1f} s")
    for key in ("calls_reproduced", "passed_agree", "verdict_agree"):
        print(f"{key}: {counts[key]}/{runs} ({100 * counts[key] / max(runs, 1):.2f}%)")
    if args.misaligned is not None:
        aligned = counts["aligned_runs"]
        for key in ("aligned_passed_agree", "aligned_verdict_agree"):
            print(
                f"{key} (files without misaligned records): {counts[key]}/{aligned} ({100 * counts[key] / max(aligned, 1):.2f}%)"
            )
    print(
        f"not scorable recordings: {counts['recording_not_scorable']}, infra errors: {counts['infra_error']}"
    )
    for line in differences[:40]:
        print("  ", line)
    if len(differences) > 40:
        print(f"   ... and {len(differences) - 40} more")


if __name__ == "__main__":
    main()
