"""``run --agent openai --via mcp`` against ``run --agent openai``: a model agent reached through a
real MCP session sees what it sees in process. A deterministic chat server (a function of the
request) plays the model, so equal requests give equal replies: the test holds that every request
the model received is the same both ways (system prompt, messages, tools, in order) and that the
stored verdicts are the same, in each tool-call mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp.types", reason="the mcp extra is not installed (pip install 'sopbench[mcp]')")

from sopbench.runner import read_run  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from chat_server import benchmark_model, serve  # noqa: E402


def _play(url: str, mode: str, output: Path, *extra: str) -> None:
    argv = [sys.executable, "-m", "sopbench.cli", "run", "--agent", "openai", "--base-url", url,
            "--model", "m", "--tool-mode", mode, "--domain", "bank,university", "--limit", "2",
            "--concurrency", "1", "--no-baselines", "--output", str(output), *extra]  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr


def _sent(requests: list[dict]) -> list[str]:
    # what the model reads, as text: the text modes carry the tool list inside the system prompt,
    # where key order is part of what the model is shown
    return [
        json.dumps({"messages": r["messages"], "tools": r.get("tools")}, sort_keys=True) for r in requests
    ]


@pytest.mark.parametrize("mode", ["fc", "react", "act-only"])
def test_a_model_via_mcp_is_asked_the_same_and_gets_the_same_verdicts(tmp_path: Path, mode: str) -> None:
    asked = {}
    for via in ("direct", "mcp"):
        with serve(benchmark_model) as server:
            _play(server.url, mode, tmp_path / via, "--via", via)
            asked[via] = _sent(server.requests)
    assert len(asked["direct"]) >= 4 * 2  # four episodes, at least two requests each
    assert asked["mcp"] == asked["direct"]
    verdicts = {
        via: sorted(
            (r.task_id, r.run, r.status, r.end_reason, r.passed, r.verdict, len(r.tool_calls))
            for r in read_run(tmp_path / via, records=False).rows
        )
        for via in ("direct", "mcp")
    }
    assert len(verdicts["mcp"]) == 4
    assert verdicts["mcp"] == verdicts["direct"]
