"""Score every dev trajectory under both protocols and compare with a per-trajectory baseline.

    .venv/bin/python benchmarks/score_all.py [TRAJECTORY_DIR] [--baseline-every N] [--original DIR]
    env time -v .venv/bin/python benchmarks/score_all.py      # peak memory ("Maximum resident set size")

Files are streamed one at a time (read, scored under compat and sound, then dropped). The baseline
is a straightforward re-implementation of the published evaluator's per-trajectory work, timed on
the same loaded records in the same process: before every trajectory it throws away everything
derived from the domain (default dependency tables, action graphs, innate implications, cached
readings of tool outputs), deep-copies the task's database and graph with ``copy.deepcopy`` (as the
published code did), and then scores the trajectory with the compat protocol. It is timed on every
N-th run (default 10) to keep the benchmark short; its per-run time is what the ratio divides.
The scorer's own caches (verdicts kept by content, per-task facts, graphs, readings) are emptied
before each baseline trajectory and put back afterwards, so the baseline never profits from them
and the scorer never loses them. Loading time includes freeing the previous file's records
(replaced once the next file is loaded). Importing the domain modules happens once before any timing
(the published evaluator imports its domains when it starts, too) and is printed as set-up.

With ``--original DIR`` (a checkout of the published code, github.com/Leezekun/SOPBench; it needs
only the standard library) the published evaluator itself is the baseline: each file is also read
the way its evaluation script read it (the standard library's ``json``), and every N-th run is
scored by its ``evaluator_function_directed_graph`` after the script's own preparation of the
calls (each message's first call, its arguments and its output read as Python). Those per-run
times, and the file reading spread over the file's runs, give the ratios that the speed target is
about; how often the original's verdict agrees with the compat protocol's is printed beside them.

The last line divides the published evaluator's ~8.5 ms per trajectory (a figure from
../shared/sopbench/README.md, measured on another machine) by the per-run times measured here. It
is only a hint: the ratios to the original measured in the same run are the ones to quote, since
the two machines differ (ours ran the original at 15-23 ms per trajectory).
"""

from __future__ import annotations

import argparse
import copy
import gzip
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from sopbench.domains import action_graph, default_dependencies, domain_names, expanded_innate, get_domain
from sopbench.scoring import SOPBENCH, SOUND, cold_caches, episode_calls, load_records, score_run
from sopbench.traces import decode_arguments, detect_output_format, iter_trajectory_files

DEFAULT_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "sopbench" / "trajectories"
PUBLISHED_MS_PER_RUN = 8.5  # the original evaluator on a 2-core machine (../shared/sopbench/README.md)


def baseline_score(record, run_index: int, output_format: str) -> None:
    """The published evaluator's per-trajectory work: rebuild what it rebuilt, deep-copy what it copied.

    Per trajectory it derived the default dependency table and deep-copied the database and the
    task graph; per scored call of a tool outside the task graph it derived the default tables again
    and built that tool's action graph; per passing call with an innate check it expanded that check.
    Then the verdict itself (here: the compat protocol with every cache emptied and the domain
    tables derived anew; ``cold_caches`` puts the scorer's own caches back afterwards).
    """
    # The caller has emptied every cache (``cold_caches``): tables and verdicts are derived anew.
    domain = get_domain(record.domain)
    catalogue = domain.catalogue
    task = record.task
    default_dependencies(catalogue, "full", expanded=True)
    copy.deepcopy(task.initial_database)
    copy.deepcopy(task.directed_action_graph)
    in_task_graph = task.directed_action_graph.function_names()
    calls, _executed = episode_calls(record.runs[run_index], SOPBENCH)
    for call in calls:
        if call.name not in domain.tools:
            continue
        copy.deepcopy(
            decode_arguments(call.arguments)[0] if isinstance(call.arguments, str) else call.arguments
        )
        if call.name not in in_task_graph:
            defaults = default_dependencies(catalogue, "full", expanded=False)
            action_graph(catalogue, call.name, defaults.get(call.name), defaults)
        expanded_innate(catalogue, call.name)
    score_run(record, run_index, SOPBENCH, output_format=output_format)


class OriginalEvaluator:
    """The published evaluator, imported from a checkout of its repository (never copied here)."""

    NO_CALL_NAMES = ("n/a", "na", "none", "null")  # names its evaluation script dropped before scoring

    def __init__(self, checkout: Path) -> None:
        if not (checkout / "env" / "evaluator.py").is_file():
            raise SystemExit(
                f"--original {checkout}: no env/evaluator.py (expected a checkout of Leezekun/SOPBench)"
            )
        sys.path.insert(0, str(checkout))
        self.evaluate = importlib.import_module("env.evaluator").evaluator_function_directed_graph
        self.load_s = self.score_s = 0.0
        self.runs = self.agree = self.crashes = 0

    def load(self, path: Path) -> list[dict[str, Any]]:
        """The file as its evaluation script read it (``json`` from the standard library), timed."""
        start = time.perf_counter()
        data = path.read_bytes()
        records = json.loads(gzip.decompress(data) if path.name.endswith(".gz") else data) or []
        self.load_s += time.perf_counter() - start
        return records

    def score(self, record: dict[str, Any], run_index: int, ours: bool) -> None:
        """One run, prepared and judged as the published evaluation script did; timed."""
        log = record["interactions"][run_index]
        start = time.perf_counter()
        messages = log["interaction"]
        calls = []
        for position in range(len(messages) - 1):
            tool_calls = messages[position].get("tool_calls") or []
            kept = [call for call in tool_calls if call["function"]["name"].lower() not in self.NO_CALL_NAMES]
            if kept:
                calls.append(
                    {
                        "tool_name": messages[position + 1]["tool_name"],
                        "arguments": _python_or_text(kept[0]["function"]["arguments"]),
                        "content": _python_or_text(messages[position + 1]["content"]),
                    }
                )
        try:
            result = self.evaluate(
                domain_str=record["domain"],
                task=record["task"],
                log_msg_fcall=messages,
                func_calls=calls,
                results={"final_database": log["database"]},
                default_constraint_option="full",
            )
        except Exception:  # noqa: BLE001 - the published evaluator crashes on some runs; counted
            result = None
            self.crashes += 1
        self.score_s += time.perf_counter() - start
        self.runs += 1
        self.agree += result is not None and bool(result.get("success")) == ours


def _python_or_text(text: Any) -> Any:
    """How the published script read arguments and outputs: as a Python literal when possible."""
    try:
        return eval(text)  # noqa: S307 - the published behaviour being timed
    except Exception:  # noqa: BLE001
        return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=str(DEFAULT_DIR))
    parser.add_argument("--baseline-every", type=int, default=10, help="time the baseline on every N-th run")
    parser.add_argument(
        "--original", type=Path, help="a checkout of Leezekun/SOPBench: time its evaluator as the baseline"
    )
    args = parser.parse_args()
    original = OriginalEvaluator(args.original) if args.original else None
    # Importing the domains is set-up, as importing its modules is for the published evaluator
    # (which imports every domain at start); deriving their tables is left to the timed scoring.
    start = time.perf_counter()
    for name in domain_names():
        get_domain(name)
    print(f"set-up (importing {len(domain_names())} domains, once) {time.perf_counter() - start:.2f} s")

    load_s = compat_s = sound_s = baseline_s = 0.0
    runs = baseline_runs = files = 0
    errors: list[str] = []
    for path in iter_trajectory_files(args.path):
        start = time.perf_counter()
        records = load_records(path, on_error=lambda error: errors.append(str(error)))
        fmt = detect_output_format(records)
        load_s += time.perf_counter() - start
        files += 1
        pairs = [(record, index) for record in records for index in range(len(record.runs))]
        runs += len(pairs)
        compat_success: list[bool] = []
        for protocol in (SOPBENCH, SOUND):
            start = time.perf_counter()
            for record, index in pairs:
                scored = score_run(record, index, protocol, output_format=fmt)
                if protocol is SOPBENCH:
                    compat_success.append(scored.verdict["success"])
            elapsed = time.perf_counter() - start
            if protocol is SOPBENCH:
                compat_s += elapsed
            else:
                sound_s += elapsed
        sample = pairs[:: args.baseline_every]
        with cold_caches() as forget:
            start = time.perf_counter()
            for record, index in sample:
                forget()  # the published evaluator judged every trajectory afresh
                baseline_score(record, index, fmt)
            baseline_s += time.perf_counter() - start
        baseline_runs += len(sample)
        if original is not None:
            raw = original.load(path)
            for position in range(0, len(pairs), args.baseline_every):
                record, index = pairs[position]
                original.score(raw[record.index], index, compat_success[position])
            del raw

    def per_run(seconds: float, count: int = runs) -> float:
        return seconds / count * 1000 if count else float("nan")

    baseline_ms = per_run(baseline_s, baseline_runs)
    print(f"files {files}, runs {runs}, load errors {len(errors)}")
    print(f"loading                 {load_s:7.2f} s  {per_run(load_s):.3f} ms/run")
    for name, seconds in (("compat (sopbench)", compat_s), ("sound", sound_s)):
        with_load = seconds + load_s
        print(
            f"{name:<18}      {seconds:7.2f} s  {per_run(seconds):.3f} ms/run  {runs / seconds:8.0f} runs/s"
            f"  | with loading {per_run(with_load):.3f} ms/run  {runs / with_load:7.0f} runs/s"
        )
    print(f"baseline (rebuild + deepcopy, {baseline_runs} runs) {baseline_ms:.3f} ms/run")
    compat_ms, compat_load_ms = per_run(compat_s), per_run(compat_s + load_s)
    print(
        f"ratio baseline / compat: {baseline_ms / compat_ms:.1f}x scoring, {(baseline_ms + per_run(load_s)) / compat_load_ms:.1f}x with loading"
    )
    sound_ms, sound_load_ms = per_run(sound_s), per_run(sound_s + load_s)
    if original is not None:
        original_ms = per_run(original.score_s, original.runs)
        original_load_ms = per_run(original.load_s)
        print(
            f"original evaluator ({original.runs} runs): scoring {original_ms:.3f} ms/run, "
            f"its loading {original_load_ms:.3f} ms/run; {original.crashes} crashed; "
            f"success agrees with compat on {original.agree}/{original.runs}"
        )
        print(
            f"ratio original / compat: {original_ms / compat_ms:.1f}x scoring, "
            f"{(original_ms + original_load_ms) / compat_load_ms:.1f}x with loading; "
            f"/ sound: {original_ms / sound_ms:.1f}x scoring, "
            f"{(original_ms + original_load_ms) / sound_load_ms:.1f}x with loading"
        )
    print(
        f"ratio published figure ({PUBLISHED_MS_PER_RUN} ms/run, not measured here) / compat: "
        f"{PUBLISHED_MS_PER_RUN / compat_ms:.1f}x scoring, {PUBLISHED_MS_PER_RUN / compat_load_ms:.1f}x with loading"
        f"; / sound: {PUBLISHED_MS_PER_RUN / sound_ms:.1f}x scoring, {PUBLISHED_MS_PER_RUN / sound_load_ms:.1f}x with loading"
    )


if __name__ == "__main__":
    main()
