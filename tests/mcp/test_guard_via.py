"""``sopbench run --via mcp --guard``: the guard proxy between the agent's MCP client and ``sopbench
mcp serve``, on a slice of the generated set (the whole set: benchmarks/mcp_guard.sh). no-verify
executes nothing unverified and executes what ``--env-mode guard`` executes; the reference policy is
never refused and keeps the verdicts of ``run``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp.types", reason="the mcp extra is not installed (pip install 'sopbench[mcp]')")

from sopbench.guard import Guard, ToolCall  # noqa: E402
from sopbench.runner import RunSpec, read_run  # noqa: E402
from sopbench.runner.episode import select_tasks  # noqa: E402

SLICE = ["--domain", "bank", "--limit", "10", "--no-baselines", "--concurrency", "2"]
REFUSED = "refused by the guard: "


def _run(output: Path, agent: str, *extra: str) -> list:
    argv = [
        sys.executable,
        "-m",
        "sopbench.cli",
        "run",
        "--agent",
        agent,
        *SLICE,
        "--output",
        str(output),
        *extra,
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return sorted(read_run(output, records=False).rows, key=lambda r: (r.task_id, r.run))


def _unverified(rows: list) -> int:
    """Executed calls whose SOP the calls executed before them did not verify (the guard replayed on
    the stored, executed calls)."""
    tasks = dict((i, t) for t, i in select_tasks(RunSpec(agent="reference", domains="bank", output="unused")))
    count = 0
    for row in rows:
        session = Guard.for_task(tasks[row.task_id]).session()
        for call in row.tool_calls:
            if call.get("refused") or call["problem"] is not None:
                continue
            if not session.check(ToolCall(call["name"], call["arguments"])).allowed:
                count += 1
            session.record(ToolCall(call["name"], call["arguments"], call["output"], True))
    return count


def _executed(rows: list) -> dict:
    return {
        (r.task_id, r.run): [(c["name"], c["arguments"]) for c in r.tool_calls if not c.get("refused")]
        for r in rows
    }


def test_no_verify_through_the_guard_executes_nothing_unverified(tmp_path: Path) -> None:
    guarded = _run(tmp_path / "mcp", "no-verify", "--via", "mcp", "--guard")
    unguarded = _run(tmp_path / "plain", "no-verify")
    in_process = _run(tmp_path / "direct", "no-verify", "--env-mode", "guard")
    assert len(guarded) == 10
    assert {r.status for r in guarded} == {"completed"}
    assert _unverified(unguarded) > 0  # what the guard is there to stop
    assert _unverified(guarded) == 0
    refusals = [p for r in guarded for p in r.problems if str(p).startswith(REFUSED)]
    assert len(refusals) == sum(1 for r in in_process for c in r.tool_calls if c.get("refused")) > 0
    # The proxy lets through exactly what the in-process guard executes, to the same verdicts.
    assert _executed(guarded) == _executed(in_process)
    assert [r.passed for r in guarded] == [r.passed for r in in_process]
    assert not any(
        c.get("refused") for r in guarded for c in r.tool_calls
    )  # refused: never reached the server


def test_the_reference_policy_through_the_guard_is_never_refused(tmp_path: Path) -> None:
    guarded = _run(tmp_path / "mcp", "reference", "--via", "mcp", "--guard")
    direct = _run(tmp_path / "direct", "reference")
    assert not [p for r in guarded for p in r.problems if str(p).startswith(REFUSED)]
    assert [(r.task_id, r.status, r.end_reason, r.passed, r.verdict) for r in guarded] == [
        (r.task_id, r.status, r.end_reason, r.passed, r.verdict) for r in direct
    ]
    assert _unverified(guarded) == 0


def test_guard_is_identity_and_needs_via_mcp(tmp_path: Path) -> None:
    plain = RunSpec(agent="reference", output="o", via="mcp")
    guarded = plain.replace(guard=True)
    assert "guard" not in plain.identity()
    assert guarded.identity() == plain.identity() | {"guard": True}
    with pytest.raises(ValueError, match="--via mcp"):
        RunSpec(agent="reference", output="o", guard=True)
    argv = [
        sys.executable,
        "-m",
        "sopbench.cli",
        "run",
        "--agent",
        "reference",
        "--guard",
        "--output",
        str(tmp_path),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--guard needs --via mcp" in done.stderr
