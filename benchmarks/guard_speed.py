"""The runtime guard's cost per check as a conversation grows: re-reading the history vs a session.

A domain's guard (``Guard.for_domain``, default bank) judges calls after a history of 0, 10, 100 and
1,000 earlier calls: the reference traces of the domain's tasks (published, or the generated set),
played on the lenient system for real outputs and put one after another. At each length it times,
per check, for allowed, refused and new-user calls (a refusal includes writing its explanation):

- old: ``Guard.check(call, history)``, which reads the whole history again (the baseline, measured
  in this run);
- session: ``GuardSession.check(call)`` on a session that has recorded the history;
- wrap: a tool wrapped with ``guard.wrap(tool, history)`` on a plain list (the guard follows the list
  with its own session); allowed calls run and are appended, so that history grows by one per
  allowed call measured.

Allowed calls are calls of the traces the guard allows at that point; refused calls are the
traces' non-read-only actions for a user no helper was asked about, checked again and again as in
a conversation; new-user calls are those refused calls each for a user of its own
(``nobody_asked_about_<n>``), so that none of the texts a guard keeps by the values they show
applies: the cost of a first refusal. Every decision of the session and of the wrapper
(explanation included) is checked to equal ``Guard.check``'s (for new-user calls, one in ten). It
prints p50 and p99 of wall time and of the thread's CPU time (which leaves out the time the process
waited for a core: on a shared machine wall-time tails are mostly other processes), the ratio
old/session at p50, and whether the target (p99 <= 0.1 ms at 1,000 earlier calls, for allowed,
refused and first-refused calls) holds.

Each cell is measured ``--rounds`` times (2,000 checks each by default; the old re-reading, which
takes milliseconds at 1,000 calls, 200) and every figure shown is the lowest of the rounds: other
processes on the machine only ever add time, so the quietest round is the guard's own cost.

Usage: python benchmarks/guard_speed.py [--domain bank] [--tasks ../shared/sopbench/tasks]
       [--repeat 2000] [--old-repeat 200] [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import functools
import gc
import inspect
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sopbench.diagnosis import reference_calls
from sopbench.domains import LenientSystem, get_domain
from sopbench.guard import Guard, Refused, ToolCall
from sopbench.tasks import iter_all_tasks

LENGTHS = (0, 10, 100, 1000)
KINDS = ("allowed", "refused", "new-user")
TARGET_MS = 0.1
UNKNOWN_USER = "nobody_asked_about"


def history_stream(domain_name: str, tasks_dir: Path, length: int) -> list[ToolCall]:
    """The domain's reference traces with their real outputs, one after another, repeated to ``length``."""
    domain = get_domain(domain_name)
    calls: list[ToolCall] = []
    for task in iter_all_tasks(tasks_dir):
        if task.domain != domain_name:
            continue
        system = LenientSystem(domain, task.initial_database, task.constraint_parameters)
        for tool, arguments in reference_calls(domain, task):
            outcome = system.execute(tool, arguments)
            calls.append(ToolCall(tool, arguments, outcome.content("value"), outcome.ok))
    if not calls:
        raise SystemExit(f"no {domain_name} tasks in {tasks_dir}")
    return [calls[i % len(calls)] for i in range(length)]


def probes(guard: Guard, stream: list[ToolCall], history: list[ToolCall]) -> dict[str, list[ToolCall]]:
    """Distinct calls the guard allows after ``history``, and actions it refuses (for an unknown user)."""
    allowed: dict[str, ToolCall] = {}
    refused: dict[str, ToolCall] = {}
    session = guard.session(history)  # sorting only; the timed decisions are compared with Guard.check
    distinct = {repr(call): call for call in stream}
    for call in distinct.values():
        asked = ToolCall(call.name, call.arguments)
        if session.check(asked).allowed:
            allowed.setdefault(repr(asked), asked)
        rule = guard.sop.rule(call.name)
        if rule is not None and rule.expr is not None and not rule.read_only:
            stranger = {
                k: UNKNOWN_USER if "user" in k or "name" in k else v for k, v in call.arguments.items()
            }
            other = ToolCall(call.name, stranger)
            if not session.check(other).allowed:
                refused.setdefault(repr(other), other)
    return {"allowed": list(allowed.values()), "refused": list(refused.values())}


def new_users(refused: list[ToolCall], count: int) -> list[ToolCall]:
    """``count`` of the ``refused`` calls in turn, each for a user of its own (``nobody_asked_about_<n>``)."""
    calls = []
    for n in range(count):
        call = refused[n % len(refused)]
        arguments = {k: f"{v}_{n}" if v == UNKNOWN_USER else v for k, v in call.arguments.items()}
        calls.append(ToolCall(call.name, arguments))
    return calls


def tool_for(call: ToolCall) -> Callable[..., Any]:
    """A tool with ``call``'s parameters that answers True at once (the guard's cost is what is timed)."""

    def tool(**arguments: Any) -> bool:
        return True

    tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY) for name in call.arguments]
    )
    tool.__name__ = call.name
    return tool


def timed(
    run: Callable[[ToolCall], Any], calls: list[ToolCall], repeat: int
) -> tuple[list[int], list[int], list[Any]]:
    """Wall and thread-CPU nanoseconds of ``run`` per call, ``repeat`` calls cycling through ``calls``."""
    walls, cpus, answers = [], [], []
    gc.collect()
    for i in range(repeat):
        call = calls[i % len(calls)]
        cpu, wall = time.thread_time_ns(), time.perf_counter_ns()
        answer = run(call)
        wall, cpu = time.perf_counter_ns() - wall, time.thread_time_ns() - cpu
        walls.append(wall)
        cpus.append(cpu)
        answers.append(answer)
    return walls, cpus, answers


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1e6


def wrapped_run(guard: Guard, history: list[ToolCall], calls: list[ToolCall]) -> Callable[[ToolCall], Any]:
    """Call ``call`` through a wrapped tool on ``history``: None when it ran, else the refusal."""
    tools = {call.name: guard.wrap(tool_for(call), history, name=call.name) for call in calls}
    guard.following(history)  # the guard reads a list it has not seen once, before the first check

    def run(call: ToolCall) -> Any:
        try:
            tools[call.name](**call.arguments)
            return None
        except Refused as refused:
            return refused.decision

    return run


def recheck(guard: Guard, history: list[ToolCall], call: ToolCall) -> Any:
    return guard.check(call, history)


def measure(
    guard: Guard, stream: list[ToolCall], repeat: int, old_repeat: int, measured: tuple[str, ...]
) -> list[dict[str, Any]]:
    """The cells of the ``measured`` kinds of calls, at each length."""
    rows = []
    for length in LENGTHS:
        history = stream[:length]
        kinds = probes(guard, stream, history)
        kinds["new-user"] = new_users(kinds["refused"], repeat) if kinds["refused"] else []
        session = guard.session(history)
        for kind, calls in kinds.items():
            if not calls or kind not in measured:
                continue
            # The definition, per distinct call (of the many new-user calls, one in ten).
            stride = 10 if kind == "new-user" else 1
            expected = {i: guard.check(calls[i], history) for i in range(0, len(calls), stride)}
            old = timed(functools.partial(recheck, guard, history), calls, min(repeat, old_repeat))
            new = timed(session.check, calls, repeat)
            checked = range(0, repeat, stride)
            assert [new[2][i] for i in checked] == [expected[i % len(calls)] for i in checked], (
                f"a session decided otherwise than Guard.check ({kind}, {length})"
            )
            followed = list(history)
            wrap = timed(wrapped_run(guard, followed, calls), calls, repeat)
            if kind != "allowed":  # allowed calls ran and grew the list: the refusals were all checked above
                assert [wrap[2][i] for i in checked] == [expected[i % len(calls)] for i in checked], (
                    f"a wrapped tool decided otherwise than Guard.check ({kind}, {length})"
                )
            row: dict[str, Any] = {"length": length, "kind": kind, "distinct_calls": len(calls)}
            for name, (walls, cpus, _) in (("old", old), ("session", new), ("wrap", wrap)):
                for clock, values in (("wall", walls), ("cpu", cpus)):
                    row[f"{name}_{clock}_p50_ms"] = percentile(values, 0.50)
                    row[f"{name}_{clock}_p99_ms"] = percentile(values, 0.99)
            row["ratio_p50_old_over_session"] = row["old_wall_p50_ms"] / row["session_wall_p50_ms"]
            rows.append(row)
    return rows


def quietest(rounds: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per cell and figure, the lowest over the rounds: what the guard costs when the machine lets it
    run (other processes only ever add time); ``rounds`` says how many were run."""
    best = []
    for cells in zip(*rounds, strict=True):
        row = dict(cells[0])
        for key in row:
            if key.endswith("_ms"):
                row[key] = min(cell[key] for cell in cells)
        row["ratio_p50_old_over_session"] = row["old_wall_p50_ms"] / row["session_wall_p50_ms"]
        row["rounds"] = len(cells)
        best.append(row)
    return best


def show(rows: list[dict[str, Any]], domain: str, history: int, repeat: int, old_repeat: int) -> None:
    load = os.getloadavg()
    rounds = rows[0]["rounds"]
    print(
        f"guard speed, {domain} domain guard; {repeat} checks per cell ({min(repeat, old_repeat)} for old), "
        f"{rounds} rounds, each figure the lowest of the rounds; "
        f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} cores"
    )
    print(f"history: {history} distinct reference calls of the domain's tasks, repeated to 1,000")
    for clock in ("wall", "cpu"):
        print(f"\n{clock} time per check, ms (p50 / p99)")
        print(f"{'earlier':>8} {'kind':>8} {'old':>17} {'session':>17} {'wrap':>17} {'old/session p50':>16}")
        for row in rows:
            cells = [
                f"{row[f'{n}_{clock}_p50_ms']:.3f} / {row[f'{n}_{clock}_p99_ms']:.3f}"
                for n in ("old", "session", "wrap")
            ]
            ratio = row[f"old_{clock}_p50_ms"] / row[f"session_{clock}_p50_ms"]
            print(
                f"{row['length']:>8} {row['kind']:>8} {cells[0]:>17} {cells[1]:>17} {cells[2]:>17} {ratio:>16.1f}"
            )
    print()
    # The target holds for every kind: the calls of a conversation (a refusal repeated, other actions
    # refusing the same parts for the same user) and first refusals (new-user calls: nothing kept
    # applies, the whole explanation is written).
    at_most = [row for row in rows if row["length"] == max(LENGTHS)]
    for clock in ("wall", "cpu"):
        verdicts = []
        for row in at_most:
            for name in ("session", "wrap"):
                p99 = row[f"{name}_{clock}_p99_ms"]
                verdicts.append(f"{name} {row['kind']} {p99:.3f} ms {'ok' if p99 <= TARGET_MS else 'MISSED'}")
        print(
            f"target p99 <= {TARGET_MS} ms at {max(LENGTHS):,} earlier calls ({clock}): "
            + "; ".join(verdicts)
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="bank")
    parser.add_argument(
        "--tasks",
        type=Path,
        default=None,
        help="published tasks (default: ../shared/sopbench/tasks, else the generated set)",
    )
    parser.add_argument("--repeat", type=int, default=2000, help="checks per cell and round")
    parser.add_argument(
        "--old-repeat", type=int, default=200, help="checks per cell of the old re-reading (slow at 1,000)"
    )
    parser.add_argument(
        "--rounds", type=int, default=5, help="measure every cell this many times; show the quietest"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    args = parser.parse_args()
    tasks_dir = args.tasks
    if tasks_dir is None:
        published = Path("../shared/sopbench/tasks")
        if published.exists():
            tasks_dir = published
        else:
            from sopbench.generation import default_tasks_dir

            tasks_dir = default_tasks_dir()
    stream = history_stream(args.domain, tasks_dir, max(LENGTHS) + 1)
    guard = Guard.for_domain(args.domain)
    # The new-user cells are measured after the others: their thousands of users would push the
    # refused calls' kept texts out of the guard (it keeps a few hundred per set of parts), and the
    # refused cells are a conversation's refusals (for one user, again and again).
    rows = []
    for measured in (("allowed", "refused"), ("new-user",)):
        rows += quietest(
            [measure(guard, stream, args.repeat, args.old_repeat, measured) for _ in range(args.rounds)]
        )
    rows.sort(key=lambda row: (row["length"], KINDS.index(row["kind"])))
    if args.json:
        print(json.dumps({"domain": args.domain, "load_average": os.getloadavg(), "rows": rows}))
    else:
        show(rows, args.domain, len({repr(c) for c in stream}), args.repeat, args.old_repeat)


if __name__ == "__main__":
    main()
