"""How fast the verbs that read results answer, cold and warm, against scoring alone: ``leaderboard``,
``evaluate``, ``report``, ``view`` (start-up to the first page answered) and
``sopbench.results.episodes_frame``, on a set of sources (by default the published trajectories,
14,567 runs).

    .venv/bin/python benchmarks/results_speed.py [--sources DIR ...] [--scratch DIR]
        [--only leaderboard,evaluate,report,view,episodes_frame] [--protocol sound] [--json]

Each verb runs as a user runs it, in its own process (``python -m sopbench.cli ...``; the frame in a
process that calls the library), twice: cold, with ``SOPBENCH_CACHE_DIR`` naming a fresh empty
folder, then warm, with the same folder again and nothing changed. Measured per run: CPU (the
child's user + system time, from ``os.wait4``), wall time, and peak memory (the child's maximum
resident set). ``view`` is started on a free port of 127.0.0.1 and its index page polled until it
answers: its wall time is from the process start to that answer, its CPU what the process used until
it was stopped right after. The floor, measured in the same run, is scoring the same sources with
the library alone (``score_paths``, or a run folder's stored verdicts) in a fresh process: no verb
can read and score them in less. The outputs of the cold and warm runs (the files written, what was
printed on standard output, the first page of ``view``) are compared byte for byte.

The goals (issue: "results as data frames, a verdict cache"), each printed with its figure and
PASS or FAIL: cold, ``leaderboard`` <= 1.5x the CPU of scoring alone, ``report`` <= 12 s CPU, peak
memory <= 400 MB (every run); warm, ``leaderboard`` and ``evaluate`` <= 1.5 s CPU, ``report`` <= 5 s
CPU, ``view`` first page <= 3 s wall from start, ``episodes_frame`` <= 1.5 s CPU; every output
byte-identical cold and warm. The scratch folder (default: a temporary one, removed at the end) holds
the cache and the outputs; ``--scratch DIR`` keeps them (DIR must be empty or new).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEV_SET = REPO.parent / "shared" / "sopbench" / "trajectories"
VERBS = ("leaderboard", "evaluate", "report", "view", "episodes_frame")
CACHE_ENV = "SOPBENCH_CACHE_DIR"

FLOOR = """
import sys
from pathlib import Path
from sopbench.results import Sources, read_run_folder
from sopbench.scoring import protocol_by_name, score_paths
protocol = protocol_by_name(sys.argv[1])
found = Sources.of([Path(p) for p in sys.argv[2:]])
runs = sum(len(read_run_folder(folder, protocol).scores) for folder in found.run_folders)
runs += sum(1 for _ in score_paths(list(found.files), protocol))
print(runs)
"""

FRAME = """
import sys
from sopbench.results import episodes_frame, write_parquet
frame = episodes_frame(sys.argv[3:], sys.argv[2])
with open(sys.argv[1], "wb") as sink:
    write_parquet(frame, sink)
print(len(frame))
"""


@dataclass
class Measure:
    """One process: its CPU (user + system), wall time and peak memory, and how it ended."""

    cpu_s: float
    wall_s: float
    peak_mb: float
    exit_code: int
    outputs: list[str] = field(default_factory=list)  # the files to compare, cold against warm


def child_env(cache: Path | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    if cache is not None:
        env[CACHE_ENV] = str(cache)
    return env


def measured(argv: list[str], cache: Path | None, stdout: Path, stderr: Path) -> Measure:
    """Run ``argv`` to its end; its own resource use (``os.wait4``: this child and what it waited for)."""
    started = time.perf_counter()
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=child_env(cache), cwd=REPO)
        _pid, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return Measure(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, process.returncode)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def measured_view(sources: list[str], protocol: str, cache: Path, page: Path, stderr: Path) -> Measure:
    """``sopbench view`` from its start to its first page answered; then stopped (Ctrl-C)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    argv = [
        sys.executable,
        "-m",
        "sopbench.cli",
        "view",
        *sources,
        "--port",
        str(port),
        "--host",
        "127.0.0.1",
    ]
    started = time.perf_counter()
    with stderr.open("wb") as err:
        process = subprocess.Popen(
            [*argv, "--protocol", protocol],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=child_env(cache),
            cwd=REPO,
        )
        body = None
        try:
            while body is None:
                if process.poll() is not None:
                    raise SystemExit(
                        f"sopbench view ended (exit {process.returncode}) before answering: see {stderr}"
                    )
                try:
                    with urllib.request.urlopen(url, timeout=60) as answer:
                        body = answer.read()
                except (urllib.error.URLError, ConnectionError):
                    time.sleep(0.05)
            wall = time.perf_counter() - started
        finally:
            process.send_signal(signal.SIGINT)
            _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    # The page names its own address (the port of each start): compared without it.
    page.write_bytes(body.replace(f"127.0.0.1:{port}".encode(), b"127.0.0.1:PORT"))
    return Measure(
        usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, process.returncode, [page.name]
    )


def run_verb(verb: str, sources: list[str], protocol: str, cache: Path, folder: Path) -> Measure:
    """One verb, its outputs in ``folder`` (cold/ or warm/)."""
    folder.mkdir(parents=True, exist_ok=True)
    out, err = folder / f"{verb}.stdout", folder / f"{verb}.stderr"
    cli = [sys.executable, "-m", "sopbench.cli"]
    if verb == "view":
        return measured_view(sources, protocol, cache, folder / "view-first-page.html", err)
    if verb == "leaderboard":
        files = ["leaderboard.json"]
        argv = [
            *cli,
            "leaderboard",
            *sources,
            "--protocol",
            protocol,
            "--format",
            "json",
            "-o",
            str(folder / files[0]),
        ]
    elif verb == "evaluate":
        files = ["verdicts.jsonl"]
        argv = [*cli, "evaluate", *sources, "--protocol", protocol, "-o", str(folder / files[0]), "--json"]
    elif verb == "report":
        files = ["report.html"]
        argv = [*cli, "report", *sources, "--protocol", protocol, "-o", str(folder / files[0])]
    else:
        files = ["episodes.parquet"]
        argv = [sys.executable, "-c", FRAME, str(folder / files[0]), protocol, *sources]
    result = measured(argv, cache, out, err)
    result.outputs = [*files, out.name]
    return result


def same_outputs(cold: Path, warm: Path, names: list[str]) -> list[str]:
    """The outputs that differ between the cold and the warm run (none: byte-identical)."""
    return [name for name in names if not filecmp.cmp(cold / name, warm / name, shallow=False)]


@dataclass
class Goal:
    what: str
    measured: float | None
    limit: float
    unit: str

    @property
    def passed(self) -> bool | None:
        return None if self.measured is None else self.measured <= self.limit


def goals(
    floor: Measure, cold: dict[str, Measure], warm: dict[str, Measure], differing: dict[str, list[str]]
) -> list[Goal]:
    def cpu(runs: dict[str, Measure], verb: str) -> float | None:
        return runs[verb].cpu_s if verb in runs else None

    leaderboard = cpu(cold, "leaderboard")
    found = [
        Goal(
            "cold leaderboard CPU / scoring alone",
            None if leaderboard is None else leaderboard / floor.cpu_s,
            1.5,
            "x",
        ),
        Goal("cold report CPU", cpu(cold, "report"), 12.0, "s"),
        Goal(
            "peak memory of every run (cold and warm)",
            max((m.peak_mb for m in [*cold.values(), *warm.values()]), default=None),
            400.0,
            "MB",
        ),
        Goal("warm leaderboard CPU", cpu(warm, "leaderboard"), 1.5, "s"),
        Goal("warm evaluate CPU", cpu(warm, "evaluate"), 1.5, "s"),
        Goal("warm report CPU", cpu(warm, "report"), 5.0, "s"),
        Goal(
            "warm view: first page, wall from start",
            warm["view"].wall_s if "view" in warm else None,
            3.0,
            "s",
        ),
        Goal("warm episodes_frame CPU", cpu(warm, "episodes_frame"), 1.5, "s"),
        Goal(
            "outputs that differ cold vs warm", float(sum(len(names) for names in differing.values())), 0, ""
        ),
    ]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", nargs="+", default=[str(DEV_SET)], metavar="PATH")
    parser.add_argument(
        "--scratch", type=Path, help="Keep the cache and outputs here (an empty or new folder)."
    )
    parser.add_argument("--only", help="Comma-separated verbs among " + ", ".join(VERBS) + " (default: all).")
    parser.add_argument("--protocol", default="sound")
    parser.add_argument("--json", action="store_true", help="Print one JSON document instead of the tables.")
    args = parser.parse_args()
    verbs = VERBS if args.only is None else tuple(v.strip() for v in args.only.split(","))
    unknown = [v for v in verbs if v not in VERBS]
    if unknown:
        parser.error(f"--only {','.join(unknown)}: choose among {', '.join(VERBS)}")
    sources = [str(Path(s).resolve()) for s in args.sources]
    for source in sources:
        if not Path(source).exists():
            parser.error(f"{source}: no such file or folder")

    temporary = None
    if args.scratch is None:
        temporary = tempfile.TemporaryDirectory(prefix="results-speed-")
        scratch = Path(temporary.name)
    else:
        scratch = args.scratch
        if scratch.exists() and any(scratch.iterdir()):
            parser.error(f"--scratch {scratch}: not empty (the cold runs need an empty cache)")
        scratch.mkdir(parents=True, exist_ok=True)
    try:
        floor_out = scratch / "floor.stdout"
        floor = measured(
            [sys.executable, "-c", FLOOR, args.protocol, *sources], None, floor_out, scratch / "floor.stderr"
        )
        if floor.exit_code != 0:
            raise SystemExit(f"scoring alone failed (exit {floor.exit_code}): see {scratch / 'floor.stderr'}")
        runs = int(floor_out.read_text().split()[-1])
        cold: dict[str, Measure] = {}
        warm: dict[str, Measure] = {}
        for verb in verbs:
            # each verb cold on a cache of its own, empty (a verb run after another would otherwise
            # find the verdicts the first one stored, and its "cold" figure would be a warm one),
            # then warm on the cache its cold run filled
            cache = scratch / "cache" / verb
            cache.mkdir(parents=True)
            cold[verb] = run_verb(verb, sources, args.protocol, cache, scratch / "cold")
            warm[verb] = run_verb(verb, sources, args.protocol, cache, scratch / "warm")
        differing = {v: same_outputs(scratch / "cold", scratch / "warm", cold[v].outputs) for v in verbs}
        checked = goals(floor, cold, warm, differing)
        if args.json:
            document = {
                "sources": sources,
                "protocol": args.protocol,
                "runs_scored_by_the_floor": runs,
                "floor": asdict(floor),
                "cold": {v: asdict(m) for v, m in cold.items()},
                "warm": {v: asdict(m) for v, m in warm.items()},
                "differing_outputs": differing,
                "goals": [{**asdict(g), "passed": g.passed} for g in checked],
            }
            print(json.dumps(document, indent=2))
        else:
            print_tables(sources, args.protocol, runs, floor, cold, warm, differing, checked)
    finally:
        if temporary is not None:
            temporary.cleanup()


def print_tables(sources, protocol, runs, floor, cold, warm, differing, checked) -> None:
    print(
        f"sources: {' '.join(sources)}; protocol {protocol}; {runs} runs; cache: {CACHE_ENV}, empty for each verb's cold run"
    )
    print()
    print(
        "| verb | cold CPU s | cold wall s | cold peak MB | warm CPU s | warm wall s | warm peak MB | cold CPU / floor | exit codes | outputs cold = warm |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(
        f"| floor: scoring alone (library, fresh process) | {floor.cpu_s:.2f} | {floor.wall_s:.2f} | {floor.peak_mb:.0f} "
        f"| | | | 1.00x | {floor.exit_code} | |"
    )
    for verb in cold:
        c, w = cold[verb], warm[verb]
        label = "view (start to first page)" if verb == "view" else verb
        same = "yes" if not differing[verb] else "no: " + ", ".join(differing[verb])
        print(
            f"| {label} | {c.cpu_s:.2f} | {c.wall_s:.2f} | {c.peak_mb:.0f} | {w.cpu_s:.2f} | {w.wall_s:.2f} "
            f"| {w.peak_mb:.0f} | {c.cpu_s / floor.cpu_s:.2f}x | {c.exit_code}/{w.exit_code} | {same} |"
        )
    print()
    print("| goal | measured | target | result |")
    print("|---|---|---|---|")
    for goal in checked:
        shown = (
            "not run"
            if goal.measured is None
            else f"{goal.measured:.2f}{' ' + goal.unit if goal.unit else ''}"
        )
        target = f"<= {goal.limit:g}{' ' + goal.unit if goal.unit else ''}"
        result = {True: "PASS", False: "FAIL", None: "-"}[goal.passed]
        print(f"| {goal.what} | {shown} | {target} | {result} |")


if __name__ == "__main__":
    main()
