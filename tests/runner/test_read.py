"""read_run: the one reading API of a run folder, read-only."""

from __future__ import annotations

import sqlite3

import pytest

from sopbench.generation import generate_domain
from sopbench.runner import RunSpec, StoreError, read_run, run
from sopbench.runner.store import SCHEMA_VERSION, STORE_NAME


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
    read = read_run(run_folder)
    assert [(e.row.task_id, e.row.run, e.row.goal) for e in read.episodes] == stored
    assert all(e.record is not None and e.record.task.goal == e.row.goal for e in read.episodes)
    assert read.episodes[0].configuration == "reference · tools full"
    assert read.schema_version == SCHEMA_VERSION and read.manifest is not None
    assert read.config == read.manifest.config and read.config["agent"] == "reference"
    assert set(read.task_digests) == {row.task_id for row in read.rows}


def test_a_header_or_rows_without_records_need_no_tasks(run_folder):
    header = read_run(run_folder, header_only=True)
    assert header.episodes == () and header.manifest == read_run(run_folder).manifest
    rows = read_run(run_folder, records=False)
    assert rows.rows == read_run(run_folder).rows
    assert all(episode.record is None for episode in rows.episodes)


def test_a_folder_without_a_store_is_named(tmp_path):
    with pytest.raises(StoreError, match=f"no {STORE_NAME} here"):
        read_run(tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing was created


def test_a_newer_schema_is_refused(run_folder, tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    with sqlite3.connect(run_folder / STORE_NAME) as source, sqlite3.connect(copy / STORE_NAME) as target:
        source.backup(target)
        target.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match="schema version"):
        read_run(copy)
