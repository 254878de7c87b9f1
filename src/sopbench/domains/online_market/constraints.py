"""Truth of the online-market constraints, and the wording of every constraint name.

Each check reads the database through the lenient tools (``ctx.call``), the way the published
state tracker did, so a missing record fails the same way (for instance ``TypeError: cannot
unpack non-iterable bool object`` when a lookup's innate check refuses). The catalogue's
constraint dependencies put existence checks in front of these, so the oracle normally never gets
that far. Thresholds come from the task's constraint parameters (``ctx.params``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from sopbench.domains import Context, parse_time

from . import DOMAIN
from .state import DATE_FORMAT, INTERACTION_TIME_FORMAT, SESSION_USER

# ---- session ---------------------------------------------------------------------------------


@DOMAIN.check("The user {username} is logged in.", "The user {username} is not logged in.")
def logged_in_user(ctx: Context, username: str) -> bool:
    return cast(bool, ctx.session[SESSION_USER] == username)


@DOMAIN.session_effect("login_user")
def _remember_login(session: dict[str, Any], username: str, **_: Any) -> None:
    session[SESSION_USER] = username


@DOMAIN.session_effect("logout_user")
def _forget_login(session: dict[str, Any], **_: Any) -> None:
    session[SESSION_USER] = None


DOMAIN.describe(
    "login_user",
    "The user {username} has signed in with the correct password.",
    "The user {username} has not signed in with the correct password.",
)

# ---- existence (tool-named constraints) ------------------------------------------------------

DOMAIN.describe(
    "internal_check_username_exist",
    "An account with the username {username} exists.",
    "No account with the username {username} exists.",
)
DOMAIN.describe(
    "internal_check_product_exist",
    "The product {product_id} exists in the shop.",
    "The product {product_id} does not exist in the shop.",
)
DOMAIN.describe(
    "internal_check_coupon_exist",
    "The coupon {coupon_code} exists.",
    "The coupon {coupon_code} does not exist.",
)
DOMAIN.describe(
    "internal_check_order_exist",
    "The user {username} has an order with the id {order_id}.",
    "The user {username} has no order with the id {order_id}.",
)

# ---- arguments -------------------------------------------------------------------------------


@DOMAIN.check("The amount {amount} is greater than zero.", "The amount {amount} is zero or less.")
def amount_positive_restr(ctx: Context, amount: Any) -> bool:
    return cast(bool, amount > 0)


@DOMAIN.check(
    "The rating {rating} lies between {rating_lower_bound} and {rating_upper_bound}, both included.",
    "The rating {rating} lies outside {rating_lower_bound} to {rating_upper_bound}.",
)
def within_review_limits(ctx: Context, rating: Any) -> bool:
    return cast(bool, ctx.params["rating_lower_bound"] <= rating <= ctx.params["rating_upper_bound"])


# ---- products, cart, addresses, reviews ------------------------------------------------------


@DOMAIN.check(
    "The product {product_id} has at least {quantity} units in stock.",
    "The product {product_id} has fewer than {quantity} units in stock.",
)
def enough_stock(ctx: Context, product_id: str, quantity: Any) -> bool:
    _, product = ctx.call("get_product_details", product_id=product_id)
    return cast(bool, product["stock"] >= quantity)


@DOMAIN.check(
    "The user {username} has at least one shipping address on file.",
    "The user {username} has no shipping address on file.",
)
def has_shipping_address(ctx: Context, username: str) -> bool:
    _, addresses = ctx.call("view_shipping_addresses", username=username)
    return bool(addresses)


@DOMAIN.check(
    "The cart of the user {username} is not empty.",
    "The cart of the user {username} is empty.",
)
def has_items_in_cart(ctx: Context, username: str) -> bool:
    _, cart = ctx.call("view_cart", username=username)
    return bool(cart)


@DOMAIN.check(
    "The address {address} is not yet among the shipping addresses of the user {username} "
    "(ignoring letter case).",
    "The address {address} is already among the shipping addresses of the user {username} "
    "(ignoring letter case).",
)
def not_already_added_shipping_address(ctx: Context, username: str, address: str) -> bool:
    _, addresses = ctx.call("view_shipping_addresses", username=username)
    saved = [entry["address"].lower() for entry in addresses]
    return address.lower() not in saved


@DOMAIN.check(
    "The user {username} has not reviewed the product {product_id} yet.",
    "The user {username} has already reviewed the product {product_id}.",
)
def unique_review(ctx: Context, product_id: str, username: str) -> bool:
    _, product = ctx.call("get_product_details", product_id=product_id)
    return username not in [review["username"] for review in product["reviews"]]


@DOMAIN.check(
    "The user {username} has the product {product_id} in at least one of their orders.",
    "The user {username} has the product {product_id} in none of their orders.",
)
def product_bought_by_user(ctx: Context, username: str, product_id: str) -> bool:
    _, orders = ctx.call("view_order_history", username=username)
    return any(item["product_id"] == product_id for order in orders or () for item in order["items"])


# ---- orders ----------------------------------------------------------------------------------


def _order(ctx: Context, username: str, order_id: str) -> Any:
    _, order = ctx.call("get_order_details", username=username, order_id=order_id)
    return order


def _interaction_time(ctx: Context) -> datetime:
    _, now = ctx.call("internal_get_interaction_time")
    return parse_time(now, INTERACTION_TIME_FORMAT)


@DOMAIN.check(
    "The order {order_id} of the user {username} contains the product {product_id}.",
    "The order {order_id} of the user {username} does not contain the product {product_id}.",
)
def product_exists_in_order(ctx: Context, username: str, order_id: str, product_id: str) -> bool:
    order = _order(ctx, username, order_id)
    return any(item.get("product_id") == product_id for item in order.get("items", []))


@DOMAIN.check(
    "The order {order_id} of the user {username} has been delivered.",
    "The order {order_id} of the user {username} has not been delivered.",
)
def order_delivered(ctx: Context, username: str, order_id: str) -> bool:
    return cast(bool, _order(ctx, username, order_id)["status"].lower() == "delivered")


@DOMAIN.check(
    "The order {order_id} of the user {username} is delivered, being refunded or refunded.",
    "The order {order_id} of the user {username} is neither delivered nor being refunded nor refunded.",
)
def order_delivered_or_refunding(ctx: Context, username: str, order_id: str) -> bool:
    # In the published state tracker but used by no SOP; kept so custom SOPs can name it.
    return _order(ctx, username, order_id)["status"].lower() in ("delivered", "refunding", "refunded")


@DOMAIN.check(
    "The order {order_id} of the user {username} is still processing.",
    "The order {order_id} of the user {username} is no longer processing.",
)
def order_processing(ctx: Context, username: str, order_id: str) -> bool:
    return cast(bool, _order(ctx, username, order_id)["status"].lower() == "processing")


def _placed_within(ctx: Context, username: str, order_id: str, days: int) -> bool:
    # The order is read before the clock, so a missing order fails before the time lookup.
    placed = parse_time(_order(ctx, username, order_id)["order_placed_date"], DATE_FORMAT)
    return _interaction_time(ctx) - placed <= timedelta(days=days)


@DOMAIN.check(
    "The order {order_id} of the user {username} was placed at most {exchange_period} days ago.",
    "The order {order_id} of the user {username} was placed more than {exchange_period} days ago.",
)
def within_exchange_period(ctx: Context, username: str, order_id: str) -> bool:
    return _placed_within(ctx, username, order_id, ctx.params["exchange_period"])


@DOMAIN.check(
    "The order {order_id} of the user {username} was placed at most {return_period} days ago.",
    "The order {order_id} of the user {username} was placed more than {return_period} days ago.",
)
def within_return_period(ctx: Context, username: str, order_id: str) -> bool:
    return _placed_within(ctx, username, order_id, ctx.params["return_period"])


@DOMAIN.check(
    "The order {order_id} of the user {username} has been exchanged fewer than {max_exchange_times} times.",
    "The order {order_id} of the user {username} has been exchanged {max_exchange_times} times or more.",
)
def less_than_max_exchanges(ctx: Context, username: str, order_id: str) -> bool:
    return cast(
        bool, _order(ctx, username, order_id)["number_of_exchanges"] < ctx.params["max_exchange_times"]
    )


# ---- credit ----------------------------------------------------------------------------------


def _credit_rating(ctx: Context, username: str) -> str:
    _, rating = ctx.call("internal_check_user_credit_status", username=username)
    return cast(str, rating.lower())


@DOMAIN.check(
    "The credit rating of the user {username} is neither restricted nor suspended.",
    "The credit rating of the user {username} is restricted or suspended.",
)
def credit_status_not_restricted_or_suspended(ctx: Context, username: str) -> bool:
    return _credit_rating(ctx, username) not in ("restricted", "suspended")


@DOMAIN.check(
    "The credit rating of the user {username} is not suspended.",
    "The credit rating of the user {username} is suspended.",
)
def credit_status_not_suspended(ctx: Context, username: str) -> bool:
    return _credit_rating(ctx, username) != "suspended"


@DOMAIN.check(
    "The credit rating of the user {username} is excellent.",
    "The credit rating of the user {username} is not excellent.",
)
def credit_status_excellent(ctx: Context, username: str) -> bool:
    return _credit_rating(ctx, username) == "excellent"


# ---- coupons ---------------------------------------------------------------------------------


@DOMAIN.check(
    "The user {username} has not applied the coupon {coupon_code} to any order before.",
    "The user {username} has already applied the coupon {coupon_code} to an order.",
)
def coupon_not_already_used(ctx: Context, username: str, coupon_code: str) -> bool:
    _, codes = ctx.call("get_coupons_used", username=username)
    return coupon_code not in codes


@DOMAIN.check(
    "The coupon {coupon_code} expires after the current time.",
    "The coupon {coupon_code} has expired.",
)
def coupon_not_expired(ctx: Context, coupon_code: str) -> bool:
    _, coupon = ctx.call("internal_get_coupon_details", coupon_code=coupon_code)
    now = _interaction_time(ctx)
    return parse_time(coupon["expiration_date"], DATE_FORMAT) > now


@DOMAIN.check(
    "The coupon {coupon_code} applies to at least one product in the order {order_id} of the user {username}.",
    "The coupon {coupon_code} applies to no product in the order {order_id} of the user {username}.",
)
def coupon_valid(ctx: Context, username: str, order_id: str, coupon_code: str) -> bool:
    _, coupon = ctx.call("internal_get_coupon_details", coupon_code=coupon_code)
    valid_products = coupon.get("valid_products", [])
    order = _order(ctx, username, order_id)
    return any(item["product_id"] in valid_products for item in order["items"])
