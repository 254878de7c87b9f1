"""A sweep file's runs and seed are bounded as ``run``'s are, before anything is made: once
``runs = 100000`` planned every episode in memory (gigabytes) and did not hear Ctrl-C."""

from __future__ import annotations

import subprocess
import sys


def test_runs_and_seed_past_their_bounds_are_named_before_anything_is_made(tmp_path):
    file = tmp_path / "sweep.toml"
    file.write_text(
        'domains = ["bank"]\nruns = 100000\nseed = 18446744073709551616\n'
        '[[agents]]\nname = "reference"\nagent = "reference"\n[matrix]\nagents = ["reference"]\n'
        '[[override]]\nagent = "reference"\nruns = 1001\n'
    )
    before = file.read_bytes()
    result = subprocess.run(
        [sys.executable, "-m", "sopbench.cli", "sweep", str(file), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {file}: runs: Input should be less than or equal to 1000",
        f"{file}: seed: Input should be less than or equal to 9223372036854775807",
        f"{file}: override.0.runs: Input should be less than or equal to 1000",
    ]
    assert not (tmp_path / "out").exists() and file.read_bytes() == before
