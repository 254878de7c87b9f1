"""``score_paths``: sources stay apart, and a record whose goal is not a tool is one error."""

from __future__ import annotations

import json
from pathlib import Path

from sopbench.scoring import SOUND, ScoringReport, score_paths


def write(path: Path, content: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content))
    return path


def bank_record(make_record) -> dict:
    """The synthetic record with its goal renamed to the bank tool it stands for."""
    text = json.dumps(make_record()).replace('"get_account_balance"', '"get_account_balance"')
    return json.loads(text)


def test_equal_file_names_in_two_folders_are_two_sources(tmp_path: Path, make_record) -> None:
    write(tmp_path / "expA" / "x.json", [bank_record(make_record)])
    write(tmp_path / "expB" / "x.json", [bank_record(make_record)])
    scores = list(score_paths([tmp_path / "expA", tmp_path / "expB"], SOUND))
    assert [score.source for score in scores] == [
        (tmp_path / "expA" / "x.json").as_posix(),
        (tmp_path / "expB" / "x.json").as_posix(),
    ]
    assert scores[0].to_json()["source"] != scores[1].to_json()["source"]


def test_a_goal_that_is_not_a_tool_of_the_domain_is_one_error_for_the_record(
    tmp_path: Path, make_record
) -> None:
    bad = bank_record(make_record)
    bad["task"]["user_goal"] = "order_pizza"
    bad["interactions"] = bad["interactions"] * 3
    path = write(tmp_path / "x.json", [bad, bank_record(make_record)])
    report = ScoringReport()
    errors: list[Exception] = []
    scores = list(score_paths(path, SOUND, report=report, on_error=errors.append))
    assert [score.record for score in scores] == [1]
    assert len(errors) == 1
    assert "record 0" in str(errors[0]) and "'order_pizza' is not a tool of domain bank" in str(errors[0])
    assert "3 runs cannot be scored" in str(errors[0])
    assert report.runs == 4 and report.scored == 1
