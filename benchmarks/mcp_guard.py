"""``sopbench run --via mcp --guard`` against the issue's claims: no-verify makes 0 unverified
executions, and the reference policy gets 0 false refusals with the verdicts of ``run``.

Usage: python benchmarks/mcp_guard.py SCRATCH_DIR [--domain D]  (needs the mcp extra; default: every
published domain of the generated set). Plays the reference policy directly and through the guard
proxy, and no-verify through the guard proxy and with --env-mode guard; an execution is unverified
when the guard, replayed on the stored executed calls, does not allow it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from sopbench.guard import Guard, ToolCall
from sopbench.runner import RunSpec, read_run
from sopbench.runner.episode import select_tasks

REFUSED = "refused by the guard: "


def play(output: Path, agent: str, domain: str, *extra: str) -> tuple[list, float]:
    started = time.perf_counter()
    argv = [sys.executable, "-m", "sopbench.cli", "run", "--agent", agent, "--domain", domain,
            "--no-baselines", "--output", str(output), *extra]  # fmt: skip
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    rows = sorted(read_run(output, records=False).rows, key=lambda r: (r.task_id, r.run))
    return rows, time.perf_counter() - started


def unverified(rows: list, domain: str) -> int:
    tasks = {i: t for t, i in select_tasks(RunSpec(agent="reference", domains=domain, output="unused"))}
    count = 0
    for row in rows:
        session = Guard.for_task(tasks[row.task_id]).session()
        for call in row.tool_calls:
            if call.get("refused") or call["problem"] is not None:
                continue
            count += not session.check(ToolCall(call["name"], call["arguments"])).allowed
            session.record(ToolCall(call["name"], call["arguments"], call["output"], True))
    return count


def refusals(rows: list) -> int:
    return sum(1 for r in rows for p in r.problems if str(p).startswith(REFUSED))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("scratch", type=Path)
    parser.add_argument("--domain", default="all")
    args = parser.parse_args()
    out, domain = args.scratch, args.domain
    ref, ref_s = play(out / "reference-direct", "reference", domain)
    ref_g, ref_g_s = play(out / "reference-mcp-guard", "reference", domain, "--via", "mcp", "--guard")
    nv_g, nv_g_s = play(out / "no-verify-mcp-guard", "no-verify", domain, "--via", "mcp", "--guard")
    nv_d, _ = play(out / "no-verify-env-guard", "no-verify", domain, "--env-mode", "guard")
    key = [(r.task_id, r.run, r.status, r.end_reason, r.passed, r.verdict) for r in ref]
    same = key == [(r.task_id, r.run, r.status, r.end_reason, r.passed, r.verdict) for r in ref_g]
    executed = [[(c["name"], c["arguments"]) for c in r.tool_calls if not c.get("refused")] for r in nv_d]
    print(f"reference direct: {len(ref)} episodes, {sum(bool(r.passed) for r in ref)} passed, {ref_s:.0f} s")
    print(f"reference --via mcp --guard: {len(ref_g)} episodes, {sum(bool(r.passed) for r in ref_g)} passed, "
          f"{refusals(ref_g)} refusals, {unverified(ref_g, domain)} unverified executions, verdicts "
          f"{'identical' if same else 'DIFFERENT'}, {ref_g_s:.0f} s")  # fmt: skip
    print(f"no-verify --via mcp --guard: {len(nv_g)} episodes, {refusals(nv_g)} refusals, "
          f"{unverified(nv_g, domain)} unverified executions, executed calls "
          f"{'identical to' if executed == [[(c['name'], c['arguments']) for c in r.tool_calls] for r in nv_g] else 'DIFFERENT from'} "
          f"--env-mode guard's, {nv_g_s:.0f} s")  # fmt: skip
    print(
        f"no-verify --env-mode guard: {len(nv_d)} episodes, {unverified(nv_d, domain)} unverified executions"
    )


if __name__ == "__main__":
    main()
