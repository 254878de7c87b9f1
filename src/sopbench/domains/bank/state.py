"""The bank database layout, the session the strict oracle keeps, and the credit-card option.

The model is used once per task, to reject a broken ``initial_database`` with a readable error
before any tool runs; tools keep working on the plain JSON data.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# Domain option: how credit cards are looked up (see tools.py, "Credit cards").
CREDIT_CARDS_OPTION = "credit_cards"
CARDS_AS_STORED = "list"  # follow the task data: a list of cards, found by their card_number
CARDS_AS_SHIPPED = "dict"  # what the published code does: it expects a dict keyed by card number
CREDIT_CARD_MODES = (CARDS_AS_STORED, CARDS_AS_SHIPPED)

# Session keys of the strict oracle.
LOGGED_IN_USER = "logged_in_user"  # the one username logged in, or None
ADMIN_AUTHENTICATED = "admin_authenticated"  # one flag for the whole session, not per user


def new_session() -> dict[str, Any]:
    """A fresh session: nobody logged in, admin password not given."""
    return {LOGGED_IN_USER: None, ADMIN_AUTHENTICATED: False}


class _Strict(BaseModel):
    # Strict: numbers must be JSON numbers (not "12.5" or true), strings must be strings.
    model_config = ConfigDict(strict=True, extra="forbid")


class DriversLicense(_Strict):
    """The identification object a user may log in with instead of a password."""

    drivers_license_id: str
    drivers_license_state: str


class CreditCard(_Strict):
    """One card as the task data stores it (an element of ``credit_cards``)."""

    card_number: str
    credit_limit: float
    credit_balance: float


class CardTerms(_Strict):
    """One card as the published code's own default data stores it (keyed by its number)."""

    credit_limit: float
    credit_balance: float


class Account(_Strict):
    identification: str | DriversLicense
    admin_password: str
    balance: float
    owed_balance: float
    # Accounts created by open_account carry no credit score, so a database saved mid-episode
    # (and used as a new starting point) may lack it.
    credit_score: float | None = None
    safety_box: str
    credit_cards: list[CreditCard] | dict[str, CardTerms] = Field(default_factory=list)


class BankDatabase(_Strict):
    """``accounts`` keyed by username, exchange rates keyed by currency code, the current time."""

    accounts: dict[str, Account]
    foreign_exchange: dict[str, float]
    interaction_time: str
