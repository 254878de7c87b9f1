"""A damaged store (corrupted pages, a manifest that is not JSON) and a task whose goal is not a
tool: one line naming the file and what is wrong, through every verb that reads them, and nothing
changed. Once these printed ``unexpected ... (this is a bug)``, or became an ``infra_error``
retried on every resume."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest


def sopbench(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sopbench.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def stored_run(generated_bank_tasks, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("stored") / "run"
    made = sopbench(
        "run", "--agent", "reference", "--tasks", generated_bank_tasks, "--no-baselines", "-o", folder
    )
    assert made.returncode == 0, made.stderr
    return folder


def corrupted_pages(folder: Path) -> None:
    store = folder / "results.sqlite"
    data = bytearray(store.read_bytes())
    for start in range(3 * 4096, len(data) - 4096, 3 * 4096):  # every third page after the schema
        data[start : start + 4096] = b"\xff" * 4096
    store.write_bytes(bytes(data))


def manifest_not_json(folder: Path) -> None:
    db = sqlite3.connect(folder / "results.sqlite")
    db.execute("UPDATE meta SET value = '{not json' WHERE key = 'manifest'")
    db.commit()
    db.close()


def stores(folder: Path) -> dict[str, bytes]:
    """The store and its companions (the lock file only holds the last writer's process id)."""
    return {
        p.name: p.read_bytes()
        for p in folder.iterdir()
        if p.name.startswith("results.sqlite") and not p.name.endswith(".lock")
    }


READING_EPISODES = [
    ("export", "{run}", "-o", "{tmp}/out.jsonl"),
    ("export", "{run}", "--format", "sopbench", "-o", "{tmp}/traj"),
    ("evaluate", "{run}", "-o", "{tmp}/verdicts.jsonl"),
    ("leaderboard", "{run}"),
    ("report", "{run}", "-o", "{tmp}/report.html"),
    ("compare", "{run}", "{run}"),
    ("run", "--agent", "reference", "--tasks", "{tasks}", "--no-baselines", "-o", "{run}"),
]
READING_THE_MANIFEST = [
    ("export", "{run}", "-o", "{tmp}/out.jsonl"),
    ("export", "{run}", "--format", "sopbench", "-o", "{tmp}/traj"),
    ("run", "--agent", "reference", "--tasks", "{tasks}", "--no-baselines", "-o", "{run}"),
]
CASES = [(corrupted_pages, args, "cannot read ") for args in READING_EPISODES] + [
    (manifest_not_json, args, "damaged store: its manifest is not JSON (") for args in READING_THE_MANIFEST
]


@pytest.mark.parametrize(
    ("damage", "args", "wording"),
    CASES,
    ids=lambda v: getattr(v, "__name__", None) or (" ".join(v) if isinstance(v, tuple) else None),
)
def test_a_damaged_store_is_one_line_naming_it(
    damage, args, wording, stored_run, generated_bank_tasks, tmp_path
):
    folder = tmp_path / "run"
    shutil.copytree(stored_run, folder)
    damage(folder)
    before = stores(folder)
    result = sopbench(*(a.format(run=folder, tmp=tmp_path, tasks=generated_bank_tasks) for a in args))
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith(f"error: {folder / 'results.sqlite'}: {wording}"), errors[0]
    assert "this is a bug" not in result.stderr
    assert stores(folder) == before


def test_a_goal_that_is_not_a_tool_is_refused_before_anything_runs(generated_bank_tasks, tmp_path):
    goal, tasks = next(iter(json.loads(generated_bank_tasks.read_text()).items()))
    task = {**tasks[0], "user_goal": "no_such_tool"}
    file = tmp_path / "bank_tasks.json"
    file.write_text(json.dumps({"no_such_tool": [task], goal: tasks[:1]}))
    before = file.read_bytes()
    result = sopbench("run", "--agent", "reference", "--tasks", file, "-o", tmp_path / "run")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {file}: task bank/no_such_tool[0]: its goal 'no_such_tool' is not a tool of the bank domain"
    ]
    assert not (tmp_path / "run").exists() and file.read_bytes() == before
