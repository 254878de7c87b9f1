"""The DMV constraints: truth functions, session effects and the wording of every constraint.

Checks read the database through the lenient tools (``ctx.call``), as the published state tracker
did, so a missing account or vehicle fails the same way: the reader's innate check returns ``False``
and indexing it raises ``TypeError: 'bool' object is not subscriptable``. The catalogue's
constraint dependencies exist to rule such calls out first.

Thresholds are cast with ``int()`` because a few task files give them as strings (the published
tracker cast them once when it was built).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any, cast

from sopbench.domains import Context, parse_time

from . import DOMAIN
from .state import DATE_FORMAT, TIME_FORMAT


def _now(ctx: Context) -> datetime:
    return parse_time(ctx.call("internal_get_interaction_time")[1], TIME_FORMAT)


def _vehicle(ctx: Context, username: str, plate_num: str) -> dict[str, Any]:
    return cast(
        dict[str, Any], ctx.call("internal_get_vehicle_details", username=username, plate_num=plate_num)[1]
    )


def _licence(ctx: Context, username: str) -> dict[str, Any]:
    return cast(dict[str, Any], ctx.call("internal_get_dl_details", username=username)[1])


def _test(ctx: Context, username: str, test_type: str) -> dict[str, Any]:
    return cast(
        dict[str, Any], ctx.call("internal_get_test_details", username=username, test_type=test_type)[1]
    )


def _within_window(today: date, last_day_text: str, window_days: int) -> bool:
    last_day = parse_time(last_day_text, DATE_FORMAT).date()
    return last_day - timedelta(days=window_days) <= today <= last_day


# ---- session ----------------------------------------------------------------------------------------
@DOMAIN.check(
    "The user {username} has logged in with the right identification.",
    "The user {username} has not logged in with the right identification.",
)
def logged_in_user(ctx: Context, username: str) -> bool:
    return username in ctx.session["logged_in_users"]


@DOMAIN.check(
    "The administrator password of {username} has been confirmed.",
    "The administrator password of {username} has not been confirmed.",
)
def authenticated_admin_password(ctx: Context, username: str) -> bool:
    # One flag for the whole session, whoever gave the password (as published).
    return cast(bool, ctx.session["admin_authenticated"])


@DOMAIN.session_effect("login_user")
def _sign_in(session: dict[str, Any], username: str, **_: Any) -> None:
    session["logged_in_users"].add(username)


@DOMAIN.session_effect("logout_user")
def _sign_out(session: dict[str, Any], username: str, **_: Any) -> None:
    # set.remove: signing out a user who is not signed in raises KeyError, as the original did.
    session["logged_in_users"].remove(username)


@DOMAIN.session_effect("authenticate_admin_password")
def _confirm_admin(session: dict[str, Any], **_: Any) -> None:
    session["admin_authenticated"] = True


# ---- vehicles ---------------------------------------------------------------------------------------
@DOMAIN.check(
    "The vehicle {plate_num} of {username} is registered at an address other than {address_new}.",
    "The vehicle {plate_num} of {username} is already registered at {address_new}.",
)
def is_vehicle_address_different(ctx: Context, username: str, plate_num: str, address_new: str) -> bool:
    return cast(bool, _vehicle(ctx, username, plate_num)["address"] != address_new)


@DOMAIN.check(
    "The insurance of the vehicle {plate_num} of {username} is recorded as 'valid'.",
    "The insurance of the vehicle {plate_num} of {username} is not recorded as 'valid'.",
)
def valid_vehicle_insurance(ctx: Context, username: str, plate_num: str) -> bool:
    return cast(bool, _vehicle(ctx, username, plate_num)["insurance_status"] == "valid")


@DOMAIN.check(
    "Today's date (from the interaction time) is no earlier than {vehicle_renewal_window} days before the "
    "registration date of the vehicle {plate_num} of {username}, and no later than that date.",
    "Today's date (from the interaction time) is more than {vehicle_renewal_window} days before the "
    "registration date of the vehicle {plate_num} of {username}, or after that date.",
)
def within_vehicle_renewal_period(ctx: Context, username: str, plate_num: str) -> bool:
    today = _now(ctx).date()
    reg_date = _vehicle(ctx, username, plate_num)["reg_date"]
    return _within_window(today, reg_date, int(ctx.params["vehicle_renewal_window"]))


# ---- driver's licences ------------------------------------------------------------------------------
@DOMAIN.check(
    "The driver's licence of {username} shows an address other than {address_new}.",
    "The driver's licence of {username} already shows the address {address_new}.",
)
def is_dl_address_different(ctx: Context, username: str, address_new: str) -> bool:
    return cast(bool, _licence(ctx, username)["address"] != address_new)


@DOMAIN.check(
    "Today's date (from the interaction time) is no earlier than {dl_renewal_window} days before the "
    "expiry date of the driver's licence of {username}, and no later than that date.",
    "Today's date (from the interaction time) is more than {dl_renewal_window} days before the expiry "
    "date of the driver's licence of {username}, or after that date.",
)
def within_dl_renewal_period(ctx: Context, username: str) -> bool:
    today = _now(ctx).date()
    return _within_window(today, _licence(ctx, username)["exp_date"], int(ctx.params["dl_renewal_window"]))


# ---- tests ------------------------------------------------------------------------------------------
@DOMAIN.check(
    "The user {username} is at least {min_age} years old in whole years at the interaction time.",
    "The user {username} is younger than {min_age} years at the interaction time.",
)
def above_minimum_age(ctx: Context, username: str) -> bool:
    now = _now(ctx)
    birthday = parse_time(ctx.call("internal_get_user_birthday", username=username)[1], DATE_FORMAT)
    age = now.year - birthday.year
    if (now.month, now.day) < (birthday.month, birthday.day):
        age -= 1  # this year's birthday is still to come
    return age >= int(ctx.params["min_age"])


@DOMAIN.check(
    "The test type {test_type} is 'drive'.",
    "The test type {test_type} is not 'drive'.",
)
def test_type_is_drive(ctx: Context, test_type: str) -> bool:
    return test_type == "drive"


@DOMAIN.check(
    "The user {username} has passed the knowledge test and their drive test is 'not scheduled'.",
    "The user {username} has not passed the knowledge test, or their drive test is not 'not scheduled'.",
)
def drive_test_ready(ctx: Context, username: str) -> bool:
    return cast(
        bool,
        _test(ctx, username, "knowledge")["status"] == "passed"
        and _test(ctx, username, "drive")["status"] == "not scheduled",
    )


@DOMAIN.check(
    "The {test_type} test of {username} is 'scheduled' and has a booked time.",
    "The {test_type} test of {username} is not 'scheduled' or has no booked time.",
)
def test_scheduled(ctx: Context, username: str, test_type: str) -> bool:
    return (
        _test(ctx, username, test_type)["status"] == "scheduled"
        and _test(ctx, username, test_type)["scheduled_time"] is not None
    )


@DOMAIN.check(
    "The user {username} has made fewer than {attempt_limit} attempts at the {test_type} test.",
    "The user {username} has made {attempt_limit} or more attempts at the {test_type} test.",
)
def within_attempt_limit(ctx: Context, username: str, test_type: str) -> bool:
    return cast(bool, _test(ctx, username, test_type)["attempts"] < int(ctx.params["attempt_limit"]))


@DOMAIN.check(
    "The interaction time is strictly earlier than the booked time of the {test_type} test of {username}.",
    "The interaction time is not earlier than the booked time of the {test_type} test of {username}.",
)
def before_test_date(ctx: Context, username: str, test_type: str) -> bool:
    now = _now(ctx)
    return now < parse_time(_test(ctx, username, test_type)["scheduled_time"], TIME_FORMAT)


# ---- constraints that are tools ---------------------------------------------------------------------
DOMAIN.describe(
    "login_user",
    "The user {username} can log in: {identification} matches the identification on the account.",
    "The user {username} cannot log in: {identification} does not match the identification on the account.",
)
DOMAIN.describe(
    "authenticate_admin_password",
    "The administrator password {admin_password} matches the one on the account of {username}.",
    "The administrator password {admin_password} does not match the one on the account of {username}.",
)
DOMAIN.describe(
    "internal_check_username_exist",
    "An account with the username {username} exists (a key of the accounts in the database).",
    "No account with the username {username} exists in the database.",
)
DOMAIN.describe(
    "internal_has_vehicle",
    "The user {username} owns a vehicle with the plate number {plate_num}.",
    "The user {username} owns no vehicle with the plate number {plate_num}.",
)
DOMAIN.describe(
    "internal_vehicle_registered",
    "Some account already has a vehicle with the plate number {plate_num}.",
    "No account has a vehicle with the plate number {plate_num}.",
)
DOMAIN.describe(
    "internal_has_dl",
    "The user {username} holds a driver's licence (the licence field is not empty).",
    "The user {username} holds no driver's licence (the licence field is empty).",
)
DOMAIN.describe(
    "internal_valid_test_type",
    "The test type {test_type} is one the DMV offers (a key of the test slots).",
    "The test type {test_type} is not one the DMV offers.",
)
DOMAIN.describe(
    "internal_check_test_slot_available",
    "The time {schedule_time} is one of the open slots listed for the {test_type} test.",
    "The time {schedule_time} is not among the open slots listed for the {test_type} test.",
)
