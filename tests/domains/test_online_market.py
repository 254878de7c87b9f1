"""The online-market domain: tools, checks, session, database model.

What every domain must satisfy (catalogue, wordings, schemas, calls that never reach a tool, task
databases) is checked in test_all_domains.py. The published repository holds no online-market
trajectories, so the reference paths of the 187 tasks (test_reference_paths.py) are the evidence
that the domain behaves as the original.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from sopbench.constraints import Single, parse
from sopbench.domains import (
    SESSION_BEFORE_CREDENTIALS,
    LenientSystem,
    StrictSystem,
)
from sopbench.domains.online_market import DOMAIN, OnlineMarketDatabase
from sopbench.evaluation import canonical_json


def shop() -> dict[str, Any]:
    """A small shop of our own: two customers, three products, two coupons."""
    return {
        "accounts": {
            "maya": {
                "password": "pw-maya",
                "cart": [],
                "credit_rating": "good",
                "order_history": [
                    {
                        "order_id": "ORD-1",
                        "items": [{"product_id": "Kettle", "quantity": 2, "price": 60.0}],
                        "status": "Delivered",
                        "total_amount": 60.0,
                        "shipping_address": "1 Elm Road, Leeds",
                        # 181 days before the interaction time's date: inside a 182-day period.
                        "order_placed_date": "2024-07-18",
                        "number_of_exchanges": 1,
                        "coupons_used": ["TEAPOT5"],
                    },
                    {
                        "order_id": "ORD-2",
                        "items": [{"product_id": "Mug", "quantity": 1, "price": 8.5}],
                        "status": "Processing",
                        "total_amount": 8.5,
                        "shipping_address": "1 Elm Road, Leeds",
                        # 182 days before: just outside 182 days, because the clock reads 12:56:39.
                        "order_placed_date": "2024-07-17",
                        "number_of_exchanges": 2,
                        "coupons_used": [],
                    },
                ],
                "shipping_addresses": [{"address": "1 Elm Road, Leeds"}],
                "default_address_index": 0,
            },
            "omar": {
                "password": "pw-omar",
                "cart": [{"product_id": "Mug", "quantity": 2, "price": 17.0}],
                "credit_rating": "Suspended",
                "order_history": [],
                "shipping_addresses": [],
                "default_address_index": None,
            },
        },
        "products": {
            "Kettle": {
                "price": 30.0,
                "stock": 4,
                "description": "A steel kettle",
                "reviews": [{"username": "maya", "rating": 4, "comment": "Boils fast"}],
                "average_rating": 4,
            },
            "Mug": {"price": 8.5, "stock": 0, "description": "A mug", "reviews": [], "average_rating": 0},
            "Teapot": {
                "price": 25.0,
                "stock": 10,
                "description": "A teapot",
                "reviews": [],
                "average_rating": 0,
            },
        },
        "coupons": {
            "TEAPOT5": {
                "discount_value": 5,
                "discount_type": "flat",
                "valid_products": ["Teapot"],
                "expiration_date": "2025-01-16",
            },
            "KETTLE10": {
                "discount_value": 10,
                "discount_type": "percentage",
                "valid_products": ["Kettle"],
                "expiration_date": "2025-01-15",
            },
        },
        "interaction_time": "2025-01-15T12:56:39",
    }


@pytest.fixture
def market() -> LenientSystem:
    return LenientSystem(DOMAIN, shop(), atomic=False)


def strict(database: dict[str, Any] | None = None, **kwargs: Any) -> StrictSystem:
    """An oracle whose every tool requires only that its user is logged in (when it has one)."""
    deps = {
        name: parse(["single", "logged_in_user", {"username": "username"}])
        if "username" in spec.params
        else None
        for name, spec in DOMAIN.tools.items()
    }
    deps["login_user"] = None
    return StrictSystem(DOMAIN, database or shop(), None, deps, **kwargs)


# ---- wordings ------------------------------------------------------------------------------


def test_wordings_fill_variables_and_parameters() -> None:
    single = Single.of("within_review_limits", {"rating": "stars"})
    assert DOMAIN.describe_single(single) == "The rating stars lies between 1 and 5, both included."
    negated = Single.of("not less_than_max_exchanges", {"username": "who", "order_id": "oid"})
    assert DOMAIN.describe_single(negated, {"max_exchange_times": 3}) == (
        "The order oid of the user who has been exchanged 3 times or more."
    )


# ---- tools -----------------------------------------------------------------------------------


def test_login_checks_the_password(market: LenientSystem) -> None:
    assert market.execute("login_user", {"username": "maya", "password": "pw-maya"}).raw is True
    assert market.execute("login_user", {"username": "maya", "password": "nope"}).raw is False
    # The innate existence check refuses an unknown user with plain False.
    assert market.execute("login_user", {"username": "zed", "password": "x"}).content() == "False"


def test_add_to_cart_moves_stock_into_the_cart(market: LenientSystem) -> None:
    outcome = market.execute("add_to_cart", '{"username": "maya", "product_id": "Kettle", "quantity": 3}')
    assert outcome.ok and outcome.content() == "True"
    assert market.db["products"]["Kettle"]["stock"] == 1
    assert market.db["accounts"]["maya"]["cart"] == [{"product_id": "Kettle", "quantity": 3, "price": 90.0}]
    # No stock check in the tool itself: the oracle's SOP is what refuses over-ordering.
    assert market.execute("add_to_cart", {"username": "maya", "product_id": "Mug", "quantity": 1}).ok
    assert market.db["products"]["Mug"]["stock"] == -1


def test_add_to_cart_innate_failures_and_partial_write(market: LenientSystem) -> None:
    for args in ({"product_id": "Ghost", "quantity": 1}, {"product_id": "Kettle", "quantity": 0}):
        assert market.execute("add_to_cart", {"username": "maya", **args}).content() == "False"
    wrong_type = market.execute("add_to_cart", {"username": "maya", "product_id": "Kettle", "quantity": "2"})
    assert wrong_type.content() == "TypeError: '>' not supported between instances of 'str' and 'int'"
    unknown = market.execute("add_to_cart", {"username": "zed", "product_id": "Kettle", "quantity": 1})
    assert unknown.content() == "KeyError: 'zed'"
    assert market.db["products"]["Kettle"]["stock"] == 3  # published partial write kept (atomic=False)


def test_place_order_builds_the_order_and_empties_the_cart(market: LenientSystem) -> None:
    market.execute("add_to_cart", {"username": "maya", "product_id": "Teapot", "quantity": 1})
    market.execute("add_to_cart", {"username": "maya", "product_id": "Mug", "quantity": 1})
    assert market.execute("place_order", {"username": "maya"}).ok
    account = market.db["accounts"]["maya"]
    assert account["cart"] == []
    assert account["order_history"][-1] == {
        "order_id": "ORD-3",
        "items": [
            {"product_id": "Teapot", "quantity": 1, "price": 25.0},
            {"product_id": "Mug", "quantity": 1, "price": 8.5},
        ],
        "status": "Processing",
        "total_amount": 33.5,
        "shipping_address": "1 Elm Road, Leeds",
        "order_placed_date": "2025-01-15T12:56:39",
    }
    # The timestamp cannot be read by the date-based checks (published behaviour).
    with pytest.raises(ValueError, match="unconverted data remains"):
        DOMAIN.checks["within_return_period"](market.ctx, "maya", "ORD-3")


def test_place_order_errors(market: LenientSystem) -> None:
    assert market.execute("place_order", {"username": "omar"}).content() == (
        "TypeError: list indices must be integers or slices, not NoneType"
    )
    assert market.execute("place_order", {"username": "zed"}).content() == (
        "TypeError: 'NoneType' object is not subscriptable"
    )
    empty = market.execute("place_order", {"username": "maya"})
    assert empty.ok and market.db["accounts"]["maya"]["order_history"][-1]["total_amount"] == 0


def test_add_shipping_address_sets_the_first_default(market: LenientSystem) -> None:
    omar = market.db["accounts"]["omar"]
    assert market.execute("add_shipping_address", {"username": "omar", "address": "9 Pine St"}).ok
    assert omar["shipping_addresses"] == [{"address": "9 Pine St"}] and omar["default_address_index"] == 0
    assert market.execute("add_shipping_address", {"username": "omar", "address": "2 Oak St"}).ok
    assert omar["default_address_index"] == 0
    assert market.execute("view_shipping_addresses", {"username": "omar"}).content() == (
        "[{'address': '9 Pine St'}, {'address': '2 Oak St'}]"
    )


def test_readers_return_pairs(market: LenientSystem) -> None:
    details = market.execute("get_product_details", {"product_id": "Mug"})
    assert details.raw == (True, shop()["products"]["Mug"])
    assert details.content("tuple").startswith("(True, {'price': 8.5")
    assert market.execute("get_product_details", {"product_id": "Ghost"}).raw is False
    assert market.execute("view_cart", {"username": "omar"}).value == [
        {"product_id": "Mug", "quantity": 2, "price": 17.0}
    ]
    assert market.execute("view_cart", {"username": "zed"}).content() == "KeyError: 'zed'"
    assert market.execute("get_coupons_used", {"username": "maya"}).raw == (True, ["TEAPOT5"])
    assert market.execute("internal_check_user_credit_status", {"username": "omar"}).raw == (
        True,
        "Suspended",
    )
    assert market.execute("internal_check_user_credit_status", {"username": "zed"}).raw is False
    assert market.execute("internal_get_interaction_time", {}).raw == (True, "2025-01-15T12:56:39")
    assert market.execute("internal_get_coupon_details", {"coupon_code": "NONE"}).raw is False
    assert market.execute("internal_check_order_exist", {"username": "maya", "order_id": "ORD-2"}).raw == (
        True,
        True,
    )
    assert market.execute("internal_check_order_exist", {"username": "omar", "order_id": "ORD-2"}).raw == (
        True,
        False,
    )
    assert market.execute("internal_check_order_exist", {"username": "zed", "order_id": "ORD-2"}).raw is False


def test_internal_get_database_is_bare_and_not_offered(market: LenientSystem) -> None:
    assert market.invoke("internal_get_database", {}) is market.db
    assert (
        market.execute("internal_get_database", {}).content()
        == "Error: Tool internal_get_database not found."
    )
    detached = market.execute("internal_get_database", {}, offered_only=False).raw
    assert detached == market.db and detached is not market.db  # outcomes never alias the live database


def test_get_order_details(market: LenientSystem) -> None:
    found = market.execute("get_order_details", {"username": "maya", "order_id": "ORD-2"})
    assert found.value["status"] == "Processing"
    assert market.execute("get_order_details", {"username": "maya", "order_id": "ORD-9"}).raw == (True, None)
    assert DOMAIN.tools["get_order_details"].failure == (False, {})


def test_cancel_and_return_set_the_status(market: LenientSystem) -> None:
    orders = market.db["accounts"]["maya"]["order_history"]
    assert market.execute("cancel_order", {"username": "maya", "order_id": "ORD-2"}).ok
    assert market.execute("return_order", {"username": "maya", "order_id": "ORD-1"}).ok
    assert [order["status"] for order in orders] == ["Refunding", "Canceled"]
    assert market.execute("cancel_order", {"username": "maya", "order_id": "ORD-7"}).content() == (
        "TypeError: 'NoneType' object does not support item assignment"
    )


def test_exchange_product_keeps_published_arithmetic(market: LenientSystem) -> None:
    args = {"username": "maya", "order_id": "ORD-1", "old_product_id": "Kettle", "new_product_id": "Teapot"}
    assert market.execute("exchange_product", {**args, "quantity": 3}).ok
    order = market.db["accounts"]["maya"]["order_history"][0]
    # Quantity field unchanged, price = new price x quantity, exchanges not counted.
    assert order["items"] == [{"product_id": "Teapot", "quantity": 2, "price": 75.0}]
    assert order["total_amount"] == 75.0 and order["number_of_exchanges"] == 1
    products = market.db["products"]
    assert (products["Teapot"]["stock"], products["Kettle"]["stock"]) == (7, 6)


def test_exchange_product_failures(market: LenientSystem) -> None:
    args = {"username": "maya", "order_id": "ORD-1", "old_product_id": "Mug", "new_product_id": "Teapot"}
    assert market.execute("exchange_product", {**args, "quantity": -1}).content() == "False"
    assert market.execute("exchange_product", {**args, "new_product_id": "Ghost", "quantity": 1}).raw is False
    missing_item = market.execute("exchange_product", {**args, "quantity": 2})
    assert missing_item.content() == "TypeError: 'NoneType' object is not subscriptable"
    assert market.db["products"]["Teapot"]["stock"] == 8  # reduced before the failure (published)


def test_use_coupon_discounts(market: LenientSystem) -> None:
    order = market.db["accounts"]["maya"]["order_history"][0]
    assert market.execute(
        "use_coupon", {"username": "maya", "order_id": "ORD-1", "coupon_code": "KETTLE10"}
    ).ok
    assert order["total_amount"] == 54.0 and order["coupons_used"] == ["TEAPOT5", "KETTLE10"]
    assert market.execute(
        "use_coupon", {"username": "maya", "order_id": "ORD-1", "coupon_code": "TEAPOT5"}
    ).ok
    assert order["total_amount"] == 49.0
    assert (
        market.execute("use_coupon", {"username": "maya", "order_id": "ORD-1", "coupon_code": "NO"}).raw
        is False
    )
    unknown = market.execute(
        "use_coupon", {"username": "maya", "order_id": "ORD-8", "coupon_code": "TEAPOT5"}
    )
    assert unknown.content() == "StopIteration: "


def test_use_coupon_adds_the_coupon_list_when_missing(market: LenientSystem) -> None:
    market.execute("add_to_cart", {"username": "maya", "product_id": "Teapot", "quantity": 1})
    market.execute("place_order", {"username": "maya"})
    assert market.execute(
        "use_coupon", {"username": "maya", "order_id": "ORD-3", "coupon_code": "TEAPOT5"}
    ).ok
    order = market.db["accounts"]["maya"]["order_history"][2]
    assert list(order)[-1] == "coupons_used" and order["total_amount"] == 20.0


def test_add_review_recomputes_the_average(market: LenientSystem) -> None:
    args = {"product_id": "Kettle", "username": "omar", "comment": "ok"}
    assert market.execute("add_review", {**args, "rating": 1}).ok
    assert market.db["products"]["Kettle"]["average_rating"] == 2.5
    assert market.execute("add_review", {**args, "rating": 4.9}).ok
    assert market.db["products"]["Kettle"]["average_rating"] == 3.0  # int(4.9) == 4
    bad = market.execute("add_review", {**args, "rating": "great"})
    assert bad.content() == "ValueError: invalid literal for int() with base 10: 'great'"
    assert len(market.db["products"]["Kettle"]["reviews"]) == 4  # appended before the failure
    assert market.execute("add_review", {**args, "product_id": "Ghost", "rating": 3}).raw is False


# ---- checks ----------------------------------------------------------------------------------


def check(system: LenientSystem, name: str, **arguments: Any) -> bool:
    return DOMAIN.checks[name](system.ctx, **arguments)


def test_argument_checks_at_their_boundaries(market: LenientSystem) -> None:
    assert check(market, "amount_positive_restr", amount=0.01)
    assert not check(market, "amount_positive_restr", amount=0)
    assert check(market, "within_review_limits", rating=1) and check(market, "within_review_limits", rating=5)
    assert not check(market, "within_review_limits", rating=0)
    assert not check(market, "within_review_limits", rating=5.5)
    narrow = LenientSystem(DOMAIN, shop(), {"rating_lower_bound": 2, "rating_upper_bound": 3})
    assert not check(narrow, "within_review_limits", rating=1) and check(
        narrow, "within_review_limits", rating=3
    )


def test_stock_cart_and_address_checks(market: LenientSystem) -> None:
    assert check(market, "enough_stock", product_id="Kettle", quantity=4)
    assert not check(market, "enough_stock", product_id="Kettle", quantity=5)
    with pytest.raises(TypeError, match="cannot unpack non-iterable bool object"):
        check(market, "enough_stock", product_id="Ghost", quantity=1)
    assert check(market, "has_items_in_cart", username="omar")
    assert not check(market, "has_items_in_cart", username="maya")
    assert check(market, "has_shipping_address", username="maya")
    assert not check(market, "has_shipping_address", username="omar")
    with pytest.raises(KeyError):
        check(market, "has_shipping_address", username="zed")
    assert not check(
        market, "not_already_added_shipping_address", username="maya", address="1 ELM ROAD, leeds"
    )
    assert check(market, "not_already_added_shipping_address", username="maya", address="2 Elm Road, Leeds")


def test_review_checks(market: LenientSystem) -> None:
    assert not check(market, "unique_review", product_id="Kettle", username="maya")
    assert check(market, "unique_review", product_id="Kettle", username="omar")
    assert check(market, "product_bought_by_user", username="maya", product_id="Mug")
    assert not check(market, "product_bought_by_user", username="maya", product_id="Teapot")
    assert not check(market, "product_bought_by_user", username="omar", product_id="Mug")


def test_order_checks(market: LenientSystem) -> None:
    assert check(market, "order_delivered", username="maya", order_id="ORD-1")
    assert not check(market, "order_delivered", username="maya", order_id="ORD-2")
    assert check(market, "order_processing", username="maya", order_id="ORD-2")
    assert check(market, "order_delivered_or_refunding", username="maya", order_id="ORD-1")
    assert check(market, "product_exists_in_order", username="maya", order_id="ORD-1", product_id="Kettle")
    assert not check(market, "product_exists_in_order", username="maya", order_id="ORD-1", product_id="Mug")
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'get'"):
        check(market, "product_exists_in_order", username="maya", order_id="ORD-9", product_id="Mug")
    with pytest.raises(TypeError, match="not subscriptable"):
        check(market, "order_delivered", username="maya", order_id="ORD-9")


def test_period_and_exchange_checks_at_their_boundaries(market: LenientSystem) -> None:
    # ORD-1 was placed 181 days and ORD-2 182 days (plus the clock's 12:56:39) before now.
    assert check(market, "within_return_period", username="maya", order_id="ORD-1")
    assert not check(market, "within_return_period", username="maya", order_id="ORD-2")
    longer = LenientSystem(DOMAIN, shop(), {"return_period": 183, "exchange_period": 181})
    assert check(longer, "within_return_period", username="maya", order_id="ORD-2")
    assert not check(longer, "within_exchange_period", username="maya", order_id="ORD-1")
    assert check(market, "within_exchange_period", username="maya", order_id="ORD-2")
    assert check(market, "less_than_max_exchanges", username="maya", order_id="ORD-1")
    assert not check(market, "less_than_max_exchanges", username="maya", order_id="ORD-2")


def test_credit_checks_ignore_case(market: LenientSystem) -> None:
    assert check(market, "credit_status_not_suspended", username="maya")
    assert not check(market, "credit_status_not_suspended", username="omar")
    assert not check(market, "credit_status_not_restricted_or_suspended", username="omar")
    assert check(market, "credit_status_not_restricted_or_suspended", username="maya")
    assert not check(market, "credit_status_excellent", username="maya")
    market.db["accounts"]["maya"]["credit_rating"] = "EXCELLENT"
    assert check(market, "credit_status_excellent", username="maya")


def test_coupon_checks(market: LenientSystem) -> None:
    # Expiry is the date's midnight, compared with the current time: the 15th is already past.
    assert not check(market, "coupon_not_expired", coupon_code="KETTLE10")
    assert check(market, "coupon_not_expired", coupon_code="TEAPOT5")
    assert check(market, "coupon_valid", username="maya", order_id="ORD-1", coupon_code="KETTLE10")
    assert not check(market, "coupon_valid", username="maya", order_id="ORD-1", coupon_code="TEAPOT5")
    assert not check(market, "coupon_not_already_used", username="maya", coupon_code="TEAPOT5")
    assert check(market, "coupon_not_already_used", username="maya", coupon_code="KETTLE10")


# ---- session and the strict oracle -----------------------------------------------------------


def test_session_effects_in_the_oracle() -> None:
    oracle = strict()
    assert oracle.execute("view_cart", {"username": "maya"}).raw is False  # not logged in
    assert oracle.execute("login_user", {"username": "maya", "password": "bad"}).raw is False
    assert oracle.session == {"logged_in_user": None}  # a failed login logs nobody in
    assert oracle.execute("login_user", {"username": "maya", "password": "pw-maya"}).raw is True
    assert oracle.session == {"logged_in_user": "maya"}
    assert oracle.execute("view_cart", {"username": "maya"}).raw == (True, [])
    assert oracle.execute("view_cart", {"username": "omar"}).raw is False
    assert oracle.execute("logout_user", {"username": "maya"}).raw is True
    assert oracle.session == {"logged_in_user": None}
    assert oracle.execute("view_cart", {"username": "maya"}).raw is False


def test_published_quirk_logs_in_on_a_wrong_password() -> None:
    oracle = strict(quirks=frozenset({SESSION_BEFORE_CREDENTIALS}))
    assert oracle.execute("login_user", {"username": "maya", "password": "bad"}).raw is False
    assert oracle.session == {"logged_in_user": "maya"}


def test_lenient_system_never_logs_in(market: LenientSystem) -> None:
    market.execute("login_user", {"username": "maya", "password": "pw-maya"})
    assert not check(market, "logged_in_user", username="maya")


# ---- bad input from a model ------------------------------------------------------------------
# Unknown tools, arguments that are not a JSON object, missing or unexpected arguments: for every
# domain in test_all_domains.py.


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("view_cart", {"username": ["maya"]}, "TypeError: unhashable type: 'list'"),
        (
            "add_to_cart",
            {"username": "maya", "product_id": "Kettle", "quantity": None},
            "TypeError: '>' not supported between instances of 'NoneType' and 'int'",
        ),
    ],
)
def test_bad_calls_become_text(market: LenientSystem, tool: str, arguments: dict, expected: str) -> None:
    before = canonical_json(market.db)
    outcome = market.execute(tool, arguments)
    assert outcome.content() == expected and not outcome.ok
    assert canonical_json(market.db) == before


def test_empty_arguments_are_no_arguments(market: LenientSystem) -> None:
    assert market.execute("internal_get_interaction_time", "").raw == (True, "2025-01-15T12:56:39")


def test_a_one_megabyte_argument_is_handled(market: LenientSystem) -> None:
    huge = "x" * 1_000_000
    assert market.execute("get_product_details", {"product_id": huge}).raw is False
    assert market.execute("view_cart", json.dumps({"username": huge})).content().startswith("KeyError: 'xxx")
    assert market.execute("view_cart", huge).error is not None


def test_rejected_write_leaves_the_database_unchanged() -> None:
    atomic = LenientSystem(DOMAIN, shop())  # atomic by default
    before = canonical_json(atomic.db)
    failed = atomic.execute("add_to_cart", {"username": "zed", "product_id": "Kettle", "quantity": 1})
    assert failed.content() == "KeyError: 'zed'" and not failed.ok
    assert canonical_json(atomic.db) == before
    oracle = strict(atomic=True)
    assert oracle.execute("login_user", {"username": "maya", "password": "pw-maya"}).ok
    partial = {"username": "maya", "order_id": "ORD-1", "old_product_id": "Mug", "new_product_id": "Teapot"}
    before = canonical_json(oracle.db)
    assert oracle.execute("exchange_product", {**partial, "quantity": 1}).error is not None
    assert canonical_json(oracle.db) == before


_tool_names = st.sampled_from([*DOMAIN.tools, "exit_now", ""])
_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.sampled_from(["maya", "omar", "Kettle", "Mug", "ORD-1", "ORD-2", "TEAPOT5", "KETTLE10", "pw-maya"]),
    st.lists(st.integers(), max_size=2),
)
_arguments = st.one_of(
    st.dictionaries(
        st.sampled_from(
            [
                "username",
                "product_id",
                "order_id",
                "quantity",
                "rating",
                "coupon_code",
                "old_product_id",
                "new_product_id",
                "address",
                "comment",
                "password",
                "x",
            ]
        ),
        _values,
        max_size=6,
    ),
    st.text(max_size=20),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_tool_names, _arguments), max_size=8))
def test_execute_never_raises(calls: list[tuple[str, Any]]) -> None:
    system = LenientSystem(DOMAIN, shop())
    for name, arguments in calls:
        outcome = system.execute(name, arguments)
        assert isinstance(outcome.content(), str) and isinstance(outcome.content("tuple"), str)
    orjson.dumps(system.db)  # still plain JSON data


# ---- database model --------------------------------------------------------------------------


def test_the_model_accepts_our_shop_and_orders_placed_in_an_episode(market: LenientSystem) -> None:
    OnlineMarketDatabase.model_validate(shop())
    market.execute("add_to_cart", {"username": "maya", "product_id": "Teapot", "quantity": 1})
    market.execute("place_order", {"username": "maya"})
    OnlineMarketDatabase.model_validate(market.db)


@pytest.mark.parametrize(
    ("damage", "where"),
    [
        (lambda db: db.update(accounts=["maya"]), "accounts"),
        (lambda db: db["products"]["Mug"].pop("stock"), "products.Mug.stock"),
        (lambda db: db["products"]["Mug"].update(price="8.50"), "products.Mug.price"),
        (
            lambda db: db["accounts"]["maya"]["order_history"][0].update(items={}),
            "accounts.maya.order_history.0.items",
        ),
        (
            lambda db: db["coupons"]["TEAPOT5"].update(expiration_date="16/01/2025"),
            "coupons.TEAPOT5.expiration_date",
        ),
        (lambda db: db.update(interaction_time="2025-01-15"), "interaction_time"),
        (lambda db: db.pop("coupons"), "coupons"),
    ],
)
def test_a_broken_database_is_reported_with_its_path(damage: Any, where: str) -> None:
    db = shop()
    damage(db)
    with pytest.raises(ValidationError) as info:
        OnlineMarketDatabase.model_validate(db)
    assert where in str(info.value)


# ---- published data --------------------------------------------------------------------------


def test_no_online_market_trajectories_are_published(published_trajectories_dir: Path) -> None:
    # The replay-fidelity check of the other domains has nothing to run on here; if trajectories
    # ever appear, this test says a replay test must be added.
    folder = published_trajectories_dir / "online_market"
    assert not folder.exists() or not any(folder.iterdir())
