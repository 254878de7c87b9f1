"""Bank tools: what the lenient system does for each call once the tool's innate check passed.

Results follow the published system: reads return ``(True, value)``, writes return ``True``; an
innate failure returns the tool's ``failure`` value (``False``, or ``(False, {})`` for
``get_credit_card_info``). Tools do not check that a user exists unless their innate check says so,
so a call about an unknown user raises ``KeyError: '<username>'``, which an agent sees as text.

Credit cards
------------
Every task database stores ``credit_cards`` as a list of ``{card_number, credit_limit,
credit_balance}``; the published code was written for a dict keyed by card number. The domain
option ``credit_cards`` picks the behaviour:

- ``"list"`` (default; follows the data): cards are found by their ``card_number`` (a dict layout,
  keyed by number, is read by its keys); ``open_account`` starts an account with ``[]``. The recorded
  tool outputs of every published bank trajectory were produced this way.
- ``"dict"`` (what the shipped code does with the data): the container's items are compared with
  the card number, so list entries never match: ``internal_check_credit_card_exist`` is false,
  ``get_credit_card_info`` returns ``(False, {})``, ``no_credit_card_balance`` raises ``TypeError``
  for a user holding cards, ``cancel_credit_card`` fails; ``open_account`` starts with ``{}``.
  Half of the published bank files were scored this way (see bank_scoring_semantics.csv).

Published behaviours kept
-------------------------
- ``apply_credit_card`` never issues a card: it only writes when the new number already exists (Q19).
- ``open_account`` has no existence check: it replaces an existing account of that name.
- ``open_account`` creates accounts without ``credit_score`` and with integer zero balances.
- ``set_account_information`` onto an existing username replaces that account; a renamed account moves to the end.
- ``transfer_funds`` debits the sender before looking up the recipient (an unknown recipient leaves the debit).
- ``transfer_funds`` and ``exchange_foreign_currency`` divide by 100 only if the unit contains "cent".
- ``deposit_funds`` and ``pay_bill`` divide by 100 unless the unit contains "dollar".
- ``get_loan`` adds ``1.1 * loan_amount`` to the owed balance.
- ``pay_loan`` subtracts the whole request from both balances, even beyond what is owed.
- ``get_bank_maximum_loan_amount`` halves the cash figure it is given (default 0); it reads nothing.
- ``pay_bill`` accepts and ignores extra arguments.
- ``get_credit_cards`` on an unknown user raises ``TypeError`` ('NoneType' object is not subscriptable).
- ``pay_bill_with_credit_card`` on an unknown user raises ``AttributeError``; an unknown card changes nothing.
- ``apply_credit_card`` on an unknown user raises ``KeyError: 'credit_cards'`` (after computing the limit).
- Option ``"dict"``: the credit-card lookups of the shipped code on list data (Q20), see above.

One deliberate difference: the published ``apply_credit_card`` derived its candidate card number from
Python's salted string hash; here it comes from a fixed digest, so runs are reproducible. Either way
the card is written only if that number already exists, which does not happen in published data.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from typing import Any, cast

from sopbench.domains import READ, WRITE, Context

from . import DOMAIN
from .state import CARDS_AS_SHIPPED, CARDS_AS_STORED, CREDIT_CARD_MODES, CREDIT_CARDS_OPTION

# ---- credit-card lookups shared with the constraint checks ------------------------------------


def cards_as_shipped(ctx: Context) -> bool:
    """Whether cards are looked up the way the published code does (option ``"dict"``)."""
    mode = ctx.options.get(CREDIT_CARDS_OPTION, CARDS_AS_STORED)
    if mode not in CREDIT_CARD_MODES:
        raise ValueError(
            f"bank option {CREDIT_CARDS_OPTION!r} must be one of {CREDIT_CARD_MODES}, got {mode!r}"
        )
    return cast(bool, mode == CARDS_AS_SHIPPED)


def card_slots(ctx: Context, cards: Any, card_number: Any) -> list[Any]:
    """Where ``card_number`` sits in a user's ``credit_cards``: list indices or dict keys.

    Items are compared with ``==`` (never hashed) so that an odd card number from a model gives
    "not found" rather than an error, as in the published loops.
    """
    if cards_as_shipped(ctx) or isinstance(cards, Mapping):
        # Iterating a list yields card objects, which never equal a number: the shipped behaviour.
        return [item for item in cards if item == card_number]
    return [index for index, card in enumerate(cards) if card["card_number"] == card_number]


def card_entries(ctx: Context, cards: Any) -> list[Any]:
    """Every stored card's terms (what ``no_credit_card_balance`` inspects)."""
    if cards_as_shipped(ctx):
        # Indexing the container by its own items: a list indexed by a card object raises TypeError.
        return [cards[item] for item in cards]
    return list(cards.values()) if isinstance(cards, Mapping) else list(cards)


def empty_cards(ctx: Context) -> list[Any] | dict[str, Any]:
    """The ``credit_cards`` value of a newly opened account."""
    return {} if cards_as_shipped(ctx) else []


def _accounts(ctx: Context) -> dict[str, Any]:
    return cast(dict[str, Any], ctx.db["accounts"])


def _account(ctx: Context, username: str) -> Any:
    """The user's account, None for an unknown user: the tools then fail on it as the published ones did."""
    return _accounts(ctx).get(username)


def _to_dollars_if_cents(amount: Any, unit: str) -> Any:
    return amount / 100 if "cent" in unit else amount


def _to_dollars_unless_dollars(amount: Any, unit: str) -> Any:
    return amount if "dollar" in unit else amount / 100


# ---- session -----------------------------------------------------------------------------------


@DOMAIN.tool(
    READ,
    "Sign a customer in by checking their identification (a password, or a driver's license object "
    "with its id and issuing state) against the account.",
    returns="Returns true if the identification matches, false otherwise.",
)
def login_user(ctx: Context, username: str, identification: Any) -> bool:
    return cast(bool, _accounts(ctx)[username]["identification"] == identification)


@DOMAIN.tool(READ, "Sign the current customer out.", returns="Returns true.")
def logout_user(ctx: Context, username: str) -> bool:
    return True


# ---- accounts ----------------------------------------------------------------------------------


@DOMAIN.tool(
    WRITE,
    "Open a new account under a username, with its identification (password or driver's license) "
    "and an admin password; it starts with nothing in it.",
    returns="Returns true once the account exists.",
)
def open_account(ctx: Context, username: str, identification: Any, admin_password: str) -> bool:
    _accounts(ctx)[username] = {
        "identification": identification,
        "admin_password": admin_password,
        "balance": 0,
        "owed_balance": 0,
        "safety_box": "",
        "credit_cards": empty_cards(ctx),
    }
    return True


@DOMAIN.tool(
    READ,
    "Check the admin password a customer gives for their account; some services need it.",
    returns="Returns true if the admin password is right, false otherwise.",
)
def authenticate_admin_password(ctx: Context, username: str, admin_password: str) -> bool:
    return cast(bool, _accounts(ctx)[username]["admin_password"] == admin_password)


@DOMAIN.tool(WRITE, "Replace the admin password of an account.", returns="Returns true when it is changed.")
def set_admin_password(ctx: Context, username: str, admin_password_new: str) -> bool:
    _accounts(ctx)[username]["admin_password"] = admin_password_new
    return True


@DOMAIN.tool(
    WRITE,
    "Change the username and the identification of an account (keep the same username to change "
    "only the identification).",
    returns="Returns true when the account is updated.",
)
def set_account_information(ctx: Context, username: str, username_new: str, identification_new: Any) -> bool:
    accounts = _accounts(ctx)
    if username != username_new:
        accounts[username_new] = copy.deepcopy(accounts[username])
        del accounts[username]
    accounts[username_new]["identification"] = identification_new
    return True


@DOMAIN.tool(
    WRITE, "Close an account and erase everything stored in it.", returns="Returns true once it is gone."
)
def close_account(ctx: Context, username: str) -> bool:
    del _accounts(ctx)[username]
    return True


# ---- money -------------------------------------------------------------------------------------


@DOMAIN.tool(READ, "Look up how much money is in a customer's account.", returns="Returns the balance.")
def get_account_balance(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, _accounts(ctx)[username]["balance"]


@DOMAIN.tool(
    WRITE,
    "Move money from a customer's account to another customer's account; the amount may be given in "
    "dollars or cents.",
    returns="Returns true once the money has moved.",
)
def transfer_funds(ctx: Context, username: str, destination_username: str, amount: float, unit: str) -> bool:
    amount = _to_dollars_if_cents(amount, unit)
    accounts = _accounts(ctx)
    accounts[username]["balance"] -= amount
    accounts[destination_username]["balance"] += amount
    return True


@DOMAIN.tool(
    WRITE,
    "Put money into a customer's account, in dollars or cents, paid by the given form (cash, or a "
    "check with its name and routing number).",
    returns="Returns true once the money is credited.",
)
def deposit_funds(ctx: Context, username: str, amount: float, unit: str, deposit_form: Any) -> bool:
    _accounts(ctx)[username]["balance"] += _to_dollars_unless_dollars(amount, unit)
    return True


@DOMAIN.tool(
    WRITE,
    "Pay a bill out of a customer's account, in dollars or cents, optionally noting what the bill is for.",
    returns="Returns true once the payment is taken from the balance.",
)
def pay_bill(
    ctx: Context,
    username: str,
    amount: float,
    unit: str,
    bill_description: str | None = None,
    *args: Any,
    **kwargs: Any,
) -> bool:
    _accounts(ctx)[username]["balance"] -= _to_dollars_unless_dollars(amount, unit)
    return True


@DOMAIN.tool(
    WRITE,
    "Charge a bill to one of the customer's credit cards.",
    returns="Returns true once the charge is recorded on the card.",
)
def pay_bill_with_credit_card(ctx: Context, username: str, amount: int, card_number: str) -> bool:
    account = _account(ctx, username)
    cards = account.get("credit_cards", {})  # AttributeError for an unknown user, as published
    for slot in card_slots(ctx, cards, card_number):
        cards[slot]["credit_balance"] += amount
    return True


@DOMAIN.tool(
    READ,
    "Tell a customer how much a sum in dollars or cents is worth in a foreign currency at today's rate.",
    returns="Returns the amount in the foreign currency.",
)
def exchange_foreign_currency(
    ctx: Context, amount: float, unit: str, foreign_currency_type: str
) -> tuple[bool, Any]:
    amount = _to_dollars_if_cents(amount, unit)
    return True, ctx.db["foreign_exchange"][foreign_currency_type] * amount


# ---- loans -------------------------------------------------------------------------------------


@DOMAIN.tool(READ, "Look up how much a customer owes the bank.", returns="Returns the owed balance.")
def get_account_owed_balance(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, _accounts(ctx)[username]["owed_balance"]


@DOMAIN.tool(
    WRITE,
    "Lend a customer money: the loan is paid into their account and the amount plus 10% interest is "
    "added to what they owe.",
    returns="Returns true once the loan is granted.",
)
def get_loan(ctx: Context, username: str, loan_amount: float) -> bool:
    account = _accounts(ctx)[username]
    account["balance"] += loan_amount
    account["owed_balance"] += 1.1 * loan_amount
    return True


@DOMAIN.tool(
    WRITE,
    "Repay part or all of a customer's loan from their account balance.",
    returns="Returns true once the payment is applied to both balances.",
)
def pay_loan(ctx: Context, username: str, pay_owed_amount_request: float) -> bool:
    account = _accounts(ctx)[username]
    account["balance"] -= pay_owed_amount_request
    account["owed_balance"] -= pay_owed_amount_request
    return True


@DOMAIN.tool(
    READ,
    "Work out the most the bank may lend one customer right now: half of the bank's total cash, "
    "which is the sum of all account balances (take 0 if it is not known).",
    returns="Returns the maximum loan amount.",
)
def get_bank_maximum_loan_amount(ctx: Context, bank_total_cash: float = 0) -> tuple[bool, Any]:
    return True, bank_total_cash / 2


# ---- safety box --------------------------------------------------------------------------------


@DOMAIN.tool(
    READ, "Show what a customer keeps in their safety deposit box.", returns="Returns the box's contents."
)
def get_safety_box(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, _accounts(ctx)[username]["safety_box"]


@DOMAIN.tool(
    WRITE,
    "Replace the contents of a customer's safety deposit box.",
    returns="Returns true once the new contents are stored.",
)
def set_safety_box(ctx: Context, username: str, safety_box_new: str) -> bool:
    _accounts(ctx)[username]["safety_box"] = safety_box_new
    return True


# ---- credit cards ------------------------------------------------------------------------------


@DOMAIN.tool(
    WRITE,
    "Apply for a new credit card for a customer, stating their total assets and monthly income.",
    returns="Returns true once the application is processed.",
)
def apply_credit_card(ctx: Context, username: str, total_assets: float, monthly_income: float) -> bool:
    number = _candidate_card_number(username, total_assets, monthly_income)
    terms = {"credit_limit": monthly_income / 4, "credit_balance": 0.0}
    cards = _accounts(ctx).get(username, {})["credit_cards"]
    # Published inverted test: the card is written only when its number is already taken.
    for slot in card_slots(ctx, cards, number)[:1]:
        cards[slot] = terms if isinstance(cards, Mapping) else {"card_number": number, **terms}
    return True


@DOMAIN.tool(
    WRITE,
    "Cancel one of a customer's credit cards.",
    returns="Returns true if the card was removed, false otherwise.",
)
def cancel_credit_card(ctx: Context, username: str, card_number: str) -> bool:
    cards = _account(ctx, username)["credit_cards"]
    for slot in card_slots(ctx, cards, card_number)[:1]:
        del cards[slot]
        return True
    return False


@DOMAIN.tool(
    READ,
    "List every credit card a customer holds, with each card's limit and balance.",
    returns="Returns the customer's credit cards.",
)
def get_credit_cards(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, _account(ctx, username)["credit_cards"]


@DOMAIN.tool(
    READ,
    "Show the credit limit and current balance of one of a customer's credit cards.",
    returns="Returns the card's details.",
    failure=(False, {}),
)
def get_credit_card_info(ctx: Context, username: str, card_number: str) -> tuple[bool, Any]:
    cards = _account(ctx, username)["credit_cards"]
    for slot in card_slots(ctx, cards, card_number)[:1]:
        return True, cards[slot]
    return False, {}


# ---- internal helpers the assistant may use ----------------------------------------------------


@DOMAIN.tool(
    READ,
    "Internal: the whole bank database, every account with all its details.",
    returns="Returns the database.",
)
def internal_get_database(ctx: Context) -> tuple[bool, Any]:
    return True, ctx.db


@DOMAIN.tool(
    READ,
    "Internal: whether an account with this username exists.",
    returns="Returns true if it exists, false otherwise.",
)
def internal_check_username_exist(ctx: Context, username: str) -> tuple[bool, bool]:
    return True, username in _accounts(ctx)


@DOMAIN.tool(
    READ,
    "Internal: whether the bank exchanges this foreign currency.",
    returns="Returns true if the currency is available, false otherwise.",
)
def internal_check_foreign_currency_available(ctx: Context, foreign_currency_type: str) -> tuple[bool, bool]:
    return True, foreign_currency_type in ctx.db["foreign_exchange"]


@DOMAIN.tool(READ, "Internal: a customer's credit score.", returns="Returns the credit score.")
def internal_get_credit_score(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, _accounts(ctx)[username]["credit_score"]


@DOMAIN.tool(
    READ,
    "Internal: whether a customer holds a credit card with this number.",
    returns="Returns true if the card is theirs, false otherwise.",
)
def internal_check_credit_card_exist(ctx: Context, username: str, card_number: str) -> tuple[bool, bool]:
    cards = _account(ctx, username)["credit_cards"]
    return True, bool(card_slots(ctx, cards, card_number))


def _candidate_card_number(username: Any, total_assets: Any, monthly_income: Any) -> str:
    """A 16-digit number in groups of four, derived from the application (stable across runs)."""
    seed = f"{username}{total_assets}{monthly_income}"
    digits = "".join(str(hashlib.blake2b(f"{seed}{i}".encode()).digest()[0] % 10) for i in range(16))
    return " ".join(digits[i : i + 4] for i in range(0, 16, 4))
