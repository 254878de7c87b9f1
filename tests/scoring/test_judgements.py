"""The published extra checks are judgements of their own, one explanation per failed check."""

from __future__ import annotations

from sopbench.evaluation import PASSED
from sopbench.scoring import OracleReplay, judge_constraint_not_violated, judge_no_tool_call_error


def replay(invalid: list[str] = [], violations: list[str] = []) -> OracleReplay:  # noqa: B006 - read only
    return OracleReplay(oracle=None, invalid=list(invalid), violations=list(violations))  # type: ignore[arg-type]


def test_no_tool_call_error_counts_every_invalid_call_once() -> None:
    assert judge_no_tool_call_error(replay()) is PASSED
    one = judge_no_tool_call_error(replay(["a at step 2: there is no tool a"]))
    assert not one.passed and one.explanations == ("a at step 2: there is no tool a",)
    three = judge_no_tool_call_error(replay(["first", "second", "third"]))
    assert three.explanations == ("first (and 2 more invalid calls)",)
    two = judge_no_tool_call_error(replay(["first", "second"]))
    assert two.explanations == ("first (and 1 more invalid call)",)


def test_constraint_not_violated_speaks_of_outputs_in_the_plural_properly() -> None:
    assert judge_constraint_not_violated(replay()).passed
    three = judge_constraint_not_violated(replay(violations=["x", "y", "z"]))
    assert three.explanations == ("x (and 2 more outputs that differ from the oracle's)",)
