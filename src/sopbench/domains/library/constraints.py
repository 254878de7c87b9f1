"""The library's constraints: how the oracle decides each one, and how the SOP words it.

Checks read the database through the lenient tools (``ctx.call``), so a tool's innate failure value
or exception shows up exactly as it did in the published state tracker (e.g. asking for the loans of
an unknown user gives ``False`` from ``internal_get_user_borrowed``, and indexing it raises
``TypeError``). The ``{...}`` placeholders of a wording are filled with the variable names of the
call, and ``{borrow_limit}`` / ``{max_reservation_slots}`` with the task's parameters.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sopbench.domains import Context, parse_time

from . import DOMAIN


# ---- session ----------------------------------------------------------------------------------
@DOMAIN.check(
    'The user "{username}" has logged in with the correct password before this action.',
    'The user "{username}" has not logged in with the correct password before this action.',
)
def logged_in_user(ctx: Context, username: str) -> bool:
    return cast(bool, ctx.session["user"] == username)


@DOMAIN.session_effect("login_user")
def _log_in(session: dict[str, Any], username: str, **_: Any) -> None:
    session["user"] = username


@DOMAIN.session_effect("logout_user")
def _log_out(session: dict[str, Any], **_: Any) -> None:
    session["user"] = None


# ---- loans ------------------------------------------------------------------------------------
def _has_on_loan(ctx: Context, username: str, book_title: str) -> bool:
    book_id = ctx.call("internal_convert_book_title_to_id", book_title=book_title)[1]
    return book_id in ctx.call("internal_get_user_borrowed", username=username)[1]


@DOMAIN.check(
    'The book "{book_title}" (by its id) is among the books the user "{username}" has on loan.',
    'The book "{book_title}" (by its id) is not among the books the user "{username}" has on loan.',
)
def user_book_borrowed(ctx: Context, username: str, book_title: str) -> bool:
    return _has_on_loan(ctx, username, book_title)


@DOMAIN.check(
    'The user "{username}" does not already have the book "{book_title}" (by its id) on loan.',
    'The user "{username}" already has the book "{book_title}" (by its id) on loan.',
)
def user_book_not_borrowed(ctx: Context, username: str, book_title: str) -> bool:
    return not _has_on_loan(ctx, username, book_title)


@DOMAIN.check(
    'No account at all has the book "{book_title}" (by its id) on loan.',
    'At least one account has the book "{book_title}" (by its id) on loan.',
)
def database_book_not_borrowed(ctx: Context, book_title: str) -> bool:
    book_id = ctx.call("internal_convert_book_title_to_id", book_title=book_title)[1]
    return not any(
        book_id in ctx.call("internal_get_user_borrowed", username=holder)[1] for holder in ctx.db["accounts"]
    )


@DOMAIN.check(
    'The user "{username}" has fewer than {borrow_limit} books on loan.',
    'The user "{username}" already has {borrow_limit} or more books on loan.',
)
def within_borrow_limit(ctx: Context, username: str) -> bool:
    return cast(
        bool, ctx.call("internal_get_user_num_borrowed", username=username)[1] < ctx.params["borrow_limit"]
    )


# ---- money and membership ---------------------------------------------------------------------
@DOMAIN.check(
    'The balance of the user "{username}" covers the late fee (late returns times the fee per book).',
    'The balance of the user "{username}" is below the late fee (late returns times the fee per book).',
)
def sufficient_account_balance_for_late_fee(ctx: Context, username: str) -> bool:
    balance = ctx.call("get_account_balance", username=username)[1]
    return cast(bool, balance >= ctx.call("internal_calculate_late_fee", username=username)[1])


@DOMAIN.check(
    'The balance of the user "{username}" covers the monthly membership fee.',
    'The balance of the user "{username}" is below the monthly membership fee.',
)
def sufficient_account_balance_for_membership(ctx: Context, username: str) -> bool:
    balance = ctx.call("get_account_balance", username=username)[1]
    return cast(bool, balance >= ctx.call("internal_get_membership_fee")[1])


@DOMAIN.check('The value "{amount}" is greater than zero.', 'The value "{amount}" is zero or negative.')
def amount_positive_restr(ctx: Context, amount: Any) -> bool:
    return cast(bool, amount > 0)


def _to_date(ctx: Context, human_date: Any) -> datetime:
    iso = ctx.call("internal_convert_human_date_to_iso", date_string=human_date)[1]
    return parse_time(iso, "%Y-%m-%d")


@DOMAIN.check(
    'The user "{username}" has a membership that expires today or later.',
    'The user "{username}" has no membership, or it expired before today.',
)
def valid_membership(ctx: Context, username: str) -> bool:
    expiry = ctx.call("internal_get_membership_status", username=username)[1]
    if not expiry:
        return False
    expiry_date = _to_date(ctx, expiry)
    today = _to_date(ctx, ctx.call("internal_get_interaction_date")[1])
    return expiry_date >= today


# ---- rooms ------------------------------------------------------------------------------------
@DOMAIN.check(
    'The slots the user "{username}" already holds plus the requested slots "{slots}" '
    "come to at most {max_reservation_slots}.",
    'The slots the user "{username}" already holds plus the requested slots "{slots}" '
    "come to more than {max_reservation_slots}.",
)
def within_max_reservation_slots(ctx: Context, username: str, slots: Any) -> bool:
    reserved = ctx.call("internal_get_num_reserved_slots", username=username)[1]
    return cast(bool, reserved + len(slots) <= ctx.params["max_reservation_slots"])


# ---- constraints that are tools (their (ok, value) result is the truth) --------------------------
DOMAIN.describe(
    "login_user",
    'The user "{username}" can log in with the password "{password}".',
    'The user "{username}" cannot log in with the password "{password}".',
)
DOMAIN.describe(
    "internal_check_username_exist",
    'An account with the username "{username}" exists.',
    'No account with the username "{username}" exists.',
)
DOMAIN.describe(
    "internal_check_book_exist",
    'The title "{book_title}" is in the catalogue and its id has a book record.',
    'The title "{book_title}" is not in the catalogue, or its id has no book record.',
)
DOMAIN.describe(
    "internal_check_book_available",
    'At least one copy of the book "{book_title}" is on the shelf.',
    'No copy of the book "{book_title}" is on the shelf.',
)
DOMAIN.describe(
    "internal_is_restricted",
    'The book "{book_title}" is restricted to members.',
    'The book "{book_title}" is not restricted.',
)
DOMAIN.describe(
    "internal_is_admin",
    'The user "{username}" is a library administrator.',
    'The user "{username}" is not a library administrator.',
)
DOMAIN.describe(
    "internal_check_room_exist",
    'A study room with the id "{room_id}" exists.',
    'No study room with the id "{room_id}" exists.',
)
DOMAIN.describe(
    "internal_check_date_available_for_the_room",
    'The room "{room_id}" still has free slots on the date "{resv_date}".',
    'The room "{room_id}" has no free slots listed on the date "{resv_date}".',
)
DOMAIN.describe(
    "internal_all_slots_available_for_the_room_on_the_date",
    'Every requested slot "{slots}" of the room "{room_id}" is still free on "{resv_date}".',
    'Not every requested slot "{slots}" of the room "{room_id}" is free on "{resv_date}".',
)
