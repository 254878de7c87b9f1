"""The README's example agent over MCP (examples/mcp/scripted_agent.py) runs offline, to a stored verdict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp.types", reason="the mcp extra is not installed (pip install 'sopbench[mcp]')")

from sopbench.runner import read_run  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp" / "scripted_agent.py"


def test_the_readme_example_agent_plays_an_episode_to_a_verdict(tmp_path: Path) -> None:
    assert len(EXAMPLE.read_text().splitlines()) <= 20
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), str(tmp_path / "run")], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "the user says:" in done.stdout
    [row] = read_run(tmp_path / "run", records=False).rows
    assert row.status == "completed" and row.end_reason == "exit_conversation" and row.passed is not None


def test_the_readme_names_the_example() -> None:
    readme = (EXAMPLE.parents[2] / "README.md").read_text()
    assert "examples/mcp/scripted_agent.py" in readme
