"""The DMV tools, as the lenient system executes them.

Each body runs after the catalogue's innate check has passed and does what the published ``DMV``
method does from there: the same reads and writes in the same order (so a call that fails half-way
leaves the same partial write), the same return values and the same exceptions.

Published behaviours kept (recorded trajectories were produced by them):
- ``schedule_test`` leaves the booked slot in ``test_slots`` and adds one attempt even when the test was already scheduled.
- ``cancel_test`` takes one attempt back, so attempts can drop below zero.
- ``update_test_status`` with a false ``passed`` sets the status to "not scheduled" and keeps the attempt count.
- ``update_test_status`` for a passed drive test replaces any existing licence; it expires on this year's birthday plus five years, not five years from today.
- ``update_test_status`` writes the test status before issuing the licence, so a 29 February birthday in a non-leap year raises ``ValueError`` after the status was already written.
- ``update_test_status`` uses the username as the legal name when ``legal_name`` is missing or empty.
- Licence numbers are "D" plus a number right-aligned in ten characters (space-padded, not zero-padded).
- ``renew_vehicle`` adds 365 days to the stored registration date (not to today); ``renew_dl`` adds five calendar years to the expiry date and raises ``ValueError`` for a 29 February expiry.
- ``register_vehicle`` overwrites a vehicle of the same plate already owned by the user and always records the insurance as "expired".
- ``transfer_title`` removes the vehicle from its owner before looking up the new owner, so an unknown ``target_owner`` raises ``KeyError`` after the vehicle was already removed.
- ``logout_user`` always succeeds in the lenient system; ``login_user`` compares the identification exactly.
- ``internal_vehicle_registered`` asks ``internal_has_vehicle`` account by account (with its innate check).
- Checks (constraints.py) read through these tools, so a check on a missing record raises ``TypeError: 'bool' object is not subscriptable``; ``before_test_date`` on an unscheduled test raises ``TypeError`` from ``strptime``.
- The strict session keeps a set of logged-in users; logging out a user who is not logged in raises ``KeyError`` (Q18).

Not reproducible (Q18): the published licence number came from Python's process-salted ``hash()``
of the username. Ours is a stable digest of the username by default (option ``licence_number``:
``"digest"``); ``"python_hash"`` uses the interpreter's ``hash()`` as the original did, which is only
repeatable with a fixed ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any, cast

from sopbench.domains import READ, WRITE, Context, parse_time

from . import DOMAIN, LICENCE_NUMBER_OPTION
from .state import DATE_FORMAT, TIME_FORMAT


def _accounts(ctx: Context) -> dict[str, Any]:
    return cast(dict[str, Any], ctx.db["accounts"])


def _vehicles(ctx: Context, username: str) -> dict[str, Any]:
    return cast(dict[str, Any], ctx.db["accounts"][username]["vehicles"])


def licence_number(username: str, source: str = "digest") -> str:
    """A licence number for ``username``: "D" and a ten-character, space-padded number."""
    if source == "python_hash":
        number = abs(hash(username)) % (10**10)
    elif source == "digest":
        digest = hashlib.blake2b(str(username).encode("utf-8"), digest_size=8).digest()
        number = int.from_bytes(digest, "big") % (10**10)
    else:
        raise ValueError(
            f"unknown {LICENCE_NUMBER_OPTION} option {source!r} (expected 'digest' or 'python_hash')"
        )
    return f"D{number:10d}"


# ---- account access --------------------------------------------------------------------------------
@DOMAIN.tool(
    READ,
    "Sign a user in by checking the identification they give against their account.",
    returns="Returns true when the identification matches, false otherwise.",
)
def login_user(ctx: Context, username: str, identification: str) -> bool:
    return cast(bool, _accounts(ctx)[username]["identification"] == identification)


@DOMAIN.tool(READ, "Sign a user out of their account.", returns="Returns true.")
def logout_user(ctx: Context, username: str) -> bool:
    return True


@DOMAIN.tool(
    READ,
    "Check the administrator password of a user's account; some services need it first.",
    returns="Returns true when the password is right, false otherwise.",
)
def authenticate_admin_password(ctx: Context, username: str, admin_password: str) -> bool:
    return cast(bool, _accounts(ctx)[username]["admin_password"] == admin_password)


@DOMAIN.tool(
    WRITE,
    "Give a user's account a new administrator password.",
    returns="Returns true when the password was changed.",
)
def set_admin_password(ctx: Context, username: str, admin_password_new: str) -> bool:
    _accounts(ctx)[username]["admin_password"] = admin_password_new
    return True


# ---- vehicles ---------------------------------------------------------------------------------------
@DOMAIN.tool(
    WRITE,
    "Register a vehicle under a user: its plate number, make and model, and VIN. The registration "
    "is dated today and uses the account's address.",
    returns="Returns true when the vehicle was registered.",
)
def register_vehicle(ctx: Context, username: str, plate_num: str, model: str, vin: str) -> bool:
    reg_date = ctx.db["interaction_time"].split("T")[0]
    address = _accounts(ctx)[username]["address"]
    _vehicles(ctx, username)[plate_num] = {
        "model": model,
        "vin": vin,
        "reg_date": reg_date,
        "address": address,
        "insurance_status": "expired",
    }
    return True


@DOMAIN.tool(
    READ,
    "Look up when the registration of one of a user's vehicles is due.",
    returns="Returns the registration date (YYYY-MM-DD).",
)
def get_reg_status(ctx: Context, username: str, plate_num: str) -> tuple[bool, Any]:
    return True, _vehicles(ctx, username)[plate_num]["reg_date"]


@DOMAIN.tool(
    WRITE,
    "Change the address a user's vehicle is registered at.",
    returns="Returns true when the address was changed.",
)
def change_vehicle_address(ctx: Context, username: str, plate_num: str, address_new: str) -> bool:
    _vehicles(ctx, username)[plate_num]["address"] = address_new
    return True


@DOMAIN.tool(
    WRITE,
    "Record that the insurance of a user's vehicle is valid.",
    returns="Returns true when the insurance status was updated.",
)
def validate_vehicle_insurance(ctx: Context, username: str, plate_num: str) -> bool:
    _vehicles(ctx, username)[plate_num]["insurance_status"] = "valid"
    return True


@DOMAIN.tool(
    WRITE,
    "Renew the registration of a user's vehicle for another year.",
    returns="Returns the new registration date (YYYY-MM-DD).",
)
def renew_vehicle(ctx: Context, username: str, plate_num: str) -> tuple[bool, Any]:
    vehicle = _vehicles(ctx, username)[plate_num]
    renewed = parse_time(vehicle["reg_date"], DATE_FORMAT) + timedelta(days=365)
    vehicle["reg_date"] = renewed.strftime(DATE_FORMAT)
    return True, vehicle["reg_date"]


@DOMAIN.tool(
    WRITE,
    "Move a vehicle from one user to another user (transfer of title).",
    returns="Returns true when the title was transferred.",
)
def transfer_title(ctx: Context, username: str, target_owner: str, plate_num: str) -> bool:
    vehicle = _vehicles(ctx, username).pop(plate_num)
    _vehicles(ctx, target_owner)[plate_num] = vehicle
    return True


# ---- driver's licences ------------------------------------------------------------------------------
@DOMAIN.tool(
    READ,
    "Look up when a user's driver's licence expires.",
    returns="Returns the expiry date (YYYY-MM-DD).",
)
def get_dl_status(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, _accounts(ctx)[username]["driver_license"]["exp_date"]


@DOMAIN.tool(
    WRITE,
    "Change the legal name printed on a user's driver's licence.",
    returns="Returns true when the name was changed.",
)
def update_dl_legal_name(ctx: Context, username: str, new_name: str) -> bool:
    _accounts(ctx)[username]["driver_license"]["legal_name"] = new_name
    return True


@DOMAIN.tool(
    WRITE,
    "Change the address on a user's driver's licence.",
    returns="Returns true when the address was changed.",
)
def change_dl_address(ctx: Context, username: str, address_new: str) -> bool:
    _accounts(ctx)[username]["driver_license"]["address"] = address_new
    return True


@DOMAIN.tool(
    WRITE,
    "Renew a user's driver's licence for five more years.",
    returns="Returns the new expiry date (YYYY-MM-DD).",
)
def renew_dl(ctx: Context, username: str) -> tuple[bool, Any]:
    licence = _accounts(ctx)[username]["driver_license"]
    expires = parse_time(licence["exp_date"], DATE_FORMAT)
    licence["exp_date"] = expires.replace(year=expires.year + 5).strftime(DATE_FORMAT)
    return True, licence["exp_date"]


# ---- tests ------------------------------------------------------------------------------------------
@DOMAIN.tool(
    READ,
    "List the open time slots for a kind of test ('knowledge' or 'drive').",
    returns="Returns the list of slot times (YYYY-MM-DDTHH:MM:SS).",
)
def show_available_test_slots(ctx: Context, username: str, test_type: str) -> tuple[bool, Any]:
    return True, ctx.db["test_slots"][test_type]


@DOMAIN.tool(
    WRITE,
    "Book a knowledge or drive test for a user at one of the open slot times.",
    returns="Returns true when the test was booked.",
)
def schedule_test(ctx: Context, username: str, test_type: str, schedule_time: str) -> bool:
    test = _accounts(ctx)[username]["tests"][test_type]
    test["status"] = "scheduled"
    test["scheduled_time"] = schedule_time
    test["attempts"] += 1
    return True


@DOMAIN.tool(
    WRITE,
    "Cancel a user's booked knowledge or drive test.",
    returns="Returns true when the booking was cancelled.",
)
def cancel_test(ctx: Context, username: str, test_type: str) -> bool:
    test = _accounts(ctx)[username]["tests"][test_type]
    test["status"] = "not scheduled"
    test["scheduled_time"] = None
    test["attempts"] -= 1
    return True


@DOMAIN.tool(
    WRITE,
    "Record the result of a user's test. Passing the drive test issues a driver's licence under the "
    "given legal name.",
    returns="Returns true when the result was recorded.",
)
def update_test_status(
    ctx: Context, username: str, test_type: str, passed: bool, legal_name: str | None = None
) -> bool:
    test = _accounts(ctx)[username]["tests"][test_type]
    test["status"] = "passed" if passed else "not scheduled"
    test["scheduled_time"] = None
    if test_type == "drive" and passed:
        _issue_licence(ctx, username, legal_name)
    return True


def _issue_licence(ctx: Context, username: str, legal_name: str | None) -> None:
    now = parse_time(ctx.db["interaction_time"], TIME_FORMAT)
    account = _accounts(ctx)[username]
    birthday = parse_time(account["birthday"], DATE_FORMAT).date()
    # Two steps, as published: this year's birthday first (a 29 February birthday fails here in a
    # non-leap year), then five years on.
    birthday_this_year = birthday.replace(year=now.year)
    expires = birthday_this_year.replace(year=now.year + 5)
    number = licence_number(username, ctx.options.get(LICENCE_NUMBER_OPTION, "digest"))
    account["driver_license"] = {
        "dl_number": number,
        "legal_name": legal_name if legal_name else username,
        "exp_date": expires.strftime(DATE_FORMAT),
        "address": account["address"],
    }


# ---- internal look-ups ------------------------------------------------------------------------------
@DOMAIN.tool(READ, "Read the whole DMV database.", returns="Returns the database.")
def internal_get_database(ctx: Context) -> tuple[bool, Any]:
    return True, ctx.db


@DOMAIN.tool(
    READ,
    "Check whether an account with this username exists.",
    returns="Returns true or false.",
)
def internal_check_username_exist(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, username in _accounts(ctx)


@DOMAIN.tool(READ, "Look up a user's date of birth.", returns="Returns the birthday (YYYY-MM-DD).")
def internal_get_user_birthday(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, _accounts(ctx)[username]["birthday"]


@DOMAIN.tool(
    READ,
    "Check whether the user owns the vehicle with this plate number.",
    returns="Returns true or false.",
)
def internal_has_vehicle(ctx: Context, username: str, plate_num: str) -> tuple[bool, Any]:
    return True, plate_num in _accounts(ctx).get(username, {}).get("vehicles", {})


@DOMAIN.tool(
    READ,
    "Check whether any user has a vehicle registered under this plate number.",
    returns="Returns true or false.",
)
def internal_vehicle_registered(ctx: Context, plate_num: str) -> tuple[bool, Any]:
    # Asks the ownership tool account by account, as the published system did.
    for owner in _accounts(ctx):
        if ctx.call("internal_has_vehicle", username=owner, plate_num=plate_num)[1]:
            return True, True
    return True, False


@DOMAIN.tool(
    READ,
    "Look up one of a user's vehicles: make and model, VIN, registration date, registered address "
    "and insurance status.",
    returns="Returns the vehicle record.",
)
def internal_get_vehicle_details(ctx: Context, username: str, plate_num: str) -> tuple[bool, Any]:
    return True, _vehicles(ctx, username)[plate_num]


@DOMAIN.tool(
    READ,
    "Check whether the user holds a driver's licence.",
    returns="Returns true or false.",
)
def internal_has_dl(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, _accounts(ctx).get(username, {}).get("driver_license") is not None


@DOMAIN.tool(
    READ,
    "Look up a user's driver's licence: number, legal name, expiry date and address.",
    returns="Returns the licence record.",
)
def internal_get_dl_details(ctx: Context, username: str) -> tuple[bool, Any]:
    return True, _accounts(ctx)[username]["driver_license"]


@DOMAIN.tool(
    READ,
    "Check whether a test type is one the DMV offers.",
    returns="Returns true or false.",
)
def internal_valid_test_type(ctx: Context, test_type: str) -> tuple[bool, Any]:
    return True, test_type in ctx.db["test_slots"]


@DOMAIN.tool(
    READ,
    "Check whether a time is one of the open slots for a test type.",
    returns="Returns true or false.",
)
def internal_check_test_slot_available(ctx: Context, test_type: str, schedule_time: str) -> tuple[bool, Any]:
    return True, schedule_time in ctx.db["test_slots"].get(test_type, [])


@DOMAIN.tool(
    READ,
    "Look up a user's record for one test type: status, booked time (if any) and number of attempts.",
    returns="Returns the test record.",
)
def internal_get_test_details(ctx: Context, username: str, test_type: str) -> tuple[bool, Any]:
    return True, _accounts(ctx)[username]["tests"][test_type]


@DOMAIN.tool(
    READ,
    "Read the current date and time of the conversation, the reference for every date rule.",
    returns="Returns the time (YYYY-MM-DDTHH:MM:SS).",
)
def internal_get_interaction_time(ctx: Context) -> tuple[bool, Any]:
    return True, ctx.db["interaction_time"]
