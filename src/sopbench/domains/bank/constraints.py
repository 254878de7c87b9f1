"""Bank constraints: truth functions, their wording, and how tools change the oracle's session.

Each check computes its truth as the published state tracker does: it reads the database through
the lenient tools (``ctx.call``, innate checks included), uses the same comparisons, and lets the
same exceptions escape (an unknown user raises ``KeyError``; reading a card that is not there
raises ``KeyError: 'credit_balance'``). Balances are compared as stored: no unit conversion except
in the two limits that take a unit.

Published behaviours kept here: ``minimal_elgibile_credit_score`` (name as published) is a strict
``>``; ``sufficient_account_balance`` ignores units; ``authenticated_admin_password`` is one flag
for the whole session, whoever gave the password; ``maximum_exchange_amount`` converts unless the
unit contains "dollar" while the exchange itself converts only "cent" units.
"""

from __future__ import annotations

from typing import Any, cast

from sopbench.domains import Context

from . import DOMAIN
from .state import ADMIN_AUTHENTICATED, LOGGED_IN_USER
from .tools import card_entries

# ---- session state -----------------------------------------------------------------------------


@DOMAIN.check(
    "The user {username} has logged in with the right credentials during this conversation.",
    "The user {username} has not logged in with the right credentials during this conversation.",
)
def logged_in_user(ctx: Context, username: str) -> bool:
    return cast(bool, ctx.session[LOGGED_IN_USER] == username)


@DOMAIN.check(
    "The admin password of {username} has been confirmed during this conversation.",
    "The admin password of {username} has not been confirmed during this conversation.",
)
def authenticated_admin_password(ctx: Context, username: str) -> bool:
    return bool(ctx.session[ADMIN_AUTHENTICATED])


@DOMAIN.session_effect("login_user")
def _remember_login(session: dict[str, Any], username: Any = None, **_: Any) -> None:
    session[LOGGED_IN_USER] = username


@DOMAIN.session_effect("authenticate_admin_password")
def _remember_admin(session: dict[str, Any], **_: Any) -> None:
    session[ADMIN_AUTHENTICATED] = True


@DOMAIN.session_effect("logout_user")
def _forget_session(session: dict[str, Any], **_: Any) -> None:
    session[LOGGED_IN_USER] = None
    session[ADMIN_AUTHENTICATED] = False


# ---- balances and amounts ----------------------------------------------------------------------


def _balance(ctx: Context, username: str) -> Any:
    return ctx.call("get_account_balance", username=username)[1]


def _owed(ctx: Context, username: str) -> Any:
    return ctx.call("get_account_owed_balance", username=username)[1]


def _in_dollars_unless_dollars(amount: Any, unit: str) -> Any:
    return amount if "dollar" in unit else amount / 100


@DOMAIN.check(
    "The account of {username} holds at least {amount} (balance of {username} >= {amount}).",
    "The account of {username} holds less than {amount} (balance of {username} < {amount}).",
)
def sufficient_account_balance(ctx: Context, username: str, amount: Any) -> bool:
    return cast(bool, _balance(ctx, username) >= amount)


@DOMAIN.check(
    "{username} owes the bank less than {maximum_owed_balance}, so a new loan may be granted.",
    "{username} owes the bank {maximum_owed_balance} or more, so no new loan may be granted.",
)
def get_loan_owed_balance_restr(ctx: Context, username: str) -> bool:
    return cast(bool, _owed(ctx, username) < ctx.params["maximum_owed_balance"])


@DOMAIN.check(
    "The account balance of {username} is at least what they owe (balance >= owed balance).",
    "The account balance of {username} is below what they owe (balance < owed balance).",
)
def pay_loan_account_balance_restr(ctx: Context, username: str) -> bool:
    return cast(bool, _balance(ctx, username) >= _owed(ctx, username))


@DOMAIN.check(
    "The account balance of {username} covers the repayment {pay_owed_amount_request} "
    "(balance >= {pay_owed_amount_request}).",
    "The account balance of {username} does not cover the repayment {pay_owed_amount_request} "
    "(balance < {pay_owed_amount_request}).",
)
def pay_loan_amount_restr(ctx: Context, username: str, pay_owed_amount_request: Any) -> bool:
    return cast(bool, _balance(ctx, username) >= pay_owed_amount_request)


@DOMAIN.check(
    "The amount {amount} is greater than zero.",
    "The amount {amount} is zero or negative.",
)
def amount_positive_restr(ctx: Context, amount: Any) -> bool:
    return cast(bool, amount > 0)


@DOMAIN.check(
    "{username} owes the bank nothing (owed balance is 0).",
    "{username} still owes the bank something (owed balance is not 0).",
)
def no_owed_balance(ctx: Context, username: str) -> bool:
    return cast(bool, _owed(ctx, username) == 0)


@DOMAIN.check(
    "The account of {username} holds at least {minimum_account_balance_safety_box}, enough for a "
    "safety deposit box.",
    "The account of {username} holds less than {minimum_account_balance_safety_box}, too little for a "
    "safety deposit box.",
)
def safety_box_eligible(ctx: Context, username: str) -> bool:
    return cast(bool, _balance(ctx, username) >= ctx.params["minimum_account_balance_safety_box"])


@DOMAIN.check(
    "The deposit {amount} {unit}, counted in dollars, is at most {maximum_deposit}.",
    "The deposit {amount} {unit}, counted in dollars, is more than {maximum_deposit}.",
)
def maximum_deposit_limit(ctx: Context, unit: str, amount: Any) -> bool:
    return cast(bool, _in_dollars_unless_dollars(amount, unit) <= ctx.params["maximum_deposit"])


@DOMAIN.check(
    "The sum to exchange, {amount} {unit} counted in dollars, is at most {maximum_exchange}.",
    "The sum to exchange, {amount} {unit} counted in dollars, is more than {maximum_exchange}.",
)
def maximum_exchange_amount(ctx: Context, unit: str, amount: Any) -> bool:
    return cast(bool, ctx.params["maximum_exchange"] >= _in_dollars_unless_dollars(amount, unit))


@DOMAIN.check(
    "{username} has a credit score above {minimum_credit_score}.",
    "{username} has a credit score of {minimum_credit_score} or lower.",
)
def minimal_elgibile_credit_score(ctx: Context, username: str) -> bool:
    _, score = ctx.call("internal_get_credit_score", username=username)
    return cast(bool, score > ctx.params["minimum_credit_score"])


@DOMAIN.check(
    "Decide from the bank's database as a whole (read it before acting).",
    "Do not decide from the bank's database as a whole.",
)
def call_get_database(ctx: Context) -> bool:
    # Always true: it exists only to put a database read into the action graph.
    return True


# ---- credit cards ------------------------------------------------------------------------------


@DOMAIN.check(
    "None of the credit cards of {username} carries a balance.",
    "At least one credit card of {username} carries a balance.",
)
def no_credit_card_balance(ctx: Context, username: str) -> bool:
    _, cards = ctx.call("get_credit_cards", username=username)
    if not cards:
        return True
    return all(card["credit_balance"] == 0 for card in card_entries(ctx, cards))


@DOMAIN.check(
    "The credit card {card_number} of {username} carries no balance.",
    "The credit card {card_number} of {username} carries a balance.",
)
def no_credit_card_balance_on_card(ctx: Context, username: str, card_number: str) -> bool:
    _, card = ctx.call("get_credit_card_info", username=username, card_number=card_number)
    return cast(bool, card["credit_balance"] == 0)


@DOMAIN.check(
    "The amount {amount} fits in the unused credit of card {card_number} (credit limit minus "
    "credit balance).",
    "The amount {amount} exceeds the unused credit of card {card_number} (credit limit minus "
    "credit balance).",
)
def not_over_credit_limit(ctx: Context, username: str, card_number: str, amount: Any) -> bool:
    _, card = ctx.call("get_credit_card_info", username=username, card_number=card_number)
    available = card["credit_limit"] - card["credit_balance"]
    return cast(bool, amount <= available)


# ---- constraints that are tools ----------------------------------------------------------------

DOMAIN.describe(
    "internal_check_username_exist",
    "An account with the username {username} exists in the bank's records.",
    "No account with the username {username} exists in the bank's records.",
)
DOMAIN.describe(
    "internal_check_foreign_currency_available",
    "The bank exchanges the currency {foreign_currency_type}.",
    "The bank does not exchange the currency {foreign_currency_type}.",
)
DOMAIN.describe(
    "internal_check_credit_card_exist",
    "{username} holds a credit card numbered {card_number}.",
    "{username} holds no credit card numbered {card_number}.",
)
DOMAIN.describe(
    "login_user",
    "Logging in as {username} with identification {identification} succeeds (they match the account).",
    "Logging in as {username} with identification {identification} fails (they do not match the account).",
)
DOMAIN.describe(
    "authenticate_admin_password",
    "The admin password {admin_password} is the right one for {username}.",
    "The admin password {admin_password} is not the right one for {username}.",
)
