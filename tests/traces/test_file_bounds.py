"""Trajectory and task files are read within the bounds on JSON from outside: a file nested past
what orjson writes back, or inflating past 256 MiB (a gzip bomb), is one skipped file or one error
line naming it; the other files are scored, and nothing is inflated whole."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zlib

import pytest

from sopbench._io import LoadError, read_json
from sopbench._json import MAX_DOCUMENT_DEPTH, MAX_FILE_BYTES

FILE_NAME = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"


def gzip_bomb(size: int) -> bytes:
    """``size`` bytes of spaces, gzip-compressed in one pass (a few hundred KB)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b" " * (1 << 20)
    parts = [compressor.compress(b"[")]
    parts += [compressor.compress(chunk) for _ in range(size // len(chunk))]
    return b"".join([*parts, compressor.compress(b"]"), compressor.flush()])


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return gzip_bomb(MAX_FILE_BYTES + (1 << 20))


def test_a_gzip_bomb_is_a_load_error_and_never_inflated_whole(tmp_path, bomb):
    path = tmp_path / "bank" / "bomb.json.gz"
    path.parent.mkdir()
    path.write_bytes(bomb)
    with pytest.raises(LoadError, match=r"bomb\.json\.gz: inflates to more than 256 MiB"):
        read_json(path)


def test_two_gzip_members_are_bounded_together(tmp_path):
    path = tmp_path / "two.json.gz"
    path.write_bytes(gzip.compress(b"[1, ") + gzip.compress(b"2]"))
    assert read_json(path) == [1, 2]


@pytest.mark.parametrize("depth", [MAX_DOCUMENT_DEPTH + 1, 1000, 1025, 100_000])
def test_a_file_nested_past_the_bound_is_a_load_error(tmp_path, depth):
    path = tmp_path / "deep.json"
    path.write_text("[" * depth + "]" * depth)
    with pytest.raises(LoadError, match=rf"deep\.json: JSON nested deeper than {MAX_DOCUMENT_DEPTH} levels$"):
        read_json(path)


def test_evaluate_skips_deep_and_inflating_files_with_one_line_each(tmp_path, make_record, bomb):
    runs = tmp_path / "runs"
    for name, data in (
        ("good", json.dumps([make_record()]).encode()),
        ("deep", ("[" * 300 + "]" * 300).encode()),
        ("bomb", bomb),
    ):
        (runs / name / "bank").mkdir(parents=True)
        (runs / name / "bank" / (FILE_NAME + (".gz" if name == "bomb" else ""))).write_bytes(data)
    result = subprocess.run(
        [sys.executable, "-m", "sopbench.cli", "evaluate", "runs", "-o", str(tmp_path / "v.jsonl")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
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
        [sys.executable, "-m", "sopbench.cli", "run", "--agent", "refuse-all", "--tasks", str(tasks),
         "-o", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"error: {tmp_path.name}/bank_tasks.json: JSON nested deeper than 254 levels"]
    assert not (tmp_path / "run").exists()
