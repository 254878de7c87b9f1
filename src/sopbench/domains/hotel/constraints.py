"""Hotel constraints: the truth of every state constraint, and the wording of every constraint.

Checks read the database through the lenient tools (``ctx.call``) where the published state
tracker did, and directly where it read the data; so a tool's innate check, and the exceptions of
a missing booking or member, take part exactly as they did. Dates are ``YYYY-MM-DD`` and times
``YYYY-MM-DDTHH:MM:SS``; "today" and "now" are the database's interaction time.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from sopbench.domains import Context, parse_time

from . import DOMAIN
from .tools import nights_of_stay, parse_day

TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S"


def now(ctx: Context) -> str:
    return cast(str, ctx.call("internal_get_interaction_time")[1])


def bookings(ctx: Context) -> dict[str, Any]:
    return cast(dict[str, Any], ctx.call("internal_get_booking_details")[1])


def at_time_of_day(day: str, clock: str) -> datetime:
    """``day`` at ``clock`` (``HH:MM``, as the constraint parameters give times)."""
    return parse_time(f"{day}T{clock}:00", TIMESTAMP_FORMAT)


def nights(check_in_date: str, check_out_date: str) -> int:
    # Parsed in this order so that, when both dates are bad, the same one is named in the error.
    check_in = parse_day(check_in_date)
    return (parse_day(check_out_date) - check_in).days


def current_stay(ctx: Context, guest_name: str) -> dict[str, Any]:
    """The guest's checked-in booking; as published, a guest without one raises TypeError."""
    for booking in bookings(ctx).values():
        if booking["guest"] == guest_name and booking["status"] == "checked-in":
            return cast(dict[str, Any], booking)
    raise TypeError("'NoneType' object is not subscriptable")


def nights_left(change_day: datetime, check_out_date: str) -> int:
    return max((parse_day(check_out_date) - change_day).days, 0)


def member_records(ctx: Context, guest_name: str) -> dict[str, Any]:
    # A guest who is not a member fails the tool's innate check, and False[1] raises TypeError.
    return cast(dict[str, Any], ctx.call("internal_get_loyalty_member_info", guest_name=guest_name)[1])


# ---- dates of a stay -------------------------------------------------------------------------


@DOMAIN.check(
    "The check-out date {check_out_date} comes after the check-in date {check_in_date}.",
    "The check-out date {check_out_date} is not after the check-in date {check_in_date}.",
)
def valid_booking_date_pair(ctx: Context, check_in_date: str, check_out_date: str) -> bool:
    return nights(check_in_date, check_out_date) > 0


@DOMAIN.check(
    "Some room of type {room_type} is free on every night from {check_in_date} up to {check_out_date}.",
    "No room of type {room_type} is free on every night from {check_in_date} up to {check_out_date}.",
)
def room_type_available_for_dates(
    ctx: Context, room_type: str, check_in_date: str, check_out_date: str
) -> bool:
    wanted = nights_of_stay(parse_day(check_in_date), nights(check_in_date, check_out_date))
    room_type_record = ctx.db["rooms"].get(room_type)
    return any(
        all(night in free for night in wanted) for free in room_type_record.get("availability", {}).values()
    )


@DOMAIN.check(
    "Today is between {max_booking_lead_time_days} and {min_booking_lead_time_days} days before the "
    "check-in date {check_in_date}.",
    "Today is more than {max_booking_lead_time_days} or fewer than {min_booking_lead_time_days} days "
    "before the check-in date {check_in_date}.",
)
def is_booking_date_within_lead_time_range(ctx: Context, check_in_date: str) -> bool:
    interaction_time = now(ctx)
    check_in = parse_day(check_in_date)
    current_day = parse_day(interaction_time.split("T")[0])
    earliest = check_in - timedelta(days=ctx.params["max_booking_lead_time_days"])
    latest = check_in - timedelta(days=ctx.params["min_booking_lead_time_days"])
    return earliest <= current_day <= latest


@DOMAIN.check(
    "The stay from {check_in_date} to {check_out_date} is longer than {max_stays} nights.",
    "The stay from {check_in_date} to {check_out_date} is at most {max_stays} nights.",
)
def has_exceeded_maximum_stays(ctx: Context, check_in_date: str, check_out_date: str) -> bool:
    return cast(bool, nights(check_in_date, check_out_date) > ctx.params["max_stays"])


# ---- booking ---------------------------------------------------------------------------------


@DOMAIN.check(
    "The amount {amount} covers the nightly price of a {room_type} room for every night from "
    "{check_in_date} to {check_out_date}.",
    "The amount {amount} is less than the nightly price of a {room_type} room times the nights from "
    "{check_in_date} to {check_out_date}.",
)
def sufficient_amount_for_booking(
    ctx: Context, room_type: str, check_in_date: str, check_out_date: str, amount: float
) -> bool:
    price = ctx.call("show_available_rooms")[1][room_type]["price_per_night"]
    return cast(bool, amount >= nights(check_in_date, check_out_date) * price)


def _overlaps(new_in: datetime, new_out: datetime, booking: dict[str, Any]) -> bool:
    existing_in, existing_out = parse_day(booking["check_in_date"]), parse_day(booking["check_out_date"])
    return new_in < existing_out and new_out > existing_in


@DOMAIN.check(
    "The guest {guest_name} already has a reservation overlapping {check_in_date} to {check_out_date}.",
    "The guest {guest_name} has no reservation overlapping {check_in_date} to {check_out_date}.",
)
def has_overlapping_booking_for_booking(
    ctx: Context, guest_name: str, check_in_date: str, check_out_date: str
) -> bool:
    held = bookings(ctx)
    new_in, new_out = parse_day(check_in_date), parse_day(check_out_date)
    return any(_overlaps(new_in, new_out, b) for b in held.values() if b["guest"] == guest_name)


@DOMAIN.check(
    "Apart from the reservation being changed ({old_check_in_date} to {old_check_out_date}), the guest "
    "{guest_name} has a reservation overlapping {check_in_date} to {check_out_date}.",
    "Apart from the reservation being changed ({old_check_in_date} to {old_check_out_date}), the guest "
    "{guest_name} has no reservation overlapping {check_in_date} to {check_out_date}.",
)
def has_overlapping_booking_for_modification(
    ctx: Context,
    guest_name: str,
    check_in_date: str,
    check_out_date: str,
    old_check_in_date: str,
    old_check_out_date: str,
) -> bool:
    held = bookings(ctx)
    new_in, new_out = parse_day(check_in_date), parse_day(check_out_date)
    for booking in held.values():
        if booking["guest"] != guest_name:
            continue
        existing_in, existing_out = parse_day(booking["check_in_date"]), parse_day(booking["check_out_date"])
        if (existing_in, existing_out) == (parse_day(old_check_in_date), parse_day(old_check_out_date)):
            continue  # the reservation being changed
        if new_in < existing_out and new_out > existing_in:
            return True
    return False


# ---- changing and cancelling -----------------------------------------------------------------


@DOMAIN.check(
    "It is at least {modification_deadline_hours} hours before check-in ({check_in_time}) on {check_in_date}.",
    "It is less than {modification_deadline_hours} hours before check-in ({check_in_time}) on {check_in_date}.",
)
def before_modification_deadline(ctx: Context, check_in_date: str) -> bool:
    current = parse_time(now(ctx), TIMESTAMP_FORMAT)
    deadline = at_time_of_day(check_in_date, ctx.params["check_in_time"]) - timedelta(
        hours=ctx.params["modification_deadline_hours"]
    )
    return current <= deadline


@DOMAIN.check(
    "The guest {guest_name} has a confirmed (not yet checked-in) reservation from {check_in_date} to "
    "{check_out_date}.",
    "The guest {guest_name} has no confirmed reservation from {check_in_date} to {check_out_date}.",
)
def has_confirmed_reservation(ctx: Context, guest_name: str, check_in_date: str, check_out_date: str) -> bool:
    return any(
        b.get("guest") == guest_name
        and b.get("check_in_date") == check_in_date
        and b.get("check_out_date") == check_out_date
        and b.get("status") == "confirmed"
        for b in bookings(ctx).values()
    )


@DOMAIN.check(
    "The amount {amount} covers the extra cost of moving the reservation of {guest_name} from "
    "{old_check_in_date}-{old_check_out_date} to a {room_type} room from {check_in_date} to {check_out_date}.",
    "The amount {amount} does not cover the extra cost of moving the reservation of {guest_name} from "
    "{old_check_in_date}-{old_check_out_date} to a {room_type} room from {check_in_date} to {check_out_date}.",
)
def sufficient_amount_for_reservation_modification(
    ctx: Context,
    guest_name: str,
    old_check_in_date: str,
    old_check_out_date: str,
    check_in_date: str,
    check_out_date: str,
    room_type: str,
    amount: float,
) -> bool:
    held = bookings(ctx)
    prices = ctx.call("show_available_rooms")[1]
    old_type = None  # a missing reservation then raises KeyError: None, as published
    for booking in held.values():
        if (
            booking["guest"] == guest_name
            and booking["check_in_date"] == old_check_in_date
            and booking["check_out_date"] == old_check_out_date
        ):
            old_type = booking["room_type"]
            break
    old_nights = nights(old_check_in_date, old_check_out_date)
    new_nights = nights(check_in_date, check_out_date)
    old_cost = old_nights * prices[old_type]["price_per_night"]
    new_cost = new_nights * prices[room_type]["price_per_night"]
    return cast(bool, amount >= max(new_cost - old_cost, 0))


# ---- check-in and check-out ------------------------------------------------------------------


@DOMAIN.check(
    "The identification {identification} is an accepted document ({valid_document_types}) with a "
    "birthday showing the guest is at least {min_age}.",
    "The identification {identification} is not an accepted document ({valid_document_types}), lacks a "
    "valid birthday, or shows the guest is younger than {min_age}.",
)
def valid_identification(ctx: Context, identification: dict[str, Any]) -> bool:
    if not identification or "type" not in identification or "birthday" not in identification:
        return False
    if identification["type"].lower() not in ctx.params["valid_document_types"]:
        return False
    try:
        birthday = parse_day(identification["birthday"])
    except ValueError:
        return False
    current = parse_day(now(ctx).split("T")[0])
    before_birthday = (current.month, current.day) < (birthday.month, birthday.day)
    return cast(bool, current.year - birthday.year - before_birthday >= ctx.params["min_age"])


@DOMAIN.check(
    "It is now at or after today's check-in time ({check_in_time}).",
    "It is now before today's check-in time ({check_in_time}).",
)
def after_check_in_time(ctx: Context) -> bool:
    interaction_time = now(ctx)
    threshold = at_time_of_day(interaction_time.split("T")[0], ctx.params["check_in_time"])
    return parse_time(interaction_time, TIMESTAMP_FORMAT) >= threshold


@DOMAIN.check(
    "It is now at or before today's check-out time ({check_out_time}).",
    "It is now after today's check-out time ({check_out_time}).",
)
def before_check_out_time(ctx: Context) -> bool:
    interaction_time = now(ctx)
    threshold = at_time_of_day(interaction_time.split("T")[0], ctx.params["check_out_time"])
    return parse_time(interaction_time, TIMESTAMP_FORMAT) <= threshold


@DOMAIN.check(
    "The guest {guest_name} is checked into a room.",
    "The guest {guest_name} is not checked into any room.",
)
def guest_already_checked_in(ctx: Context, guest_name: str) -> bool:
    held = bookings(ctx)
    checkins = ctx.call("internal_get_room_checkin_details")[1]
    checked_in_ids = {checkin["booking_id"] for checkin in checkins.values()}
    return any(
        booking_id in checked_in_ids and booking.get("guest") == guest_name
        for booking_id, booking in held.items()
    )


@DOMAIN.check(
    "The room key has been returned ({key_returned}).",
    "The room key has not been returned ({key_returned}).",
)
def room_key_returned(ctx: Context, key_returned: bool) -> bool:
    # Returned as given: the evaluator then treats a non-boolean like the published one did.
    return key_returned


# ---- room change -----------------------------------------------------------------------------


@DOMAIN.check(
    "A room of type {room_type} is free from today until the check-out of {guest_name}'s current stay.",
    "No room of type {room_type} is free from today until the check-out of {guest_name}'s current stay.",
)
def room_type_available_for_room_change(ctx: Context, guest_name: str, room_type: str) -> bool:
    check_out_date = current_stay(ctx, guest_name)["check_out_date"]
    return room_type_available_for_dates(ctx, room_type, now(ctx).split("T")[0], check_out_date)


@DOMAIN.check(
    "The current stay of {guest_name} has nights left after today.",
    "The current stay of {guest_name} has no nights left.",
)
def has_remaining_nights(ctx: Context, guest_name: str) -> bool:
    change_day = parse_day(now(ctx).split("T")[0])
    return nights_left(change_day, current_stay(ctx, guest_name)["check_out_date"]) > 0


@DOMAIN.check(
    "The amount {amount} covers the price difference of moving {guest_name} to a {room_type} room for "
    "the remaining nights.",
    "The amount {amount} does not cover the price difference of moving {guest_name} to a {room_type} "
    "room for the remaining nights.",
)
def sufficient_amount_for_room_change_fee(
    ctx: Context, guest_name: str, amount: float, room_type: str
) -> bool:
    stay = current_stay(ctx, guest_name)
    old_type, check_out_date = stay["room_type"], stay["check_out_date"]
    left = nights_left(parse_day(now(ctx).split("T")[0]), check_out_date)
    rooms = ctx.db["rooms"]
    old_rate = rooms[old_type]["price_per_night"]
    new_rate = rooms[room_type]["price_per_night"]
    return cast(bool, amount >= max(new_rate * left - old_rate * left, 0))


@DOMAIN.check(
    "The current stay of {guest_name} has had fewer than {max_room_changes} room changes.",
    "The current stay of {guest_name} has already had {max_room_changes} or more room changes.",
)
def within_max_room_changes(ctx: Context, guest_name: str) -> bool:
    return cast(bool, current_stay(ctx, guest_name)["room_change"] < ctx.params["max_room_changes"])


# ---- room service ----------------------------------------------------------------------------


@DOMAIN.check(
    "The guest {guest_name} has placed fewer than {max_room_service_orders_per_day} room-service orders "
    "for room {room_id} today.",
    "The guest {guest_name} has already placed {max_room_service_orders_per_day} or more room-service "
    "orders for room {room_id} today.",
)
def within_room_service_order_daily_limit(ctx: Context, guest_name: str, room_id: str) -> bool:
    held = bookings(ctx)
    order_day = now(ctx).split("T")[0]
    assignment = ctx.call("internal_get_room_assignment")[1]
    served: Any = {}
    for booking_id, booking in held.items():
        if assignment.get(booking_id) == room_id and booking.get("guest") == guest_name:
            served = booking.get("room_service", {})  # the last matching booking counts
    return cast(bool, served.get(order_day, 0) < ctx.params["max_room_service_orders_per_day"])


@DOMAIN.check(
    "It is now within room-service hours ({room_service_start} to {room_service_end}).",
    "It is now outside room-service hours ({room_service_start} to {room_service_end}).",
)
def within_room_service_hours(ctx: Context) -> bool:
    clock = parse_time(now(ctx).split("T")[1], "%H:%M:%S").time()
    start = parse_time(ctx.params["room_service_start"], "%H:%M").time()
    end = parse_time(ctx.params["room_service_end"], "%H:%M").time()
    return start <= clock <= end


@DOMAIN.check(
    "The payment method {payment_method} is loyalty points.",
    "The payment method {payment_method} is not loyalty points.",
)
def payment_with_loyalty_points(ctx: Context, payment_method: str) -> bool:
    return payment_method == "loyalty_points"


@DOMAIN.check(
    "The payment covers the order: with loyalty points, {guest_name} has at least ten points per unit of "
    "price; otherwise the amount {amount} is at least the order's price.",
    "The payment does not cover the order: {guest_name} has fewer than ten loyalty points per unit of "
    "price, or the amount {amount} is missing or below the order's price.",
)
def sufficient_payment_for_room_service(
    ctx: Context,
    guest_name: str,
    order_type: str,
    order_items: list[Any],
    payment_method: str,
    amount: float | None = None,
) -> bool:
    price = ctx.call(
        "internal_compute_room_service_order_fee", order_type=order_type, order_items=order_items
    )[1]
    if payment_method != "loyalty_points":
        return amount is not None and amount >= price
    return cast(bool, list(member_records(ctx, guest_name).values())[0]["loyalty_points"] >= price * 10)


# ---- loyalty and arguments -------------------------------------------------------------------


@DOMAIN.check(
    "The guest {guest_name} is a gold or platinum loyalty member.",
    "The guest {guest_name} is not a gold or platinum loyalty member.",
)
def is_gold_or_higher_member(ctx: Context, guest_name: str) -> bool:
    return next(iter(member_records(ctx, guest_name).values()))["tier"].lower() in ("gold", "platinum")


@DOMAIN.check(
    "The amount {amount} is greater than zero.",
    "The amount {amount} is zero or negative.",
)
def amount_positive_restr(ctx: Context, amount: float) -> bool:
    return amount > 0


# ---- constraints answered by a tool ----------------------------------------------------------

DOMAIN.describe(
    "internal_valid_room_type",
    "The hotel has rooms of type {room_type}.",
    "The hotel has no rooms of type {room_type}.",
)
DOMAIN.describe(
    "internal_is_loyalty_member",
    "The guest {guest_name} is a loyalty member.",
    "The guest {guest_name} is not a loyalty member.",
)
DOMAIN.describe(
    "internal_valid_room_change_reason",
    "The reason {reason} is an accepted reason for a room change.",
    "The reason {reason} is not an accepted reason for a room change.",
)
DOMAIN.describe(
    "internal_valid_room_service_order_type",
    "Room service offers orders of type {order_type}.",
    "Room service offers no orders of type {order_type}.",
)
DOMAIN.describe(
    "internal_valid_room_service_item",
    "Every item in {order_items} is on the {order_type} menu.",
    "Some item in {order_items} is not on the {order_type} menu.",
)
DOMAIN.describe(
    "internal_valid_room_id",
    "The room {room_id} exists in the hotel.",
    "The room {room_id} does not exist in the hotel.",
)
DOMAIN.describe(
    "internal_valid_room_service_payment_method",
    "Room service accepts the payment method {payment_method}.",
    "Room service does not accept the payment method {payment_method}.",
)
