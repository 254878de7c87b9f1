"""sopbench.report: the renderers of the verbs' results (and the replay and diagnose verbs'
functions), called as a library."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from sopbench.report import (
    TextTable,
    records_without_trajectory,
    render_leaderboard,
    replay_files,
    run_diagnosis,
)
from sopbench.results import ScoringOptions, Sources, leaderboard
from sopbench.traces import iter_trajectory_files

FILE_NAME = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"


@pytest.fixture
def files(tmp_path, make_record) -> list[Path]:
    folder = tmp_path / "bank"
    folder.mkdir()
    empty = make_record()
    empty["interactions"] = []
    (folder / FILE_NAME).write_text(json.dumps([make_record(), empty, make_record()]))
    return list(iter_trajectory_files(tmp_path))


def test_leaderboard_documents(files, make_task):
    from sopbench.tasks import task_from_json

    options = ScoringOptions(floor_tasks=(task_from_json(make_task(), domain="bank"),), min_cases=0)
    report = leaderboard(Sources(files=tuple(files)), options)
    rows = list(csv.reader(io.StringIO(render_leaderboard(report, "csv"))))
    assert rows[0][-5:] == ["folder", "coverage", "ranked", "rank", "floor"]
    # Both fail the one task: equal rates, so the names decide.
    assert [(row[0], row[4]) for row in rows[1:]] == [("gpt-4o", "0/2"), ("refuse-all", "0/1")]
    assert [row["model"] for row in json.loads(render_leaderboard(report, "json"))] == [
        "gpt-4o",
        "refuse-all",
    ]
    assert render_leaderboard(report, "markdown").startswith(
        "| # | model | mode | tool list | user | bank | Overall |"
    )
    # Equal on the one shared task: one rank group; the floor is marked as such.
    assert [row[-2:] for row in rows[1:]] == [["1–2", ""], ["1–2", "yes"]]
    compared = leaderboard(Sources(files=tuple(files)), options, compare=True)
    assert set(json.loads(render_leaderboard(compared, "json"))) == {"leaderboard", "comparison"}
    with pytest.raises(ValueError, match="CSV"):
        render_leaderboard(compared, "csv")


def test_a_table_is_markdown_off_a_terminal_and_rich_on_one():
    table = TextTable("title", ["name", "count"])
    table.add_row(["a-rather-long-domain-name-that-a-narrow-table-would-cut", "12345"])
    piped = Console(file=io.StringIO(), width=20, force_terminal=False)
    table.print(piped)
    assert "| a-rather-long-domain-name-that-a-narrow-table-would-cut | 12345 |" in piped.file.getvalue()
    terminal = Console(file=io.StringIO(), width=30, force_terminal=True)
    table.print(terminal)
    assert "┃" in terminal.file.getvalue() or "│" in terminal.file.getvalue()


def test_records_without_trajectory_are_grouped_by_file():
    assert records_without_trajectory([]) is None
    line = records_without_trajectory([("a.json", i) for i in range(12)] + [("b.json", 3)])
    assert line == (
        "13 records have no trajectory (not scored): a.json: 12 (records 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...); "
        "b.json: 1 (records 3)"
    )


def test_replay_files_writes_each_run_and_counts_per_domain(files):
    written, done = [], []
    report = replay_files(files, written.append, progress=done.append)
    assert [run.record for run in written] == [0, 2] and done == [f"bank/{FILE_NAME}"]
    assert report.runs == 2 and report.as_dict()["domains"][0]["runs"] == 2
    assert report.table().rows[0][:2] == ["bank", "2"]
    assert report.as_dict()["records_without_trajectory"] == [{"file": f"bank/{FILE_NAME}", "record": 1}]
    assert report.notes() == [f"1 records have no trajectory (not replayed): bank/{FILE_NAME}: 1 (records 1)"]


def test_run_diagnosis_counts_the_builtin_kinds_and_the_tasks(published_tasks):
    tasks = published_tasks("university")[:2]
    seen = []
    report = run_diagnosis(7, per_kind=1, tasks=tasks, progress=seen.append)
    assert report.builtin["fixtures"] == 10 and seen == [task.goal for task in tasks]
    assert report.surprises == []
    assert report.as_dict()["tasks"]["fixtures"] == report.over_tasks["fixtures"]
    assert [table.title.split(",")[0] for table in report.tables()] == ["built-in SOP", "published tasks"]
