"""read_run_folder: the one reading API of stored episodes, read-only."""

from __future__ import annotations

import sqlite3

import pytest

from sopbench.generation import generate_domain
from sopbench.runner import SCHEMA_VERSION, STORE_NAME, RunSpec, StoreError, read_run_folder, run


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("read")
    tasks = folder / "tasks"
    tasks.mkdir()
    (tasks / "bank_tasks.json").write_bytes(
        generate_domain("bank", seed=0, goals_wanted=["transfer_funds"]).to_json()
    )
    run(RunSpec(agent="reference", domains=("bank",), tasks=tasks, output=folder / "run", baselines=False))
    return folder / "run"


def test_every_stored_episode_comes_back_as_a_record(run_folder):
    with sqlite3.connect(run_folder / STORE_NAME) as db:
        stored = db.execute(
            "SELECT task_id, run, goal FROM episodes ORDER BY domain, task_index, run"
        ).fetchall()
    read = read_run_folder(run_folder)
    assert [(e.task_id, e.run, e.goal) for e in read.episodes] == stored
    assert all(e.record is not None and e.record.task.goal == e.goal for e in read.episodes)
    assert read.episodes[0].configuration == "reference · tools full"


def test_a_folder_without_a_store_is_named(tmp_path):
    with pytest.raises(StoreError, match=f"no {STORE_NAME} here"):
        read_run_folder(tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing was created


def test_a_newer_schema_is_refused(run_folder, tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    with sqlite3.connect(run_folder / STORE_NAME) as source, sqlite3.connect(copy / STORE_NAME) as target:
        source.backup(target)
        target.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match="schema version"):
        read_run_folder(copy)
