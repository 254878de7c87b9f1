"""Summaries split by expected outcome, the refuse-all baseline, the leaderboard, justified refusals."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from sopbench.scoring import (
    SOPBENCH,
    VERDICT_KEYS,
    RunScore,
    ScoringReport,
    leaderboard,
    score_paths,
    summarize,
)
from sopbench.tasks import iter_all_tasks, task_from_json

FILE = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"


_RECORDS = itertools.count()


def _score(domain: str, passed: bool, should: bool, run: int = 0, source: str = FILE) -> RunScore:
    """A score of its own task (each call another record), unless it is a later run."""
    verdict = dict.fromkeys(VERDICT_KEYS, True)
    verdict.update(passed=passed, success=passed, database=passed, database_match=passed)
    record = next(_RECORDS) if run == 0 else 0
    return RunScore(source, domain, record, run, "sound", verdict, (), None, should, "goal")


def test_summary_splits_pass_rates_by_expected_outcome() -> None:
    scores = [
        _score("bank", True, True),
        _score("bank", False, True),
        _score("bank", True, False),
        _score("bank", True, False),
        _score("dmv", False, False),
    ]
    summary = summarize(scores)
    bank = summary.domains["bank"]
    assert (bank.runs, bank.passed, bank.pass_rate) == (4, 3, 0.75)
    assert bank.succeed_rate.rate == 0.5 and bank.refuse_rate.rate == 1.0
    assert bank.balanced == 0.75
    assert bank.failures["database"] == 1
    overall = summary.overall
    assert (overall.runs, overall.passed) == (5, 3)
    assert json.dumps(summary.as_dict())  # plain data


def test_refuse_all_balanced_score_is_one_half() -> None:
    scores = [_score("bank", False, True), _score("bank", True, False)]
    assert summarize(scores).domains["bank"].balanced == 0.5


def test_leaderboard_pools_cases_and_adds_the_refuse_all_row() -> None:
    scores = [
        _score("bank", True, True),
        _score("bank", False, False),
        _score("dmv", True, False),
        _score("dmv", True, False, run=1),  # only first runs count
    ]
    baseline = {"bank": _rate(1, 2), "dmv": _rate(1, 1), "all": _rate(2, 3)}
    rows = leaderboard(scores, baseline=baseline)
    model = next(row for row in rows if row.model == "gpt-4o")
    assert (model.mode, model.tool_list, model.user) == ("fc", "full", None)
    assert (model.cells["bank"].passed, model.cells["bank"].cases) == (1, 2)
    assert (model.overall.passed, model.overall.cases) == (2, 3)
    assert any(row.model == "refuse-all" and row.overall.cases == 3 for row in rows)
    # Each row also splits its Overall by the tasks' expected outcome.
    assert (model.pooled.should_succeed, model.pooled.should_refuse) == ([1, 1], [1, 2])
    assert model.pooled.balanced == 0.75
    assert model.as_dict()["should_refuse"] == {
        "passed": 1,
        "total": 2,
        "rate": 0.5,
        "ci95": [pytest.approx(0.0945, abs=1e-4), pytest.approx(0.9055, abs=1e-4)],
    }


def _rate(passed: int, total: int):
    from sopbench.scoring import Rate

    return Rate(passed, total)


def test_records_without_runs_are_counted_not_dropped(tmp_path: Path, published_tasks_dir: Path) -> None:
    task = next(iter(iter_all_tasks(published_tasks_dir)))
    raw = {
        "domain": task.domain,
        "setup": {},
        "task": {**_task_json(task), "user_goal": task.goal},
        "interactions": [],
    }
    path = tmp_path / "bank" / FILE
    path.parent.mkdir()
    path.write_text(json.dumps([raw, raw]))
    report = ScoringReport()
    assert list(score_paths(path, SOPBENCH, report=report)) == []
    assert len(report.records_without_runs) == 2 and report.records == 2


def _task_json(task) -> dict:
    return {
        "initial_database": task.initial_database,
        "constraint_parameters": task.constraint_parameters,
        "user_known": task.user_known,
        "constraints": task.constraints_json,
        "constraints_original": task.constraints_original_json,
        "action_should_succeed": task.action_should_succeed,
        "user_instruction": task.user_instruction,
        "user_prompt": task.user_prompt,
        "directed_action_graph": task.directed_action_graph.to_json(),
    }


def test_task_json_round_trips(published_tasks_dir: Path) -> None:
    task = next(iter(iter_all_tasks(published_tasks_dir)))
    again = task_from_json({**_task_json(task), "user_goal": task.goal}, domain=task.domain)
    assert again.goal == task.goal


def test_a_correct_refusal_is_not_a_failure_of_action_successfully_called() -> None:
    refusal = _score("bank", True, False)
    refusal.verdict["action_successfully_called"] = False  # no goal call: what a correct refusal is
    missed = _score("bank", False, True)
    missed.verdict["action_successfully_called"] = False
    summary = summarize([refusal, missed])
    assert summary.overall.failures["action_successfully_called"] == 1


def test_summary_reports_intervals_and_pass_hat_k_over_repeated_runs() -> None:
    scores = [
        RunScore(
            FILE,
            "bank",
            0,
            run,
            "sound",
            _score("bank", passed, True).verdict,
            (),
            None,
            True,
            "g",
            task_id="bank/g[0]",
        )
        for run, passed in enumerate([True, False, True])
    ]
    data = summarize(scores).overall.as_dict()
    assert data["pass_rate_ci95"][0] < 2 / 3 < data["pass_rate_ci95"][1]
    assert data["pass_hat_k"] == {"1": pytest.approx(2 / 3), "2": pytest.approx(1 / 3), "3": 0.0}
    assert data["pass_at_k_first"] == {"1": 1.0, "2": 1.0, "3": 1.0}
    assert data["tasks_with_k"] == {"1": 1, "2": 1, "3": 1}


def test_a_split_rate_is_clustered_over_exactly_the_runs_it_counts() -> None:
    # One task id expected to succeed in one pooled source and to be refused in another: each split
    # rate's interval must still be about that rate (the report draws rate - low as an error bar).
    from dataclasses import replace

    runs = [
        replace(_score("bank", passed, should, run=run), task_id="bank/7")
        for should, outcomes in ((True, (True, True, False)), (False, (False, False, True)))
        for run, passed in enumerate(outcomes)
    ]
    summary = summarize(runs).overall
    for rate in (summary.succeed_rate, summary.refuse_rate, summary.rate):
        assert sum(p for p, _ in rate.per_task) == rate.passed
        assert sum(n for _, n in rate.per_task) == rate.total
        low, high = rate.ci95
        assert low <= rate.rate <= high
