"""The code is in one style: ruff's lint rules hold and ``ruff format`` would change no file
(pyproject.toml pins ruff's minor version, whose formatting is stable)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ["src", "tests", "benchmarks"]


def ruff(*arguments: str) -> subprocess.CompletedProcess[str]:
    # ruff is a test dependency (pyproject.toml's `test` extra), so it is never skipped.
    command = [sys.executable, "-m", "ruff", *arguments, *CHECKED]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_lint_rules_hold() -> None:
    result = ruff("check", "--output-format", "concise")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]


def test_ruff_format_would_change_no_file() -> None:
    result = ruff("format", "--check")
    assert result.returncode == 0, "run `ruff format`:\n" + result.stdout[-3000:] + result.stderr[-1000:]
