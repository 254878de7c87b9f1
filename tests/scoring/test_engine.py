"""Verdicts are kept by content across runs; a kept verdict is only reused for an equal run."""

from __future__ import annotations

import copy

from sopbench.scoring import SOPBENCH, SOUND

from .test_quirks import BANK_DB, LOGIN, login, record, task_json, verdict


def test_a_kept_verdict_is_not_reused_for_a_database_json_cannot_tell_apart() -> None:
    # Tuples and lists encode to the same JSON; the compat protocol compares databases with Python's
    # equality, for which they differ. Scoring the list version first must not decide the tuple's.
    task = task_json("bank", "get_account_balance", LOGIN, False, BANK_DB)
    as_tuple = copy.deepcopy(BANK_DB)
    as_tuple["accounts"]["alice"]["credit_cards"] = tuple(as_tuple["accounts"]["alice"]["credit_cards"])
    steps = [login(), ("get_account_balance", {"username": "alice"}, "1000.0")]
    assert verdict(record(task, steps, final_db=copy.deepcopy(BANK_DB)), SOPBENCH)["database_match"] is True
    assert verdict(record(task, steps, final_db=as_tuple), SOPBENCH)["database_match"] is False


def test_equal_runs_get_equal_verdicts_and_numbers_keep_their_type() -> None:
    task = task_json("bank", "get_account_balance", LOGIN, False, BANK_DB)
    steps = [login()]
    as_int = copy.deepcopy(BANK_DB)
    as_int["accounts"]["alice"]["balance"] = 1000
    first = verdict(record(task, steps), SOUND)
    assert verdict(record(task, steps), SOUND) == first  # a hit: the same verdict
    assert first["database"] is True
    assert verdict(record(task, steps, final_db=as_int), SOUND)["database"] is False  # 1000 is not 1000.0


def test_a_kept_verdict_is_not_reused_for_nan_that_json_writes_as_null() -> None:
    # orjson writes NaN as null: a database with NaN where the oracle's has null must still differ
    # under the compat protocol's Python equality, even after the null version was scored.
    with_null = copy.deepcopy(BANK_DB)
    with_null["accounts"]["alice"]["note"] = None
    with_nan = copy.deepcopy(with_null)
    with_nan["accounts"]["alice"]["note"] = float("nan")
    task = task_json("bank", "get_account_balance", LOGIN, False, with_null)
    steps = [login()]
    assert verdict(record(task, steps, final_db=copy.deepcopy(with_null)), SOPBENCH)["database_match"] is True
    assert verdict(record(task, steps, final_db=with_nan), SOPBENCH)["database_match"] is False
