"""The refusal to resume a folder with other tasks shows digests the user has seen elsewhere: the
stored manifest's task set, the one this selection prints on its first line, and the differing
task's own. Once it showed digests over the shared tasks only, which matched nothing printed."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys


def sopbench(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sopbench.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def header_digest(result: subprocess.CompletedProcess[str]) -> str:
    match = re.match(r"tasks: .*; \d+ tasks; sha256 ([0-9a-f]{12})$", result.stdout.splitlines()[0])
    assert match, result.stdout
    return match[1]


def test_the_refusal_names_digests_printed_elsewhere(generated_bank_tasks, tmp_path):
    goal, tasks = next(iter(json.loads(generated_bank_tasks.read_text()).items()))
    original, altered = tmp_path / "a" / "bank_tasks.json", tmp_path / "b" / "bank_tasks.json"
    original.parent.mkdir()
    altered.parent.mkdir()
    original.write_text(json.dumps({goal: tasks[:3]}))
    altered.write_text(
        json.dumps({goal: [{**tasks[0], "user_prompt": tasks[0]["user_prompt"] + " Thanks."}, *tasks[1:3]]})
    )
    folder = tmp_path / "run"
    first = sopbench("run", "--agent", "refuse-all", "--tasks", original, "--no-baselines", "-o", folder)
    assert first.returncode == 0
    stored = header_digest(first)
    elsewhere = sopbench(
        "run",
        "--agent",
        "refuse-all",
        "--tasks",
        altered,
        "--limit",
        "2",
        "--no-baselines",
        "-o",
        tmp_path / "other",
    )
    now = header_digest(elsewhere)
    db = sqlite3.connect(folder / "results.sqlite")
    task_digest = dict(db.execute("SELECT task_id, sha256 FROM tasks"))[f"bank/{goal}[0]"]
    manifest = json.loads(db.execute("SELECT value FROM meta WHERE key = 'manifest'").fetchone()[0])
    db.close()
    assert manifest["task_set"]["sha256"].startswith(stored)
    before = (folder / "results.sqlite").read_bytes()
    refused = sopbench(
        "run", "--agent", "refuse-all", "--tasks", altered, "--limit", "2", "--no-baselines", "-o", folder
    )
    assert refused.returncode == 2
    (line,) = refused.stderr.splitlines()
    assert f"(task_set.sha256: {stored} stored, {now} now (1 of 2 tasks played before differ, " in line
    assert f"first bank/{goal}[0]: sha256 {task_digest[:12]} stored, " in line
    assert (folder / "results.sqlite").read_bytes() == before
