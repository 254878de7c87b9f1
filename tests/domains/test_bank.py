"""The bank domain: tools, checks, session, database model, and the published tasks and trajectories.

What every domain must satisfy (catalogue, wordings, schemas, calls that never reach a tool, task
databases) is checked in test_all_domains.py, and every task's reference path in
test_reference_paths.py. Here: the bank's own rules, what the shipped credit-card lookups change,
and the replay of the recorded bank trajectories (published data from ``../shared``, skipped when
it is absent).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from sopbench.constraints import Expr, parse
from sopbench.domains import (
    SESSION_BEFORE_CREDENTIALS,
    LenientSystem,
    StrictSystem,
    replay_calls,
    run_reference_path,
    tool_not_found_text,
)
from sopbench.domains.bank import DOMAIN
from sopbench.domains.bank.state import CARDS_AS_SHIPPED, CREDIT_CARDS_OPTION, BankDatabase
from sopbench.evaluation import canonical_json
from sopbench.replay import ReplaySummary, replay_file
from sopbench.tasks import Task

CARD = "4000 1234 5678 9010"
OTHER_CARD = "4000 0000 0000 0002"


def bank() -> dict[str, Any]:
    """A small bank of our own: two customers, one of them with two cards."""
    return {
        "accounts": {
            "ava": {
                "identification": "ava-secret",
                "admin_password": "ava-admin",
                "balance": 800.0,
                "owed_balance": 0.0,
                "credit_score": 640,
                "safety_box": "passport",
                "credit_cards": [
                    {"card_number": CARD, "credit_limit": 300.0, "credit_balance": 120.0},
                    {"card_number": OTHER_CARD, "credit_limit": 100.0, "credit_balance": 0.0},
                ],
            },
            "ben": {
                "identification": {"drivers_license_id": "B7654321", "drivers_license_state": "OR"},
                "admin_password": "ben-admin",
                "balance": 50.0,
                "owed_balance": 450.0,
                "credit_score": 600,
                "safety_box": "",
                "credit_cards": [],
            },
        },
        "foreign_exchange": {"EUR": 0.9, "JPY": 150.0},
        "interaction_time": "2025-03-01T10:00:00",
    }


def lenient(mode: str = "list", **parameters: Any) -> LenientSystem:
    return LenientSystem(DOMAIN, bank(), parameters, options={"credit_cards": mode})


def content(system: LenientSystem, tool: str, **arguments: Any) -> str:
    return system.execute(tool, arguments, offered_only=False).content()


def check(system: LenientSystem, name: str, **arguments: Any) -> bool:
    return DOMAIN.checks[name](system.ctx, **arguments)


# ---- tools -------------------------------------------------------------------------------------


def test_login_compares_identification_exactly() -> None:
    system = lenient()
    assert content(system, "login_user", username="ava", identification="ava-secret") == "True"
    assert content(system, "login_user", username="ava", identification="AVA-SECRET") == "False"
    licence = {"drivers_license_id": "B7654321", "drivers_license_state": "OR"}
    assert content(system, "login_user", username="ben", identification=licence) == "True"
    # Unknown user: the innate existence check fails, so the failure value, not an error.
    assert content(system, "login_user", username="zoe", identification="x") == "False"


def test_readers_return_pairs_and_raise_for_unknown_users() -> None:
    system = lenient()
    outcome = system.execute("get_account_balance", {"username": "ava"})
    assert outcome.raw == (True, 800.0)
    assert outcome.content("tuple") == "(True, 800.0)" and outcome.content("value") == "800.0"
    assert content(system, "get_account_balance", username="zoe") == "KeyError: 'zoe'"
    assert content(system, "get_credit_cards", username="zoe") == (
        "TypeError: 'NoneType' object is not subscriptable"
    )
    assert content(system, "internal_get_credit_score", username="zoe") == "False"


def test_transfer_converts_cents_and_rejects_non_positive_amounts() -> None:
    system = lenient()
    assert (
        content(
            system, "transfer_funds", username="ava", destination_username="ben", amount=2500, unit="cents"
        )
        == "True"
    )
    assert system.db["accounts"]["ava"]["balance"] == 775.0
    assert system.db["accounts"]["ben"]["balance"] == 75.0
    before = canonical_json(system.db)
    assert (
        content(system, "transfer_funds", username="ava", destination_username="ben", amount=0, unit="dollar")
        == "False"
    )
    assert canonical_json(system.db) == before


def test_transfer_to_unknown_recipient_keeps_the_debit_unless_atomic() -> None:
    published = LenientSystem(DOMAIN, bank(), atomic=False)
    outcome = published.execute(
        "transfer_funds", {"username": "ava", "destination_username": "zoe", "amount": 10, "unit": "dollar"}
    )
    assert outcome.content() == "KeyError: 'zoe'"
    assert published.db["accounts"]["ava"]["balance"] == 790.0
    safe = LenientSystem(DOMAIN, bank())
    safe.execute(
        "transfer_funds", {"username": "ava", "destination_username": "zoe", "amount": 10, "unit": "dollar"}
    )
    assert safe.db == bank()


def test_replayed_calls_give_the_same_story_as_texts_and_as_successes() -> None:
    def transfer(to: str, amount: float) -> dict[str, Any]:
        return {"username": "ava", "destination_username": to, "amount": amount, "unit": "dollar"}

    calls: list[tuple[str, Any]] = [
        ("transfer_funds", transfer("ben", 10)),
        ("transfer_funds", None),  # answered "not found": nothing runs
        ("transfer_funds", '{"username": "ava",'),  # not a JSON object: nothing runs
        ("no_such_tool", {}),
        ("transfer_funds", transfer("zoe", 5)),  # raises half-way: the debit stays, as published
        ("transfer_funds", transfer("ben", 0)),  # the tool's own refusal
    ]
    as_texts = LenientSystem(DOMAIN, bank(), atomic=False)
    texts = replay_calls(as_texts, calls, "value")
    as_successes = LenientSystem(DOMAIN, bank(), atomic=False)
    successes = replay_calls(as_successes, calls)

    assert texts[0] == "True"
    assert texts[1] == tool_not_found_text("transfer_funds")
    assert texts[2].startswith("Error: arguments of transfer_funds are not valid JSON")
    assert texts[3] == tool_not_found_text("no_such_tool")
    assert texts[4] == "KeyError: 'zoe'"
    assert texts[5] == "False"
    assert successes == [True, False, False, False, False, False]
    assert as_texts.db == as_successes.db
    assert as_successes.db["accounts"]["ava"]["balance"] == 800.0 - 10 - 5


def test_deposit_and_bill_divide_unless_the_unit_says_dollar() -> None:
    system = lenient()
    content(system, "deposit_funds", username="ben", amount=500, unit="USD", deposit_form="cash")
    assert system.db["accounts"]["ben"]["balance"] == 55.0
    content(system, "pay_bill", username="ben", amount=5, unit="dollars", note="extra arguments are ignored")
    assert system.db["accounts"]["ben"]["balance"] == 50.0


def test_loans_add_ten_percent_and_repayment_is_unbounded() -> None:
    system = lenient()
    content(system, "get_loan", username="ava", loan_amount=100)
    assert system.db["accounts"]["ava"]["balance"] == 900.0
    assert system.db["accounts"]["ava"]["owed_balance"] == 1.1 * 100
    content(system, "pay_loan", username="ava", pay_owed_amount_request=200)
    assert system.db["accounts"]["ava"]["owed_balance"] == 1.1 * 100 - 200
    assert content(system, "pay_loan", username="ava", pay_owed_amount_request=-1) == "False"


def test_exchange_and_maximum_loan() -> None:
    system = lenient()
    assert system.execute(
        "exchange_foreign_currency", {"amount": 200, "unit": "cent", "foreign_currency_type": "JPY"}
    ).raw == (True, 300.0)
    assert (
        content(system, "exchange_foreign_currency", amount=1, unit="dollar", foreign_currency_type="GBP")
        == "KeyError: 'GBP'"
    )
    assert system.execute("get_bank_maximum_loan_amount", {}).raw == (True, 0.0)
    assert system.execute("get_bank_maximum_loan_amount", {"bank_total_cash": 850}).raw == (True, 425.0)


def test_account_lifecycle() -> None:
    system = lenient()
    assert (
        content(system, "open_account", username="cy", identification="cy-pw", admin_password="cy-admin")
        == "True"
    )
    assert system.db["accounts"]["cy"] == {
        "identification": "cy-pw",
        "admin_password": "cy-admin",
        "balance": 0,
        "owed_balance": 0,
        "safety_box": "",
        "credit_cards": [],
    }
    # No credit score on a new account: reading it raises, as published.
    assert content(system, "internal_get_credit_score", username="cy") == "KeyError: 'credit_score'"
    assert (
        content(
            system, "set_account_information", username="cy", username_new="cyd", identification_new="new"
        )
        == "True"
    )
    assert "cy" not in system.db["accounts"] and system.db["accounts"]["cyd"]["identification"] == "new"
    assert list(system.db["accounts"])[-1] == "cyd"
    assert content(system, "close_account", username="cyd") == "True"
    assert content(system, "close_account", username="cyd") == "KeyError: 'cyd'"


def test_safety_box_and_admin_password() -> None:
    system = lenient()
    assert (
        content(system, "authenticate_admin_password", username="ava", admin_password="ava-admin") == "True"
    )
    assert content(system, "authenticate_admin_password", username="ava", admin_password="nope") == "False"
    content(system, "set_admin_password", username="ava", admin_password_new="fresh")
    assert system.db["accounts"]["ava"]["admin_password"] == "fresh"
    content(system, "set_safety_box", username="ava", safety_box_new="deeds")
    assert system.execute("get_safety_box", {"username": "ava"}).raw == (True, "deeds")


def test_credit_cards_follow_the_data_by_default() -> None:
    system = lenient()
    assert system.execute("get_credit_card_info", {"username": "ava", "card_number": CARD}).raw == (
        True,
        {"card_number": CARD, "credit_limit": 300.0, "credit_balance": 120.0},
    )
    assert system.execute("get_credit_card_info", {"username": "ava", "card_number": "1"}).raw == (False, {})
    assert system.execute("get_credit_card_info", {"username": "zoe", "card_number": CARD}).raw == (False, {})
    assert system.execute(
        "internal_check_credit_card_exist", {"username": "ava", "card_number": CARD}
    ).raw == (True, True)
    assert content(system, "pay_bill_with_credit_card", username="ava", amount=30, card_number=CARD) == "True"
    assert system.db["accounts"]["ava"]["credit_cards"][0]["credit_balance"] == 150.0
    assert content(system, "cancel_credit_card", username="ava", card_number=OTHER_CARD) == "True"
    assert [c["card_number"] for c in system.db["accounts"]["ava"]["credit_cards"]] == [CARD]
    assert content(system, "cancel_credit_card", username="ava", card_number=OTHER_CARD) == "False"


def test_credit_cards_as_the_shipped_code_reads_the_data() -> None:
    system = lenient("dict")
    assert system.execute("get_credit_card_info", {"username": "ava", "card_number": CARD}).raw == (False, {})
    assert system.execute(
        "internal_check_credit_card_exist", {"username": "ava", "card_number": CARD}
    ).raw == (True, False)
    assert content(system, "cancel_credit_card", username="ava", card_number=CARD) == "False"
    assert content(system, "pay_bill_with_credit_card", username="ava", amount=30, card_number=CARD) == "True"
    assert system.db == bank()
    content(system, "open_account", username="cy", identification="pw", admin_password="admin")
    assert system.db["accounts"]["cy"]["credit_cards"] == {}
    # A dict of cards keyed by number (the layout the shipped code was written for) is read by key.
    system.db["accounts"]["cy"]["credit_cards"][CARD] = {"credit_limit": 10.0, "credit_balance": 0.0}
    assert system.execute("get_credit_card_info", {"username": "cy", "card_number": CARD}).raw == (
        True,
        {"credit_limit": 10.0, "credit_balance": 0.0},
    )


def test_apply_credit_card_never_issues_a_card() -> None:
    for mode in ("list", "dict"):
        system = lenient(mode)
        assert (
            content(system, "apply_credit_card", username="ben", total_assets=9000, monthly_income=4000)
            == "True"
        )
        assert system.db == bank()
        assert (
            content(system, "apply_credit_card", username="zoe", total_assets=1, monthly_income=1)
            == "KeyError: 'credit_cards'"
        )
        assert content(
            system, "apply_credit_card", username="zoe", total_assets=1, monthly_income="lots"
        ) == ("TypeError: unsupported operand type(s) for /: 'str' and 'int'")


def test_unknown_credit_card_option_is_reported() -> None:
    # Checked where cards are looked up (the mechanism has no hook to check options up front).
    outcome = lenient("set").execute("get_credit_card_info", {"username": "ava", "card_number": CARD})
    assert outcome.content().startswith("ValueError: bank option 'credit_cards' must be one of")


# ---- checks ------------------------------------------------------------------------------------


def test_balance_checks_at_their_boundaries() -> None:
    system = lenient(maximum_owed_balance=450, minimum_account_balance_safety_box=800)
    assert check(system, "sufficient_account_balance", username="ava", amount=800.0)
    assert not check(system, "sufficient_account_balance", username="ava", amount=800.01)
    assert check(system, "safety_box_eligible", username="ava")
    assert not check(system, "get_loan_owed_balance_restr", username="ben")  # 450 owed, limit 450: strict <
    assert check(system, "no_owed_balance", username="ava") and not check(
        system, "no_owed_balance", username="ben"
    )
    assert not check(system, "pay_loan_account_balance_restr", username="ben")
    assert check(system, "pay_loan_amount_restr", username="ben", pay_owed_amount_request=50)
    with pytest.raises(KeyError, match="zoe"):
        check(system, "sufficient_account_balance", username="zoe", amount=1)


def test_amount_and_limit_checks() -> None:
    system = lenient(maximum_deposit=100, maximum_exchange=100)
    assert not check(system, "amount_positive_restr", amount=0) and check(
        system, "amount_positive_restr", amount=0.01
    )
    assert check(system, "maximum_deposit_limit", unit="dollar", amount=100)
    assert not check(system, "maximum_deposit_limit", unit="dollar", amount=100.5)
    assert check(system, "maximum_deposit_limit", unit="cents", amount=10000)
    assert check(system, "maximum_exchange_amount", unit="USD", amount=10000)  # no "dollar": cents
    assert not check(system, "maximum_exchange_amount", unit="dollars", amount=101)
    assert check(system, "call_get_database")
    with pytest.raises(TypeError):
        check(system, "amount_positive_restr", amount="5")


def test_credit_score_must_be_strictly_above_the_minimum() -> None:
    system = lenient(minimum_credit_score=640)
    assert not check(system, "minimal_elgibile_credit_score", username="ava")
    assert check(lenient(minimum_credit_score=639), "minimal_elgibile_credit_score", username="ava")
    with pytest.raises(TypeError, match="cannot unpack"):
        check(system, "minimal_elgibile_credit_score", username="zoe")


def test_credit_card_checks() -> None:
    system = lenient()
    assert not check(system, "no_credit_card_balance", username="ava")
    assert check(system, "no_credit_card_balance", username="ben")
    assert not check(system, "no_credit_card_balance_on_card", username="ava", card_number=CARD)
    assert check(system, "no_credit_card_balance_on_card", username="ava", card_number=OTHER_CARD)
    assert check(system, "not_over_credit_limit", username="ava", card_number=CARD, amount=180.0)
    assert not check(system, "not_over_credit_limit", username="ava", card_number=CARD, amount=180.5)
    with pytest.raises(KeyError, match="credit_balance"):
        check(system, "no_credit_card_balance_on_card", username="ava", card_number="1")
    shipped = lenient("dict")
    with pytest.raises(TypeError, match="list indices must be integers or slices, not dict"):
        check(shipped, "no_credit_card_balance", username="ava")
    assert check(shipped, "no_credit_card_balance", username="ben")
    with pytest.raises(KeyError, match="credit_limit"):
        check(shipped, "not_over_credit_limit", username="ava", card_number=CARD, amount=1)


# ---- session (strict oracle) --------------------------------------------------------------------


def strict(quirks: frozenset[str] = frozenset(), **dependencies: Expr | None) -> StrictSystem:
    table: dict[str, Expr | None] = dict.fromkeys(DOMAIN.tools)
    table["get_account_balance"] = parse(["single", "logged_in_user", {"username": "username"}])
    table["set_safety_box"] = parse(["single", "authenticated_admin_password", {"username": "username"}])
    table.update(dependencies)
    return StrictSystem(DOMAIN, bank(), None, table, quirks=quirks)


def test_login_session_effect_and_logout() -> None:
    oracle = strict()
    assert oracle.execute("get_account_balance", {"username": "ava"}).raw is False
    assert oracle.execute("login_user", {"username": "ava", "identification": "wrong"}).raw is False
    assert oracle.execute("get_account_balance", {"username": "ava"}).raw is False
    assert oracle.execute("login_user", {"username": "ava", "identification": "ava-secret"}).raw is True
    assert oracle.execute("get_account_balance", {"username": "ava"}).raw == (True, 800.0)
    assert oracle.execute("get_account_balance", {"username": "ben"}).raw is False  # someone else
    oracle.execute("logout_user", {"username": "ava"})
    assert oracle.session == DOMAIN.new_session()


def test_admin_flag_is_global_and_cleared_by_logout() -> None:
    oracle = strict()
    oracle.execute("authenticate_admin_password", {"username": "ben", "admin_password": "ben-admin"})
    # The flag is not per user: ben's password lets the oracle accept ava's safety-box change.
    assert oracle.execute("set_safety_box", {"username": "ava", "safety_box_new": "gold"}).raw is True
    oracle.execute("logout_user", {"username": "ben"})
    assert oracle.execute("set_safety_box", {"username": "ava", "safety_box_new": "lead"}).raw is False


def test_published_session_quirk_logs_in_on_a_wrong_password() -> None:
    oracle = strict(frozenset({SESSION_BEFORE_CREDENTIALS}))
    assert oracle.execute("login_user", {"username": "ava", "identification": "wrong"}).raw is False
    assert oracle.execute("get_account_balance", {"username": "ava"}).raw == (True, 800.0)


def test_lenient_session_never_changes() -> None:
    system = lenient()
    content(system, "login_user", username="ava", identification="ava-secret")
    assert system.session == DOMAIN.new_session()
    assert not check(system, "logged_in_user", username="ava")


# ---- bad input from a model never raises and never writes ----------------------------------------


# Calls that fail before a tool runs (unknown tools, arguments that are not a JSON object, missing or
# unexpected arguments) are checked for every domain in test_all_domains.py.
BAD_CALLS: list[tuple[str, Any, str]] = [
    (
        "transfer_funds",
        {"username": "ava", "destination_username": "ben", "amount": "ten", "unit": "dollar"},
        "TypeError: '>' not supported between instances of 'str' and 'int'",
    ),
    (
        "deposit_funds",
        {"username": "ava", "amount": 5, "unit": None, "deposit_form": "cash"},
        "TypeError: argument of type 'NoneType' is not iterable",
    ),
    ("set_safety_box", {"username": ["ava"], "safety_box_new": "x"}, "TypeError: unhashable type: 'list'"),
]


@pytest.mark.parametrize(("tool", "arguments", "expected"), BAD_CALLS)
def test_bad_calls_become_error_text(tool: str, arguments: Any, expected: str) -> None:
    system = lenient()
    before = canonical_json(system.db)
    outcome = system.execute(tool, arguments)
    assert not outcome.ok
    assert outcome.content() == expected
    assert canonical_json(system.db) == before


def test_megabyte_strings_are_handled() -> None:
    system = lenient()
    huge = "x" * 1_000_000
    assert (
        system.execute("login_user", json.dumps({"username": huge, "identification": huge})).content()
        == "False"
    )
    assert system.execute("get_safety_box", {"username": huge}).content() == f"KeyError: '{huge}'"
    assert system.db == bank()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(
    tool=st.sampled_from(sorted(DOMAIN.tools)),
    arguments=st.dictionaries(
        st.sampled_from(["username", "amount", "unit", "card_number", "identification", "x"])
        | st.text(max_size=4),
        JSON_VALUES,
        max_size=5,
    ),
)
def test_execute_never_raises(tool: str, arguments: dict[str, Any]) -> None:
    system = LenientSystem(DOMAIN, bank())
    outcome = system.execute(tool, json.dumps(arguments), offered_only=False)
    assert isinstance(outcome.content(), str)
    if not outcome.ok:
        assert system.db == bank()


# ---- the database model ----------------------------------------------------------------------------


def test_our_bank_validates() -> None:
    BankDatabase.model_validate(bank())


@pytest.mark.parametrize(
    ("breakage", "location"),
    [
        (lambda db: db.update(accounts=["ava", "ben"]), "accounts"),
        (lambda db: db["accounts"]["ava"].update(balance="800"), "accounts.ava.balance"),
        (lambda db: db["accounts"]["ava"]["credit_cards"][0].pop("card_number"), "accounts.ava.credit_cards"),
        (lambda db: db["accounts"]["ben"].pop("admin_password"), "accounts.ben.admin_password"),
        (lambda db: db.pop("foreign_exchange"), "foreign_exchange"),
    ],
)
def test_a_broken_database_is_rejected_with_its_location(breakage: Any, location: str) -> None:
    db = bank()
    breakage(db)
    with pytest.raises(ValidationError) as error:
        BankDatabase.model_validate(db)
    assert location in str(error.value)


# ---- the published tasks and trajectories --------------------------------------------------------
# Every task's reference path (with the cards looked up as stored) is checked for all domains in
# test_reference_paths.py; here, what the shipped card lookups change.


def test_shipped_card_lookups_only_change_credit_card_goals(
    published_tasks: Callable[[str], list[Task]],
) -> None:
    card_goals = {"cancel_credit_card", "get_credit_card_info", "pay_bill_with_credit_card"}
    shipped = {CREDIT_CARDS_OPTION: CARDS_AS_SHIPPED}
    changed = {
        task.goal
        for task in published_tasks("bank")
        if run_reference_path(DOMAIN, task, options=shipped).goal_succeeded != task.action_should_succeed
    }
    assert changed and changed <= card_goals


def test_replay_reproduces_recorded_outputs_and_databases(
    shared_dir: Path, published_trajectories_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = sorted((published_trajectories_dir / "bank").glob("*.json.gz"))
    with (shared_dir / "sopbench" / "bank_scoring_semantics.csv").open() as handle:
        semantics = {row["file"]: row["credit_cards_as_when_scored"] for row in csv.DictReader(handle)}
    assert {f.name.removesuffix(".gz") for f in files} == set(semantics)
    summary = ReplaySummary()
    for path in files:
        as_stored = list(replay_file(path))
        with monkeypatch.context() as patch:
            patch.setitem(DOMAIN.options, CREDIT_CARDS_OPTION, CARDS_AS_SHIPPED)
            as_shipped = list(replay_file(path))
        # Whatever the scoring used, the tools the agents talked to looked cards up as stored.
        stored_matching = sum(replay.outputs_matching for replay in as_stored)
        assert stored_matching >= sum(replay.outputs_matching for replay in as_shipped), path.name
        assert not any(replay.misaligned for replay in as_stored), path.name
        for replay in as_stored:
            summary.add(replay)
    (total,) = summary.rows()
    assert total["tool_outputs_matching"] / total["tool_outputs"] >= 0.998, total
    assert total["final_databases_matching"] / total["runs"] >= 0.997, total
