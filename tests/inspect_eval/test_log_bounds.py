"""An Inspect log is a file like any other: bounded before anything in it is inflated or decoded
(each ``.eval`` member's inflated size and ratio, a ``.json`` log's size), and whatever Inspect's
reader refuses is one line naming the file. Once a 3 MB ``.eval`` whose ``summaries.json``
inflated to 1.5 GB made ``evaluate`` peak at 4.7 GB, then print a 9-line error."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip(
    "inspect_ai", reason="the inspect extra is not installed (pip install 'sopbench[inspect]')"
)

MAX_FILE_BYTES = 256 << 20  # the documented bound on a file or an archive member, inflated

HEADER = json.dumps({"version": 2, "status": "success", "eval": {"task": "sopbench"}})


def evaluate(log: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    before = log.read_bytes()
    out = tmp_path / "verdicts.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "sopbench.cli", "evaluate", str(log), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert log.read_bytes() == before  # the input is untouched
    assert not out.exists()  # nothing half-written
    return result


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_member_inflating_past_the_size_bound_is_refused_unread(tmp_path):
    log = tmp_path / "big.eval"
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("header.json", HEADER)
        with archive.open("summaries.json", "w", force_zip64=True) as member:
            chunk = b" " * (1 << 20)
            for _ in range(MAX_FILE_BYTES // len(chunk) + 1):
                member.write(chunk)
    result = evaluate(log, tmp_path)
    assert result.returncode == 2
    assert one_error_line(result) == (
        f"error: {log}: member 'summaries.json' inflates to 257 MiB, more than the 256 MiB sopbench reads"
    )


def test_a_member_inflating_a_thousand_times_is_taken_for_a_zip_bomb(tmp_path):
    log = tmp_path / "bomb.eval"
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", HEADER)
        archive.writestr("summaries.json", b"[" + b" " * (20 << 20) + b"]")
    result = evaluate(log, tmp_path)
    assert result.returncode == 2
    line = one_error_line(result)
    assert line.startswith(f"error: {log}: member 'summaries.json' inflates ") and "zip bomb" in line


def test_a_json_log_larger_than_the_bound_is_refused_unread(tmp_path):
    log = tmp_path / "big.json"
    with log.open("wb") as handle:
        handle.write(b'{"version": 2, "status": "success", "eval": {"task": "x"}, ')
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    result = evaluate(log, tmp_path)
    assert result.returncode == 2
    assert "larger than 256 MiB" in one_error_line(result)


def test_a_log_inspect_refuses_is_one_line(tmp_path):
    log = tmp_path / "odd.eval"
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", HEADER)
        archive.writestr("summaries.json", json.dumps([{"id": [1], "epoch": "x", "scores": 5}] * 3))
        archive.writestr("_journal/start.json", json.dumps({"version": "x", "eval": 5, "plan": []}))
    result = evaluate(log, tmp_path)
    assert result.returncode == 2
    assert one_error_line(result).startswith(f"error: {log}: cannot read the Inspect log (")
