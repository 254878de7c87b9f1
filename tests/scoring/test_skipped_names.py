"""A skipped trajectory file is named by its path as given, so that files of the same name under
different runs (``a/bank/<f>``, ``b/bank/<f>``) never read alike in the problem list."""

from __future__ import annotations

import subprocess
import sys

FILE_NAME = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"


def test_skipped_files_are_named_unambiguously(tmp_path):
    for run, text in (("a", '[{"domain": "bank"}]'), ("b", "{not json"), ("c", "{not json")):
        (tmp_path / run / "bank").mkdir(parents=True)
        (tmp_path / run / "bank" / FILE_NAME).write_text(text)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sopbench.cli",
            "evaluate",
            "a",
            "b",
            str(tmp_path / "c"),
            "-o",
            str(tmp_path / "v.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 1
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped: ")]
    assert skipped == [
        f'skipped: a/bank/{FILE_NAME}: record 0: field "setup": missing',
        f"skipped: b/bank/{FILE_NAME}: invalid JSON (unexpected character, expected a string key: line 1 column 2 (char 1))",
        f"skipped: {tmp_path}/c/bank/{FILE_NAME}: invalid JSON (unexpected character, expected a string key: line 1 column 2 (char 1))",
    ]
