"""The library's tools, as the lenient system executes them.

Each body runs after the tool's innate check (``sop.json``) has passed and returns what the published
system returns: ``(True, value)`` for a read, ``True`` for a write; an innate failure returns ``False``.
Errors are the ones the published code raises at the same point (``KeyError: 'bob'``,
``ValueError: Invalid date format: ...``), because recorded tool outputs contain their text.

Published behaviours kept (recorded trajectories were produced by them; replay reproduces them):
- ``reserve_room`` does not record a second date for a room the user already holds a reservation
  for (the new date is silently dropped), yet still takes its slots off the room.
- ``reserve_room`` records the reservation before it touches the room's date, so an unknown date
  raises ``KeyError`` with the reservation already written; slots the room does not offer are
  reserved anyway; a date whose last slot is taken disappears from the room.
- ``borrow_book`` with an unknown title stores the due date under the key ``None`` in the user's
  loans and then fails with ``KeyError: None``.
- ``return_book`` removes the loan before it parses the due date and before it puts the copy back
  on the shelf, so a failure in either step leaves the loan removed.
- ``pay_late_fee`` deducts ``late_book_count * late_fee_per_book`` but does not reset the count:
  paying twice charges twice.
- ``update_membership`` extends a lapsed membership from its old expiry date (not from today) and
  charges the fee whatever the balance.
- ``add_book`` for a known title overwrites its count and restricted flag instead of adding copies;
  a new title's id is drawn from ``random.Random(title)``, the same sequence as the published
  ``random.seed(title)`` (we do not reseed the process-wide generator).
- ``internal_check_book_exist`` treats a title mapped to an empty id as missing.
- ``show_available_rooms`` and ``internal_get_database`` return the live data, not a copy.
"""

from __future__ import annotations

import copy
import random
import re
import string
from datetime import datetime, timedelta
from typing import Any, cast

from sopbench.domains import READ, WRITE, Context, parse_time

from . import DOMAIN

BOOK_ID_ALPHABET = string.ascii_uppercase + string.digits
BOOK_ID_LENGTH = 7
MEMBERSHIP_PERIOD_DAYS = 30
_ORDINAL_SUFFIX = re.compile(r"(\d+)(st|nd|rd|th)")


# ---- dates ------------------------------------------------------------------------------------
def human_to_iso(date_string: Any) -> str:
    """``"October 10th, 2024"`` -> ``"2024-10-10"``; any other text raises ``ValueError``."""
    cleaned = _ORDINAL_SUFFIX.sub(r"\1", date_string)
    try:
        return parse_time(cleaned, "%B %d, %Y").strftime("%Y-%m-%d")
    except ValueError as exc:
        raise ValueError(f"Invalid date format: {date_string}") from exc


def iso_to_human(iso_date: Any) -> str:
    """``"2024-10-01"`` -> ``"October 1st, 2024"`` (11th, 12th, 13th keep "th")."""
    try:
        parsed = parse_time(iso_date, "%Y-%m-%d")
    except ValueError as exc:
        raise ValueError(f"Invalid ISO date format: {iso_date}") from exc
    day = parsed.day
    return parsed.strftime(f"%B {day}{_day_suffix(day)}, %Y")


def _day_suffix(day: int) -> str:
    if 11 <= day <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _as_datetime(human_date: Any) -> datetime:
    # Through the ISO text, as the published code does, so that odd dates fail the same way.
    return parse_time(human_to_iso(human_date), "%Y-%m-%d")


def _days_after(human_date: Any, days: Any) -> str:
    shifted = _as_datetime(human_date) + timedelta(days=days)
    return iso_to_human(shifted.strftime("%Y-%m-%d"))


def _today(ctx: Context) -> str:
    return cast(str, ctx.db["interaction_date"])


def _titles(ctx: Context) -> dict[str, str]:
    return cast(dict[str, str], ctx.db["book_title_to_id"])


# ---- session ----------------------------------------------------------------------------------
@DOMAIN.tool(
    WRITE,
    "Log a library user in with their username and password.",
    returns="Returns True when the password is correct, False otherwise.",
)
def login_user(ctx: Context, username: str, password: str) -> bool:
    return cast(bool, ctx.db["accounts"][username]["password"] == password)


@DOMAIN.tool(WRITE, "Log the user out of their library account.", returns="Returns True.")
def logout_user(ctx: Context, username: str) -> bool:
    return True


# ---- books ------------------------------------------------------------------------------------
@DOMAIN.tool(
    READ,
    "List the titles of the books that have at least one copy on the shelf.",
    returns="Returns a list of book titles.",
)
def show_available_book(ctx: Context, username: str) -> tuple[bool, Any]:
    books = ctx.db["books"]
    return True, [
        title for title, book_id in _titles(ctx).items() if books.get(book_id, {}).get("count", 0) > 0
    ]


@DOMAIN.tool(
    WRITE,
    "Lend one copy of a book to the user; the due date is today plus the loan period.",
    returns="Returns True when the book has been lent.",
)
def borrow_book(ctx: Context, username: str, book_title: str) -> bool:
    book_id = _titles(ctx).get(book_title)
    due_date = _days_after(_today(ctx), ctx.db["loan_period"])
    ctx.db["accounts"][username]["borrowed"][book_id] = due_date
    ctx.db["books"][book_id]["count"] -= 1
    return True


@DOMAIN.tool(
    WRITE,
    "Take back a book the user has borrowed; a return after its due date counts as late.",
    returns="Returns True when the book has been returned.",
)
def return_book(ctx: Context, username: str, book_title: str) -> bool:
    book_id = _titles(ctx).get(book_title)
    today = _as_datetime(_today(ctx))
    due_date = _as_datetime(ctx.db["accounts"][username]["borrowed"].pop(book_id))
    ctx.db["books"][book_id]["count"] += 1
    if today > due_date:
        ctx.db["accounts"][username]["late_book_count"] += 1
    return True


@DOMAIN.tool(
    READ,
    "Look up when a book the user has borrowed is due back.",
    returns="Returns the due date, e.g. 'October 24th, 2024'.",
)
def check_return_date(ctx: Context, username: str, book_title: str) -> tuple[bool, Any]:
    loans = ctx.db["accounts"][username]["borrowed"]
    return True, loans[_titles(ctx).get(book_title)]


# ---- money and membership ---------------------------------------------------------------------
@DOMAIN.tool(READ, "Look up the balance of the user's library account.", returns="Returns the balance.")
def get_account_balance(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, ctx.db["accounts"][username]["balance"]


@DOMAIN.tool(
    WRITE, "Add money to the user's library account.", returns="Returns True when the amount is added."
)
def credit_balance(ctx: Context, username: str, amount: float) -> bool:
    ctx.db["accounts"][username]["balance"] += amount
    return True


@DOMAIN.tool(
    WRITE,
    "Charge the user the late fee for every book they returned late.",
    returns="Returns True when the fee is deducted from the balance.",
)
def pay_late_fee(ctx: Context, username: str) -> bool:
    account = ctx.db["accounts"][username]
    account["balance"] -= account["late_book_count"] * ctx.db["late_fee_per_book"]
    return True


@DOMAIN.tool(
    WRITE,
    "Renew the user's membership for 30 days and charge the monthly membership fee.",
    returns="Returns the new expiry date of the membership.",
)
def update_membership(ctx: Context, username: str) -> tuple[bool, Any]:
    account = ctx.db["accounts"][username]
    # An existing membership, even a lapsed one, is extended from its own expiry date.
    start = account["membership"] or _today(ctx)
    new_expiry = _days_after(start, MEMBERSHIP_PERIOD_DAYS)
    account["membership"] = new_expiry
    account["balance"] -= ctx.db["membership_monthly_fee"]
    return True, new_expiry


# ---- catalogue management (administrators) -----------------------------------------------------
@DOMAIN.tool(
    WRITE,
    "Put a book into the catalogue with a number of copies and whether it is restricted; "
    "a title already in the catalogue gets these values.",
    returns="Returns True when the book is in the catalogue.",
)
def add_book(ctx: Context, username: str, book_title: str, count: int, restricted: bool) -> bool:
    rng = random.Random(book_title)  # same draws as the published code's random.seed(book_title)
    books = ctx.db["books"]
    book_id = _titles(ctx).get(book_title)
    if not book_id:
        book_id = _draw_book_id(rng, books)
    _titles(ctx)[book_title] = book_id
    books[book_id] = {"count": count, "restricted": restricted}
    return True


def _draw_book_id(rng: random.Random, books: dict[str, Any]) -> str:
    while True:
        book_id = "".join(rng.choices(BOOK_ID_ALPHABET, k=BOOK_ID_LENGTH))
        if book_id not in books:
            return book_id


@DOMAIN.tool(WRITE, "Withdraw a book from the catalogue.", returns="Returns True when the book is removed.")
def remove_book(ctx: Context, username: str, book_title: str) -> bool:
    del ctx.db["books"][_titles(ctx).get(book_title)]
    del _titles(ctx)[book_title]
    return True


# ---- study rooms ------------------------------------------------------------------------------
@DOMAIN.tool(
    READ,
    "List the study rooms with the dates and time slots still free.",
    returns="Returns a mapping room id -> date -> list of free slots.",
)
def show_available_rooms(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, ctx.db["rooms"]


@DOMAIN.tool(
    WRITE,
    "Reserve time slots of a study room on a date for the user.",
    returns="Returns True when the reservation is made.",
)
def reserve_room(ctx: Context, username: str, room_id: str, resv_date: str, slots: list[Any]) -> bool:
    # A copy, so that the database never shares a list with the caller's arguments.
    slots_held = copy.copy(slots)
    reservations = ctx.db["accounts"][username]["room_reservation"]
    held_dates = reservations.get(room_id, {})
    if not held_dates:
        reservations[room_id] = {resv_date: slots_held}
    elif held_dates.get(resv_date, {}):
        held_dates[resv_date].extend(slots)
    # else: a further date of a room already held is not recorded (published behaviour)
    free_slots = ctx.db["rooms"][room_id]
    for slot in slots:
        if slot in free_slots[resv_date]:
            free_slots[resv_date].remove(slot)
    if not free_slots[resv_date]:
        del free_slots[resv_date]
    return True


# ---- internal helpers offered to the agent ----------------------------------------------------
@DOMAIN.tool(READ, "Read the whole library database.", returns="Returns the database.")
def internal_get_database(ctx: Context) -> tuple[bool, Any]:
    return True, ctx.db


@DOMAIN.tool(
    READ,
    "Check whether an account with this username exists.",
    returns="Returns True if the account exists, False otherwise.",
)
def internal_check_username_exist(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, username in ctx.db["accounts"]


@DOMAIN.tool(
    READ,
    "Find the id of a book from its title.",
    returns="Returns the book id, or None for an unknown title.",
)
def internal_convert_book_title_to_id(ctx: Context, book_title: str) -> tuple[bool, Any]:
    return True, _titles(ctx).get(book_title)


@DOMAIN.tool(
    READ,
    "Check whether a title is in the catalogue and its id has a book record.",
    returns="Returns True if the book exists, False otherwise.",
)
def internal_check_book_exist(ctx: Context, book_title: str) -> tuple[bool, Any]:
    book_id = ctx.call("internal_convert_book_title_to_id", book_title=book_title)[1]
    return True, bool(book_id) and book_id in ctx.db["books"]


@DOMAIN.tool(
    READ,
    "Check whether at least one copy of a book is on the shelf.",
    returns="Returns True if a copy can be borrowed, False otherwise.",
)
def internal_check_book_available(ctx: Context, book_title: str) -> tuple[bool, Any]:
    book_id = ctx.call("internal_convert_book_title_to_id", book_title=book_title)[1]
    return True, ctx.db["books"][book_id]["count"] > 0


@DOMAIN.tool(
    READ, "List the ids of the books the user currently has on loan.", returns="Returns a list of book ids."
)
def internal_get_user_borrowed(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, list(ctx.db["accounts"][username]["borrowed"].keys())


@DOMAIN.tool(READ, "Count the books the user currently has on loan.", returns="Returns the number of books.")
def internal_get_user_num_borrowed(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, len(ctx.db["accounts"][username]["borrowed"])


@DOMAIN.tool(
    READ,
    "Work out the late fee the user owes: late returns times the fee per book.",
    returns="Returns the fee.",
)
def internal_calculate_late_fee(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, ctx.db["accounts"][username]["late_book_count"] * ctx.db["late_fee_per_book"]


@DOMAIN.tool(READ, "Look up the monthly membership fee.", returns="Returns the fee.")
def internal_get_membership_fee(ctx: Context) -> tuple[bool, Any]:
    return True, ctx.db["membership_monthly_fee"]


@DOMAIN.tool(
    READ,
    "Check whether a book is restricted to members.",
    returns="Returns True if the book is restricted, False otherwise.",
)
def internal_is_restricted(ctx: Context, book_title: str) -> tuple[bool, Any]:
    return True, ctx.db["books"][_titles(ctx).get(book_title)]["restricted"]


@DOMAIN.tool(
    READ,
    "Look up when the user's membership expires.",
    returns="Returns the expiry date, or None if the user has never been a member.",
)
def internal_get_membership_status(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, ctx.db["accounts"][username]["membership"]


@DOMAIN.tool(
    READ,
    "Check whether the user is a library administrator.",
    returns="Returns True for an administrator, False otherwise.",
)
def internal_is_admin(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, ctx.db["accounts"][username]["admin"]


@DOMAIN.tool(
    READ,
    "Count the room slots the user holds across all reservations.",
    returns="Returns the number of slots.",
)
def internal_get_num_reserved_slots(ctx: Context, username: str) -> tuple[bool, Any]:
    reservations = ctx.db["accounts"][username].get("room_reservation", {})
    return True, sum(len(slots) for dates in reservations.values() for slots in dates.values())


@DOMAIN.tool(
    READ,
    "Check whether a study room with this id exists.",
    returns="Returns True if the room exists, False otherwise.",
)
def internal_check_room_exist(ctx: Context, room_id: str) -> tuple[bool, Any]:
    return True, room_id in ctx.db.get("rooms", {})


@DOMAIN.tool(
    READ,
    "Check whether a room still has free slots on a date.",
    returns="Returns True if the date is open for the room, False otherwise.",
)
def internal_check_date_available_for_the_room(
    ctx: Context, room_id: str, resv_date: str
) -> tuple[bool, Any]:
    return True, resv_date in ctx.db["rooms"][room_id]


@DOMAIN.tool(
    READ,
    "Check whether every requested slot of a room is still free on a date.",
    returns="Returns True if all the slots are free, False otherwise.",
)
def internal_all_slots_available_for_the_room_on_the_date(
    ctx: Context, room_id: str, resv_date: str, slots: list[Any]
) -> tuple[bool, Any]:
    for slot in slots:
        # Looked up per slot, as published: an empty request never reads the date.
        if slot not in ctx.db["rooms"][room_id][resv_date]:
            return True, False
    return True, True


@DOMAIN.tool(READ, "Look up today's date in the library system.", returns="Returns the date.")
def internal_get_interaction_date(ctx: Context) -> tuple[bool, Any]:
    return True, _today(ctx)


@DOMAIN.tool(
    READ,
    "Convert a written-out date such as 'October 10th, 2024' to ISO form 'YYYY-MM-DD'.",
    returns="Returns the ISO date.",
)
def internal_convert_human_date_to_iso(ctx: Context, date_string: str) -> tuple[bool, Any]:
    return True, human_to_iso(date_string)


@DOMAIN.tool(
    READ,
    "Convert an ISO date 'YYYY-MM-DD' to the written-out form such as 'October 10th, 2024'.",
    returns="Returns the written-out date.",
)
def internal_convert_iso_to_human_date(ctx: Context, iso_date: str) -> tuple[bool, Any]:
    return True, iso_to_human(iso_date)
