"""The online-market database layout and the session the strict oracle keeps.

The model only *validates* a task's initial database; the tools keep working on the plain JSON
data, so nothing here changes a value (strict types: a price given as text is an error, not a
conversion). Extra fields are allowed so that databases written by other generators still load;
missing or mistyped fields are reported with their path.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from sopbench.domains._mechanism import parse_time

# The formats the time-based checks parse; a database with other formats could not be checked.
INTERACTION_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"
DATE_FORMAT = "%Y-%m-%d"

SESSION_USER = "logged_in_user"


class _Record(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


class CartItem(_Record):
    product_id: str
    quantity: int | float
    price: float


class OrderItem(_Record):
    product_id: str
    quantity: int | float
    price: float


class Order(_Record):
    order_id: str
    items: list[OrderItem]
    status: str
    total_amount: float
    shipping_address: str
    order_placed_date: str
    # Orders placed during an episode carry neither field, so a saved database may lack them.
    number_of_exchanges: int | None = None
    coupons_used: list[str] | None = None


class ShippingAddress(_Record):
    address: str


class Account(_Record):
    password: str
    cart: list[CartItem]
    credit_rating: str
    order_history: list[Order]
    shipping_addresses: list[ShippingAddress]
    # One published account has no default address (null); placing an order then fails.
    default_address_index: int | None


class Review(_Record):
    username: str
    rating: int | float
    comment: str


class Product(_Record):
    price: float
    stock: int | float
    description: str
    reviews: list[Review]
    average_rating: float


class Coupon(_Record):
    discount_value: float
    discount_type: str
    valid_products: list[str]
    expiration_date: str

    @field_validator("expiration_date")
    @classmethod
    def _parsable_date(cls, value: str) -> str:
        parse_time(value, DATE_FORMAT)
        return value


class OnlineMarketDatabase(_Record):
    accounts: dict[str, Account]
    products: dict[str, Product]
    coupons: dict[str, Coupon]
    interaction_time: str

    @field_validator("interaction_time")
    @classmethod
    def _parsable_time(cls, value: str) -> str:
        parse_time(value, INTERACTION_TIME_FORMAT)
        return value


def new_session() -> dict[str, Any]:
    """One logged-in username (``None`` when nobody is logged in)."""
    return {SESSION_USER: None}
