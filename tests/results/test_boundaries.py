"""A sweep computes its leaderboard with ``sopbench.results`` and never loads ``sopbench.report``
(the import-linter contract says so too; tests/test_architecture.py shows it bites)."""

from __future__ import annotations

import subprocess
import sys


def test_the_sweep_loads_results_not_report():
    program = (
        "import sys, sopbench.sweep; "
        "print('sopbench.results' in sys.modules, 'sopbench.report' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]
