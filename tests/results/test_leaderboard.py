"""``sopbench.results.leaderboard``: the rows, the floors played on the sources' own tasks, and the
same figures as ``sopbench leaderboard --format json``."""

from __future__ import annotations

import gzip
import json

import pytest

from sopbench.report import render_leaderboard
from sopbench.results import ScoringOptions, Sources, leaderboard, report_leaderboard
from sopbench.tasks import task_from_json

FILE_NAME = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"


def test_the_floor_is_played_on_the_tasks_given_and_ranked_with_the_agent(trajectories, make_task):
    options = ScoringOptions(floor_tasks=(task_from_json(make_task(), domain="bank"),), min_cases=0)
    board = leaderboard(Sources.of([trajectories]), options)
    # Both fail the one task: equal rates, so the names decide; the floor is marked as such.
    assert [(row.model, row.floor) for row in board.rows] == [("gpt-4o", False), ("refuse-all", True)]
    assert [row.overall.cases for row in board.rows] == [2, 1]
    assert board.baseline_tasks == "the task files given" and board.comparison is None
    compared = leaderboard(Sources.of([trajectories]), options, compare=True)
    assert compared.comparison is not None and compared.rows == board.rows


def test_min_cases_and_rank_by_come_with_the_options(trajectories):
    board = leaderboard(Sources.of([trajectories]), ScoringOptions(floor_tasks=()))
    assert [row.model for row in board.apart] == ["gpt-4o"]  # 2 cases < 20 (the default)
    assert "gpt-4o" not in [row.model for row in board.ranked]
    assert leaderboard(Sources.of([trajectories]), ScoringOptions(rank_by="balanced")).rank_by == "balanced"
    with pytest.raises(ValueError, match="rank_by='best'"):
        ScoringOptions(rank_by="best")


def test_two_files_for_one_domain_of_a_row_are_said(trajectories):
    plain = trajectories / "bank" / FILE_NAME
    copy = plain.with_name(plain.name + ".gz")
    copy.write_bytes(gzip.compress(plain.read_bytes()))
    problems = []
    options = ScoringOptions(floor_tasks=(), min_cases=0)
    board = leaderboard(Sources(files=(plain, copy)), options, on_problem=problems.append)
    (row,) = [row for row in board.rows if row.model == "gpt-4o"]
    assert row.files["bank"] == [plain.as_posix(), copy.as_posix()]
    assert problems == [
        f"{plain.as_posix()}, {copy.as_posix()}: several files for bank in one row (gpt-4o); pooled"
    ]


def test_a_leaderboard_over_two_run_folders_ranks_them_as_the_verb_does(run_folders, cli):
    board = leaderboard(Sources.of([run_folders]), ScoringOptions(min_cases=0), by=("goal",))
    done = cli("leaderboard", str(run_folders), "--format", "json", "--by", "goal", "--min-cases", "0")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown == json.loads(render_leaderboard(board, "json"))
    assert [row["model"] for row in shown] == ["reference", "refuse-all", "no-verify"]
    for row, data in zip(board.rows, shown, strict=True):
        overall = data["cells"]["Overall"]
        assert (overall["passed"], overall["cases"]) == (row.overall.passed, row.overall.cases)
        assert data["breakdowns"] == board.row_breakdowns(row)


def test_the_report_leaderboard_adds_no_verify_pass_hat_k_and_every_breakdown(run_folders):
    board = report_leaderboard(Sources.of([run_folders]), ScoringOptions())
    assert board.pass_hat_k and tuple(board.by) == ("goal", "judgement", "constraint")
    assert sum(row.floor for row in board.rows) == 2  # refuse-all and no-verify
    assert all(board.row_outcomes(row) for row in board.rows)
