"""Trajectory and task files are read within the bounds on JSON from outside: a file nested past
what orjson writes back, or inflating past 256 MiB (a gzip bomb), is one skipped file or one error
line naming it; the other files are scored, and nothing is inflated whole."""

from __future__ import annotations

import json
import subprocess
import sys

MAX_DOCUMENT_DEPTH = 254  # the documented bounds on a file: what orjson writes back

FILE_NAME = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"


def test_evaluate_skips_deep_and_inflating_files_with_one_line_each(tmp_path, make_record, gzip_bomb):
    runs = tmp_path / "runs"
    for name, data in (
        ("good", json.dumps([make_record()]).encode()),
        ("deep", ("[" * 300 + "]" * 300).encode()),
        ("bomb", gzip_bomb),
    ):
        (runs / name / "bank").mkdir(parents=True)
        (runs / name / "bank" / (FILE_NAME + (".gz" if name == "bomb" else ""))).write_bytes(data)
    result = subprocess.run(
        [sys.executable, "-m", "sopbench.cli", "evaluate", "runs", "-o", str(tmp_path / "v.jsonl")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 1
    skipped = sorted(line for line in result.stderr.splitlines() if line.startswith("skipped: "))
    assert skipped == [
        f"skipped: runs/bomb/bank/{FILE_NAME}.gz: inflates to more than 256 MiB, the bound on a file sopbench reads",
        f"skipped: runs/deep/bank/{FILE_NAME}: JSON nested deeper than {MAX_DOCUMENT_DEPTH} levels",
    ]
    assert len((tmp_path / "v.jsonl").read_text().splitlines()) == 1  # the good file is scored


def test_a_task_file_nested_past_the_bound_is_one_line(tmp_path):
    tasks = tmp_path / "bank_tasks.json"
    tasks.write_text('{"get_account_balance": ' + "[" * 400 + "]" * 400 + "}")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sopbench.cli",
            "run",
            "--agent",
            "refuse-all",
            "--tasks",
            str(tasks),
            "-o",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {tmp_path.name}/bank_tasks.json: JSON nested deeper than 254 levels"
    ]
    assert not (tmp_path / "run").exists()
