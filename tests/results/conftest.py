"""What the tests of sopbench.results read: a bank trajectory file of three records (the second
without a run) and two run folders played by ``sopbench run``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FILE_NAME = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"


@pytest.fixture
def trajectories(tmp_path, make_record) -> Path:
    folder = tmp_path / "trajectories" / "bank"
    folder.mkdir(parents=True)
    empty = make_record()
    empty["interactions"] = []
    (folder / FILE_NAME).write_text(json.dumps([make_record(), empty, make_record()]))
    return folder.parent


def sopbench(*args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """The command line, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "sopbench.cli", *args], capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="session")
def run_folders(tmp_path_factory) -> Path:
    """``runs/reference`` and ``runs/no-verify``: two built-in agents on the first 6 generated bank
    tasks, played by ``sopbench run`` (no published data needed)."""
    runs = tmp_path_factory.mktemp("runs")
    for agent in ("reference", "no-verify"):
        done = sopbench(
            "run", "--agent", agent, "--domain", "bank", "--limit", "6", "--output", str(runs / agent)
        )
        assert done.returncode == 0, done.stderr
    return runs


@pytest.fixture(scope="session")
def cli():
    """``cli("leaderboard", ...)``: the command line in a child process."""
    return sopbench


# A meta-path hook makes pandas and pyarrow unimportable, as when the extra is not installed.
_BLOCK_FRAMES = (
    "import sys\n"
    "class Block:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.split('.')[0] in ('pandas', 'pyarrow'):\n"
    "            raise ImportError(name=name)\n"
    "sys.meta_path.insert(0, Block())\n"
)


@pytest.fixture
def without_frames():
    """Runs a Python program in a fresh interpreter where the extra ``frames`` is not installed."""

    def run(program: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", _BLOCK_FRAMES + program], capture_output=True, text=True, check=False
        )

    return run
