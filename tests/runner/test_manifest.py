"""The manifest is a typed document: the revision of the sopbench that wrote it (never an error when
git is absent), the task set, and the run's identity laid out as before."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

import sopbench
from sopbench.runner import Manifest, RunSpec, StoreError, read_run, run
from sopbench.runner.store import sopbench_revision

CHECKOUT = Path(sopbench.__file__).resolve().parents[2]


@pytest.fixture
def fresh_revision():
    sopbench_revision.cache_clear()
    yield
    sopbench_revision.cache_clear()


def test_the_revision_is_the_checkouts_commit(fresh_revision):
    if shutil.which("git") is None or not (CHECKOUT / ".git").exists():
        pytest.skip("not a git checkout")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=CHECKOUT, capture_output=True, text=True, check=True
    )
    assert sopbench_revision() == head.stdout.strip()


def test_without_git_the_revision_is_none_and_a_run_still_runs(
    fresh_revision, monkeypatch, small_tasks, tmp_path
):
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert sopbench_revision() is None
    run(
        RunSpec(
            agent="reference",
            tasks=small_tasks,
            domains=("bank",),
            limit=1,
            output=tmp_path / "r",
            baselines=False,
        )
    )
    manifest = read_run(tmp_path / "r", header_only=True).manifest
    assert manifest is not None and manifest.sopbench_revision is None


def test_the_stored_manifest_keeps_the_identity_layout(small_tasks, tmp_path):
    config = RunSpec(
        agent="reference",
        tasks=small_tasks,
        domains=("bank",),
        limit=1,
        output=tmp_path / "r",
        baselines=False,
    )
    run(config)
    with sqlite3.connect(tmp_path / "r" / "results.sqlite") as db:
        stored = json.loads(db.execute("SELECT value FROM meta WHERE key = 'manifest'").fetchone()[0])
    assert list(stored) == [
        "sopbench_version", "sopbench_revision", "python_version", "created_at", "task_set", "config"
    ]  # fmt: skip
    assert list(stored["task_set"]) == ["path", "generated_seed", "tasks", "sha256"]
    assert stored["config"] == config.identity()  # the identity as it was, key for key
    assert Manifest.model_validate(stored).document() == stored


def test_a_manifest_that_is_not_a_runs_is_a_damaged_store(small_tasks, tmp_path):
    run(
        RunSpec(
            agent="reference",
            tasks=small_tasks,
            domains=("bank",),
            limit=1,
            output=tmp_path / "r",
            baselines=False,
        )
    )
    with sqlite3.connect(tmp_path / "r" / "results.sqlite") as db:
        db.execute("UPDATE meta SET value = '{\"sopbench_version\": \"0.1.0\"}' WHERE key = 'manifest'")
    with pytest.raises(StoreError, match="damaged store: its manifest does not hold a run's"):
        read_run(tmp_path / "r")
