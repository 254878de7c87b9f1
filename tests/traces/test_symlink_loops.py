"""Folders given on the command line are walked by one walker that visits each real folder once:
two symlinks that loop (``self -> ../loop``, ``bank/up -> ..``) once made ``evaluate``,
``leaderboard`` and ``report`` run for ever (``os.walk(followlinks=True)`` explores every path)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sopbench.traces import iter_trajectory_files

FILE_NAME = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"


@pytest.fixture
def looped(tmp_path, make_record) -> Path:
    """``loop/bank/<file>`` (two records), with ``loop/self -> ../loop``, ``loop/bank/up -> ..``
    and a link to a folder outside (``loop/more -> ../more``, holding a second file)."""
    loop = tmp_path / "loop"
    (loop / "bank").mkdir(parents=True)
    (loop / "bank" / FILE_NAME).write_text(json.dumps([make_record(), make_record()]))
    (loop / "self").symlink_to("../loop")
    (loop / "bank" / "up").symlink_to("..")
    (loop / "bank" / "me").symlink_to("me")  # a link to itself
    (tmp_path / "more" / "bank").mkdir(parents=True)
    (tmp_path / "more" / "bank" / FILE_NAME).write_text(json.dumps([make_record()]))
    (loop / "more").symlink_to("../more")
    return loop


def test_each_real_folder_is_visited_once(looped):
    files = list(iter_trajectory_files(looped))
    assert [f.resolve() for f in files] == sorted(
        [(looped / "bank" / FILE_NAME).resolve(), (looped.parent / "more" / "bank" / FILE_NAME).resolve()]
    )


@pytest.mark.parametrize(
    ("verb", "output"),
    [("evaluate", "verdicts.jsonl"), ("leaderboard", None), ("report", "report.html")],
)
def test_verbs_finish_on_folders_with_looping_links(verb, output, looped, tmp_path):
    args = [sys.executable, "-m", "sopbench.cli", verb, str(looped)]
    if output:
        args += ["-o", str(tmp_path / output)]
    before = (looped / "bank" / FILE_NAME).read_bytes()
    result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert (looped / "bank" / FILE_NAME).read_bytes() == before
    if verb == "evaluate":
        rows = [json.loads(line) for line in (tmp_path / output).read_text().splitlines()]
        assert len(rows) == 3  # two records of one file, one of the other: each counted once
