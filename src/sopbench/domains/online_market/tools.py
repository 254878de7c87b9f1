"""The online-market tools, behaving as the published ``OnlineMarket`` system does.

Each body runs after the catalogue's innate check has passed (the mechanism runs it first and
returns the tool's ``failure`` value otherwise). Reads return ``(True, value)``, writes ``True``.
Exceptions are left to arise where the published system raised them, with the same type and
message, because agents saw their text (``KeyError: 'bob'``).

Published behaviours kept
-------------------------
- ``exchange_product`` never increments the order's ``number_of_exchanges``.
- ``exchange_product`` restocks the old item's recorded quantity (not ``quantity``) and leaves the item's ``quantity`` field unchanged.
- ``exchange_product`` prices the item at new price x ``quantity`` and stores the order total as an unrounded sum.
- ``exchange_product`` on an order without the old product raises ``TypeError`` after reducing the new product's stock.
- ``add_to_cart`` never checks stock, and reduces it before looking the user up (unknown user: ``KeyError`` after the write).
- ``place_order`` uses the cart list itself as the order's items and totals an empty cart as the integer ``0``.
- ``place_order`` records the full interaction timestamp as ``order_placed_date``, which the date checks cannot parse.
- ``place_order`` omits ``number_of_exchanges`` and ``coupons_used`` from the new order.
- ``place_order`` raises ``TypeError`` for a null default address index and ``IndexError`` for no address.
- ``add_review`` accepts any username and stores the rating as given; the average truncates each rating with ``int()``.
- ``add_review`` with a non-numeric rating raises ``ValueError`` after the review was appended.
- ``get_order_details`` answers ``(True, None)`` for an order the user does not have.
- ``cancel_order`` / ``return_order`` ignore the current status and raise ``TypeError`` for an unknown order.
- ``use_coupon`` raises a bare ``StopIteration`` (text ``StopIteration: ``) for an unknown order.
- ``use_coupon`` lets totals go negative and takes percentages of the current, possibly discounted, total.
- Unknown users: ``TypeError: 'NoneType' object is not subscriptable`` from tools that use ``accounts.get``, else ``KeyError``.
- ``login_user`` answers ``False`` for a wrong password; ``logout_user`` always answers ``True``.
- ``internal_get_database`` returns the bare database, not a ``(True, value)`` pair.
- Readers return the live lists and dicts of the database, not copies.
"""

from __future__ import annotations

from typing import Any, cast

from sopbench.domains import READ, WRITE, Context

from . import DOMAIN

Order = dict[str, Any]


def _accounts(ctx: Context) -> dict[str, Any]:
    return cast(dict[str, Any], ctx.db["accounts"])


def _products(ctx: Context) -> dict[str, Any]:
    return cast(dict[str, Any], ctx.db["products"])


def _find_order(account: dict[str, Any] | None, order_id: str) -> Order | None:
    """The user's order with this id, or ``None``; an unknown account (``None``) raises TypeError."""
    return next((order for order in account["order_history"] if order["order_id"] == order_id), None)  # type: ignore[index]


# ---- session ---------------------------------------------------------------------------------


# Both session tools count as writes: they change who is logged in, which later checks read.
@DOMAIN.tool(
    WRITE,
    "Sign a customer in to their shop account with their username and password.",
    returns="Returns True when the password matches, False otherwise.",
)
def login_user(ctx: Context, username: str, password: str) -> bool:
    return cast(bool, _accounts(ctx)[username]["password"] == password)


@DOMAIN.tool(WRITE, "Sign the customer out of their shop account.", returns="Returns True once signed out.")
def logout_user(ctx: Context, username: str) -> bool:
    return True


# ---- cart and orders -------------------------------------------------------------------------


@DOMAIN.tool(
    WRITE,
    "Put a quantity of a product into the customer's cart; the product's stock goes down by that quantity.",
    returns="Returns True when the item was added.",
)
def add_to_cart(ctx: Context, username: str, product_id: str, quantity: int) -> bool:
    product = _products(ctx)[product_id]
    product["stock"] -= quantity
    # The account is looked up only after the stock changed, as in the published system.
    _accounts(ctx)[username]["cart"].append(
        {"product_id": product_id, "quantity": quantity, "price": product["price"] * quantity}
    )
    return True


@DOMAIN.tool(
    READ,
    "Show what is in the customer's cart: each product, its quantity and its price.",
    returns="Returns the list of cart items.",
)
def view_cart(ctx: Context, username: str) -> tuple[bool, list[Any]]:
    return True, _accounts(ctx)[username]["cart"]


@DOMAIN.tool(
    WRITE,
    "Turn everything in the customer's cart into a new order shipped to their default address, "
    "and empty the cart.",
    returns="Returns True when the order was placed.",
)
def place_order(ctx: Context, username: str) -> bool:
    account = _accounts(ctx).get(username)
    cart = account["cart"]  # type: ignore[index]
    total_amount = sum(item["price"] for item in cart)
    default_index = account.get("default_address_index")  # type: ignore[union-attr]
    order = {
        "order_id": f"ORD-{len(account['order_history']) + 1}",  # type: ignore[index]
        "items": cart,
        "status": "Processing",
        "total_amount": round(total_amount, 2),
        "shipping_address": account["shipping_addresses"][default_index]["address"],  # type: ignore[index]
        "order_placed_date": ctx.db["interaction_time"],
    }
    account["order_history"].append(order)  # type: ignore[index]
    account["cart"] = []  # type: ignore[index]
    return True


@DOMAIN.tool(
    READ,
    "List every order the customer has placed, with items, status, totals and dates.",
    returns="Returns the list of orders.",
)
def view_order_history(ctx: Context, username: str) -> tuple[bool, list[Any]]:
    return True, _accounts(ctx)[username]["order_history"]


@DOMAIN.tool(
    READ,
    "Look up one of the customer's orders by its id.",
    returns="Returns the order's details (items, status, total, address, date, exchanges).",
    failure=(False, {}),
)
def get_order_details(ctx: Context, username: str, order_id: str) -> tuple[bool, Order | None]:
    return True, _find_order(_accounts(ctx).get(username), order_id)


@DOMAIN.tool(
    WRITE,
    "Cancel one of the customer's orders; its status becomes Canceled.",
    returns="Returns True when the order was cancelled.",
)
def cancel_order(ctx: Context, username: str, order_id: str) -> bool:
    order = _find_order(_accounts(ctx).get(username), order_id)
    order["status"] = "Canceled"  # type: ignore[index]
    return True


@DOMAIN.tool(
    WRITE,
    "Start a return of one of the customer's orders; its status becomes Refunding.",
    returns="Returns True when the return was started.",
)
def return_order(ctx: Context, username: str, order_id: str) -> bool:
    order = _find_order(_accounts(ctx).get(username), order_id)
    order["status"] = "Refunding"  # type: ignore[index]
    return True


@DOMAIN.tool(
    WRITE,
    "Swap a product in one of the customer's orders for another product in the given quantity, "
    "adjusting both products' stock and the order's total.",
    returns="Returns True when the exchange was made.",
)
def exchange_product(
    ctx: Context, username: str, order_id: str, old_product_id: str, new_product_id: str, quantity: int
) -> bool:
    order = _find_order(_accounts(ctx).get(username), order_id)
    item = next((entry for entry in order["items"] if entry["product_id"] == old_product_id), None)  # type: ignore[index]
    products = _products(ctx)
    new_product = products[new_product_id]
    new_product["stock"] -= quantity
    # Restocks what the order held, not `quantity`; an absent item raises only after the new
    # product's stock was reduced (published partial write).
    products[old_product_id]["stock"] += item["quantity"]  # type: ignore[index]
    item["product_id"] = new_product_id  # type: ignore[index]
    item["price"] = new_product["price"] * quantity  # type: ignore[index]
    order["total_amount"] = sum(entry["price"] for entry in order["items"])  # type: ignore[index]
    return True


@DOMAIN.tool(
    WRITE,
    "Apply a coupon to one of the customer's orders, taking its percentage or flat discount off the "
    "order total and recording the coupon on the order.",
    returns="Returns True when the coupon was applied.",
)
def use_coupon(ctx: Context, username: str, order_id: str, coupon_code: str) -> bool:
    account = _accounts(ctx).get(username)
    # No default: an unknown order raises a bare StopIteration, as in the published system.
    order = next(entry for entry in account["order_history"] if entry["order_id"] == order_id)  # type: ignore[index]
    coupon = ctx.db["coupons"][coupon_code]
    order.setdefault("coupons_used", []).append(coupon_code)
    if coupon["discount_type"] == "percentage":
        discount = (coupon["discount_value"] / 100) * order["total_amount"]
    else:
        discount = coupon["discount_value"]
    order["total_amount"] -= round(discount, 2)
    return True


@DOMAIN.tool(
    READ,
    "List the coupon codes the customer has applied, across all of their orders.",
    returns="Returns the list of coupon codes.",
)
def get_coupons_used(ctx: Context, username: str) -> tuple[bool, list[str]]:
    order_history = _accounts(ctx)[username]["order_history"]
    return True, [code for order in order_history for code in order.get("coupons_used", [])]


# ---- addresses, products, reviews ------------------------------------------------------------


@DOMAIN.tool(
    WRITE,
    "Save a new shipping address on the customer's account; the first address saved becomes the default.",
    returns="Returns True when the address was saved.",
)
def add_shipping_address(ctx: Context, username: str, address: str) -> bool:
    account = _accounts(ctx).get(username)
    addresses = account["shipping_addresses"]  # type: ignore[index]
    addresses.append({"address": address})
    if len(addresses) == 1:
        account["default_address_index"] = 0  # type: ignore[index]
    return True


@DOMAIN.tool(
    READ,
    "List the shipping addresses saved on the customer's account.",
    returns="Returns the list of addresses.",
)
def view_shipping_addresses(ctx: Context, username: str) -> tuple[bool, list[Any]]:
    return True, _accounts(ctx)[username]["shipping_addresses"]


@DOMAIN.tool(
    READ,
    "Look up a product: its price, stock, description, reviews and average rating.",
    returns="Returns the product's details.",
)
def get_product_details(ctx: Context, product_id: str) -> tuple[bool, dict[str, Any]]:
    return True, _products(ctx)[product_id]


@DOMAIN.tool(
    WRITE,
    "Post the customer's rating and comment on a product and recompute the product's average rating.",
    returns="Returns True when the review was posted.",
)
def add_review(ctx: Context, product_id: str, username: str, rating: int, comment: str) -> bool:
    product = _products(ctx)[product_id]
    reviews = product["reviews"]
    reviews.append({"username": username, "rating": rating, "comment": comment})
    product["average_rating"] = round(sum(int(review["rating"]) for review in reviews) / len(reviews), 2)
    return True


# ---- internal lookups ------------------------------------------------------------------------


@DOMAIN.tool(
    READ, "Return the whole shop database (for the assistant only).", returns="Returns the database."
)
def internal_get_database(ctx: Context) -> dict[str, Any]:
    return ctx.db


@DOMAIN.tool(
    READ,
    "Tell whether an account with this username exists (for the assistant only).",
    returns="Returns True or False.",
)
def internal_check_username_exist(ctx: Context, username: str) -> tuple[bool, bool]:
    return True, username in _accounts(ctx)


@DOMAIN.tool(
    READ,
    "Tell whether a product with this id exists (for the assistant only).",
    returns="Returns True or False.",
)
def internal_check_product_exist(ctx: Context, product_id: str) -> tuple[bool, bool]:
    return True, product_id in _products(ctx)


@DOMAIN.tool(
    READ,
    "Tell whether a coupon with this code exists (for the assistant only).",
    returns="Returns True or False.",
)
def internal_check_coupon_exist(ctx: Context, coupon_code: str) -> tuple[bool, bool]:
    return True, coupon_code in ctx.db["coupons"]


@DOMAIN.tool(
    READ,
    "Look up the customer's credit rating, e.g. excellent, good, normal, restricted or suspended "
    "(for the assistant only).",
    returns="Returns the credit rating.",
)
def internal_check_user_credit_status(ctx: Context, username: str) -> tuple[bool, str]:
    return True, _accounts(ctx)[username]["credit_rating"]


@DOMAIN.tool(
    READ,
    "Read the current date and time of this conversation (for the assistant only).",
    returns="Returns a timestamp such as 2025-01-15T12:56:39.",
)
def internal_get_interaction_time(ctx: Context) -> tuple[bool, str]:
    return True, ctx.db["interaction_time"]


@DOMAIN.tool(
    READ,
    "Look up a coupon: its discount, discount type, the products it applies to and its expiry date "
    "(for the assistant only).",
    returns="Returns the coupon's details.",
)
def internal_get_coupon_details(ctx: Context, coupon_code: str) -> tuple[bool, dict[str, Any]]:
    return True, ctx.db["coupons"][coupon_code]


@DOMAIN.tool(
    READ,
    "Tell whether the customer has an order with this id (for the assistant only).",
    returns="Returns True or False.",
)
def internal_check_order_exist(ctx: Context, username: str, order_id: str) -> tuple[bool, bool]:
    order_history = _accounts(ctx)[username].get("order_history", [])
    return True, any(order["order_id"] == order_id for order in order_history)
