"""What verbs refuse before they write, as a user types the command: two forms of one domain's task
file (generated beside a published one), a report of sources without an episode, a viewer URL that is
not a web address, and a leaderboard of run folders alone (no empty refuse-all row).

Each asserts the exit code, one line, and that every input is byte-identical afterwards.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.cli import app

TRAJECTORY = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"


def sopbench(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """``tgz/bank_tasks.json.gz``: generated bank tasks, compressed as the published files are."""
    folder = tmp_path_factory.mktemp("made") / "plain"
    assert (
        sopbench("generate", "--domain", "bank", "--goals", "apply_credit_card", "-o", folder).exit_code == 0
    )
    tgz = folder.parent / "tgz"
    tgz.mkdir()
    (tgz / "bank_tasks.json.gz").write_bytes(gzip.compress((folder / "bank_tasks.json").read_bytes()))
    return tgz


@pytest.fixture
def run_folder(generated, tmp_path) -> Path:
    done = sopbench("run", "--agent", "reference", "--tasks", generated, "--limit", "2", "-o", tmp_path / "R")
    assert done.exit_code == 0, done.output
    return tmp_path / "R"


def test_generate_refuses_to_write_a_second_form_of_a_task_file(generated, tmp_path):
    tgz = tmp_path / "tgz"
    tgz.mkdir()
    (tgz / "bank_tasks.json.gz").write_bytes((generated / "bank_tasks.json.gz").read_bytes())
    before = files(tgz)
    result = sopbench("generate", "--domain", "bank", "-o", tgz)
    assert result.exit_code == 2
    assert lines(result) == [
        f"error: --output {tgz}: holds bank_tasks.json.gz; bank_tasks.json beside it would be a second task "
        "file for bank: remove bank_tasks.json.gz or choose another folder"
    ]
    assert files(tgz) == before


@pytest.mark.parametrize(
    "verb",
    [
        ("run", "--agent", "reference", "--tasks", "{tasks}", "-o", "{out}"),
        ("diagnose", "--tasks", "bank", "--tasks-dir", "{tasks}"),
        ("leaderboard", "{run}", "--tasks-dir", "{tasks}"),
        ("report", "{run}", "--tasks-dir", "{tasks}", "-o", "{out}.html"),
        (
            "generate",
            "--domain",
            "bank",
            "--goals",
            "apply_credit_card",
            "--compare",
            "{tasks}",
            "-o",
            "{out}",
        ),
    ],
    ids=lambda verb: verb[0],
)
def test_a_folder_with_both_forms_of_a_task_file_is_refused_on_read(generated, run_folder, tmp_path, verb):
    both = tmp_path / "both"
    both.mkdir()
    (both / "bank_tasks.json.gz").write_bytes((generated / "bank_tasks.json.gz").read_bytes())
    (both / "bank_tasks.json").write_bytes(gzip.decompress((generated / "bank_tasks.json.gz").read_bytes()))
    before = {**files(both), **files(run_folder)}
    args = [part.format(tasks=both, out=tmp_path / "out", run=run_folder) for part in verb]
    result = sopbench(*args)
    assert result.exit_code == 2, result.output
    [line] = lines(result)
    assert line.startswith("error: ") and line.endswith(
        "holds both bank_tasks.json and bank_tasks.json.gz: remove one (which to read cannot be told)"
    )
    assert {**files(both), **files(run_folder)} == before
    assert not list(tmp_path.glob("out*"))


def test_sources_without_an_episode_exit_1_with_one_line(tmp_path):
    (tmp_path / "empty" / "bank").mkdir(parents=True)
    (tmp_path / "empty" / "bank" / TRAJECTORY).write_text("[]")
    report = tmp_path / "r.html"
    result = sopbench("report", tmp_path / "empty", "-o", report)
    assert result.exit_code == 1
    assert lines(result) == [
        f"nothing to do: no episode to score in {tmp_path / 'empty'}; {report} not written"
    ]
    assert not report.exists()
    board = tmp_path / "board.md"
    result = sopbench("leaderboard", tmp_path / "empty", "-o", board)
    assert result.exit_code == 1
    assert lines(result)[-1] == f"nothing to do: no episode to score in {tmp_path / 'empty'}"
    assert board.exists()  # the table, without a row of the sources


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "JavaScript://x/%0aalert(1)", "data:text/html,x", "/v"]
)
def test_report_takes_only_a_web_address_for_the_viewer(run_folder, tmp_path, url):
    result = sopbench("report", run_folder, "-o", tmp_path / "r.html", "--viewer-url", url)
    assert result.exit_code == 2
    assert lines(result) == [
        f"error: --viewer-url {url}: give an http:// or https:// address (where sopbench view serves the sources)"
    ]
    assert not (tmp_path / "r.html").exists()


def test_a_leaderboard_of_run_folders_alone_has_no_empty_refuse_all_row(run_folder, tmp_path):
    result = sopbench("leaderboard", run_folder, "--tasks-dir", tmp_path / "missing", "--format", "json")
    assert result.exit_code == 2  # a --tasks-dir that is not there is named
    result = sopbench("leaderboard", run_folder, "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    # The refuse-all row is there only over tasks (../shared/sopbench/tasks when it exists), never empty.
    assert "reference" in [row["model"] for row in rows]
    assert all(row["cells"]["Overall"]["cases"] > 0 for row in rows), rows
