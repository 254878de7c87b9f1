"""The types hold: mypy, configured in pyproject.toml (strict for the core, the domains, scoring and
generation, default checks elsewhere), finds no error in src/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error() -> None:
    pytest.importorskip("mypy")
    # Its cache (.mypy_cache, ignored by git) makes a repeated run take seconds, not tens of them.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    assert "Success: no issues found" in result.stdout
