"""The bank domain: tools, checks, session, database model, and the published tasks and trajectories.

The published data (tasks, reference tables, trajectories) is read from ``../shared``; tests that
need it are skipped when it is absent. Two pieces of evidence that the domain behaves as the
original: every task's reference path gives the recorded outcome on the strict oracle, and replaying
the recorded agent calls on the lenient system reproduces the recorded tool outputs and databases.
"""

from __future__ import annotations

import csv
import gzip
import inspect
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from sopbench.constraints import Expr, Single, parse, rename, singles
from sopbench.domains import (
    SESSION_BEFORE_CREDENTIALS,
    LenientSystem,
    StrictSystem,
    canonical_json,
    get_domain,
    tool_not_found,
)
from sopbench.domains.bank import DOMAIN
from sopbench.domains.bank.state import BankDatabase

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TASKS_FILE = SHARED / "sopbench" / "tasks" / "bank_tasks.json.gz"
TABLES_FILE = SHARED / "reference" / "SOPBENCH_DOMAIN_TABLES.json"
TRAJECTORIES = SHARED / "sopbench" / "trajectories" / "bank"
SCORING_SEMANTICS = SHARED / "sopbench" / "bank_scoring_semantics.csv"

needs_shared = pytest.mark.skipif(
    not TASKS_FILE.exists(), reason="../shared/sopbench not found: published data needed"
)
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


# ---- the catalogue is complete -----------------------------------------------------------------


def test_domain_is_registered_and_valid() -> None:
    assert get_domain("bank") is DOMAIN
    assert DOMAIN.system_name == "Bank"
    assert DOMAIN.validate() == []


def test_every_tool_matches_its_published_signature() -> None:
    assert set(DOMAIN.tools) == set(DOMAIN.catalogue.tools)
    for name, published in DOMAIN.catalogue.tools.items():
        params = DOMAIN.tools[name].signature.parameters.values()
        named = [p for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        assert tuple(p.name for p in named) == published.params, name
        defaults = {p.name: p.default for p in named if p.default is not inspect.Parameter.empty}
        assert defaults == dict(published.defaults), name


def test_offered_tools_are_the_published_list() -> None:
    offered = [t.name for t in DOMAIN.offered_tools()]
    assert len(offered) == 25
    assert {"cancel_credit_card", "pay_bill_with_credit_card", "internal_get_database"}.isdisjoint(offered)


def catalogue_singles() -> Iterator[Single]:
    cat = DOMAIN.catalogue
    for table in (cat.innate, cat.required, cat.constraint_dependencies):
        for expr in table.values():
            yield from singles(expr)
    for pool in cat.customizable.values():
        for expr in pool:
            yield from singles(expr)


def test_every_constraint_has_both_wordings_filled() -> None:
    names = {s.name for s in catalogue_singles()} | set(DOMAIN.catalogue.links)
    names |= {link.name for link in DOMAIN.catalogue.links.values()}
    for name in names:
        wording = DOMAIN.wordings[name]
        assert wording.positive and wording.negative and wording.positive != wording.negative, name
    for single in catalogue_singles():
        for negated in (False, True):
            text = DOMAIN.describe_single(Single(single.name, single.params, negated))
            assert "{" not in text, text


@needs_shared
def test_worded_constraints_are_the_published_ones() -> None:
    tables = json.loads(TABLES_FILE.read_text())["bank"]
    assert set(DOMAIN.wordings) == set(tables["constraint_names_with_descriptions"])
    assert set(DOMAIN.checks) | {
        "set_authenticate_admin_password",
        "set_login_user",
        "set_logout_user",
    } == set(tables["state_tracker_methods"])


JSON_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}


def test_openai_schemas_are_valid_function_schemas() -> None:
    for tool in DOMAIN.offered_tools():
        schema = tool.openai_schema()
        assert schema["type"] == "function"
        function = schema["function"]
        assert function["name"] == tool.name and function["description"].strip()
        params = function["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert set(params["required"]) <= set(params["properties"]) <= set(tool.params)
        for prop in params["properties"].values():
            types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
            assert set(types) <= JSON_TYPES
        orjson.dumps(schema)  # serialisable as sent to a model


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


BAD_CALLS: list[tuple[str, Any, str]] = [
    ("wire_money", {"username": "ava"}, "Error: Tool wire_money not found."),
    (
        "cancel_credit_card",
        {"username": "ava", "card_number": CARD},
        "Error: Tool cancel_credit_card not found.",
    ),
    (
        "login_user",
        {"username": "ava"},
        "TypeError: Bank.login_user() missing 1 required positional argument: 'identification'",
    ),
    (
        "logout_user",
        {"username": "ava", "extra": 1},
        "TypeError: Bank.logout_user() got an unexpected keyword argument 'extra'",
    ),
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
    ("get_account_balance", '{"username": "ava"', None),
    (
        "get_account_balance",
        "[1, 2]",
        "Error: arguments of get_account_balance must be a JSON object, got list.",
    ),
    ("set_safety_box", {"username": ["ava"], "safety_box_new": "x"}, "TypeError: unhashable type: 'list'"),
]


@pytest.mark.parametrize(("tool", "arguments", "expected"), BAD_CALLS)
def test_bad_calls_become_error_text(tool: str, arguments: Any, expected: str | None) -> None:
    system = lenient()
    before = canonical_json(system.db)
    outcome = system.execute(tool, arguments)
    assert not outcome.ok
    if expected is None:
        assert outcome.content().startswith(f"Error: arguments of {tool} are not valid JSON")
    else:
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
    assert system.execute("get_account_balance", huge).content().startswith("Error: arguments")
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


@cache
def published_tasks() -> dict[str, list[dict[str, Any]]]:
    return json.loads(gzip.decompress(TASKS_FILE.read_bytes()))


def all_tasks() -> Iterator[tuple[str, dict[str, Any]]]:
    for goal, tasks in published_tasks().items():
        for task in tasks:
            yield goal, task


def test_our_bank_validates() -> None:
    BankDatabase.model_validate(bank())


@needs_shared
def test_every_published_task_database_validates() -> None:
    count = 0
    for _, task in all_tasks():
        BankDatabase.model_validate(task["initial_database"])
        count += 1
    assert count == 153


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


# ---- reference paths: the published outcome of every task --------------------------------------------


@cache
def default_dependencies() -> dict[str, Expr | None]:
    # Read from the published tables until the project derives them itself.
    tables = json.loads(TABLES_FILE.read_text())["bank"]
    return {tool: parse(expr) for tool, expr in tables["derived_default_dependency_full_expanded"].items()}


def linked_calls(expr: Expr | None, seen: list[Single]) -> list[Single]:
    """The link tools a task's constraints need, in order of first occurrence.

    A linked tool's own SOP may need another link first (authenticating the admin password needs a
    login), as in the published generator's expanded form; those come before it.
    """
    links = DOMAIN.catalogue.links
    for single in singles(expr):
        if single.name in links and all(s.name != single.name for s in seen):
            link = links[single.name]
            linked_calls(rename(default_dependencies()[link.name], single.param_map), seen)
            seen.append(single)
    return seen


def arguments_for(tool: str, variables: Mapping[str, str], known: Mapping[str, Any]) -> dict[str, Any]:
    """The tool's parameters taken from what the user knows (a parameter not renamed keeps its name)."""
    args = {}
    for param in DOMAIN.catalogue.tools[tool].params:
        variable = variables.get(param, param)
        if variable in known:
            args[param] = known[variable]
    return args


def reference_outcome(goal: str, task: Mapping[str, Any], mode: str) -> bool:
    constraints = parse(task["constraints"])
    dependencies = {**default_dependencies(), goal: constraints}
    oracle = StrictSystem(
        DOMAIN,
        task["initial_database"],
        task["constraint_parameters"],
        dependencies,
        options={"credit_cards": mode},
    )
    known = task["user_known"]
    for single in linked_calls(constraints, []):
        link = DOMAIN.catalogue.links[single.name]
        variables = {param: single.param_map.get(var, var) for param, var in link.param_map.items()}
        if not oracle.execute(link.name, arguments_for(link.name, variables, known)).ok:
            return False
    return oracle.execute(goal, arguments_for(goal, {}, known)).ok


@needs_shared
def test_reference_paths_give_the_published_outcome() -> None:
    disagreements = [
        (goal, task["user_prompt"][:60])
        for goal, task in all_tasks()
        if reference_outcome(goal, task, "list") != task["action_should_succeed"]
    ]
    assert disagreements == []


@needs_shared
def test_shipped_card_lookups_only_change_credit_card_goals() -> None:
    card_goals = {"cancel_credit_card", "get_credit_card_info", "pay_bill_with_credit_card"}
    changed = {
        goal
        for goal, task in all_tasks()
        if reference_outcome(goal, task, "dict") != task["action_should_succeed"]
    }
    assert changed and changed <= card_goals


# ---- replay of the published trajectories ------------------------------------------------------------


NOT_FOUND = "Error: Tool {} not found."


@dataclass
class Fidelity:
    calls: int = 0
    calls_reproduced: int = 0
    runs: int = 0
    databases_reproduced: int = 0
    misaligned: int = 0
    mismatches: list[tuple[int, str, str, str]] = field(default_factory=list)


def output_format(records: list[dict[str, Any]]) -> str:
    """Whether the file stored whole result pairs ("tuple", older runs) or only values ("value")."""
    for run in (run for r in records for run in r.get("interactions") or []):
        for message in run["interaction"]:
            if "tool_call_id" in message and message["content"].startswith(("(True", "(False")):
                return "tuple"
    return "value"


def answered_elsewhere(records: list[dict[str, Any]]) -> set[str]:
    """Tools this file shows answered by the system; older runs were offered internal_get_database."""
    return {
        message["tool_name"]
        for r in records
        for run in r.get("interactions") or []
        for message in run["interaction"]
        if "tool_call_id" in message and message["content"] != NOT_FOUND.format(message["tool_name"])
    } & set(DOMAIN.tools)


def offered_tools(record: Mapping[str, Any], extra: set[str]) -> set[str]:
    offered = {t.name for t in DOMAIN.offered_tools()} | extra
    if record["setup"]["tool_list"] == "full":
        return offered
    graph = record["task"]["directed_action_graph"]["nodes"]
    return offered & {node[0] for node in graph if isinstance(node, list)}


def replay_run(
    record: Mapping[str, Any],
    run: Mapping[str, Any],
    offered: set[str],
    fmt: str,
    mode: str,
    result: Fidelity,
    index: int,
) -> None:
    task = record["task"]
    system = LenientSystem(
        DOMAIN,
        task["initial_database"],
        task["constraint_parameters"],
        atomic=False,
        options={"credit_cards": mode},
    )
    messages = run["interaction"]
    position = 0
    while position < len(messages):
        message = messages[position]
        position += 1
        if "tool_call_id" in message or not message.get("tool_calls"):
            continue
        answers = []
        while position < len(messages) and "tool_call_id" in messages[position]:
            answers.append(messages[position])
            position += 1
        by_id = {answer["tool_call_id"]: answer for answer in answers}
        for number, call in enumerate(message["tool_calls"]):
            name, arguments = call["function"]["name"], call["function"]["arguments"]
            if name == "exit_conversation":
                position = len(messages)
                break
            answer = by_id.get(call["id"]) or (answers[number] if number < len(answers) else None)
            if answer is None:
                continue
            if name in offered:
                got = system.execute(name, arguments, offered_only=False).content(fmt)  # type: ignore[arg-type]
            else:
                got = tool_not_found(name).content()
            result.calls += 1
            if got == answer["content"]:
                result.calls_reproduced += 1
            else:
                result.mismatches.append((index, name, answer["content"][:80], got[:80]))
    result.runs += 1
    result.databases_reproduced += system.db == run["database"]


def replay_file(path: Path, mode: str) -> Fidelity:
    records = json.loads(gzip.decompress(path.read_bytes())) or []
    fmt, extra = output_format(records), answered_elsewhere(records)
    prompts = {r["task"]["user_prompt"] for r in records}
    result = Fidelity()
    for index, record in enumerate(records):
        for run in record.get("interactions") or []:
            first = next((m["content"] for m in run["interaction"] if m.get("sender") == "user"), None)
            # Misaligned: the conversation opens with another task's prompt. (A prompt found in no
            # task is a regenerated prompt of this same task, so that run is replayed.)
            if first != record["task"]["user_prompt"] and first in prompts:
                result.misaligned += 1
                continue
            replay_run(record, run, offered_tools(record, extra), fmt, mode, result, index)
    return result


@needs_shared
def test_replay_reproduces_recorded_outputs_and_databases() -> None:
    files = sorted(TRAJECTORIES.glob("*.json.gz"))
    semantics = {
        row["file"]: row["credit_cards_as_when_scored"] for row in csv.DictReader(SCORING_SEMANTICS.open())
    }
    assert {f.name.removesuffix(".gz") for f in files} == set(semantics)
    total = Counter()
    for path in files:
        by_mode = {mode: replay_file(path, mode) for mode in ("list", "dict")}
        # Whatever the scoring used, the tools the agents talked to looked cards up as stored.
        best = by_mode["list"]
        assert best.calls_reproduced >= by_mode["dict"].calls_reproduced, path.name
        assert best.misaligned == 0, path.name
        total.update(
            calls=best.calls, calls_ok=best.calls_reproduced, runs=best.runs, dbs_ok=best.databases_reproduced
        )
    assert total["calls_ok"] / total["calls"] >= 0.998, total
    assert total["dbs_ok"] / total["runs"] >= 0.997, total
