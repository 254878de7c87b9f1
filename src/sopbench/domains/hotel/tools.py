"""Hotel tools, as the lenient system executes them.

Each body runs after the tool's innate check has passed. Reads return ``(True, value)``; every
write returns ``(True, True)``; a failed innate check returns ``False``. Where the published system
raised (a booking that does not exist, a room that has no free night, ...), the body raises the same
exception with the same message at the same point, after the same partial writes, because recorded
tool outputs are that text and recorded databases carry those partial writes.

Published behaviours kept:
- cancel_reservation with no matching booking deletes the LAST booking (and its room assignment)
  without freeing its nights; with no bookings at all it raises UnboundLocalError.
- modify_reservation returns the old nights to the old room but files that room under the NEW room
  type (the same list object then sits under both types); a room filed that way can be assigned as
  a room of the new type.
- modify_reservation, process_guest_checkout and request_room_change raise UnboundLocalError when
  no booking matches (request_room_change: TypeError when bookings exist but none is checked in).
- book_room numbers bookings "BK" + (count + 1), so after a cancellation a new booking can overwrite
  an existing one; place_room_service_order numbers orders "RS" + (count + 1) the same way.
- book_room stores ``room_service: 0`` (not a record), so place_room_service_order for a booking
  made during the episode writes the order and then raises TypeError (and the check
  within_room_service_order_daily_limit raises AttributeError for it).
- book_room and modify_reservation assign ``None`` when no room of the type is free on every night.
- process_guest_checkin without a matching booking files a check-in under room ``None`` and then
  raises TypeError.
- process_guest_checkout removes the guest's first booking whatever its status, keeps its room
  assignment, and does not give its nights back.
- request_room_change with no free room of the new type changes the booking's room type and count
  and then raises UnboundLocalError; a room whose check-in record is missing raises KeyError after
  the new room was taken.
- show_room_change_options is gated by show_available_rooms' innate entry (the mechanism also applies
  its own entry first; both are null in the published tables). The published
  internal_valid_room_service_payment_method was likewise gated by internal_valid_room_id's entry
  (null as well); that one is not reproduced, since a body cannot evaluate another tool's entry
  with foreign arguments.
- register_loyalty_member derives the member id from an RNG seeded with the guest's name (same
  name, same id: registering a name twice overwrites the member).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any, cast

from sopbench.domains import READ, WRITE, Context, parse_time

from . import DOMAIN

DAY_FORMAT = "%Y-%m-%d"
POINTS_PER_NIGHT = {"silver": 10, "gold": 25, "platinum": 50}
NEW_MEMBER_TIER = "silver"


# ---- helpers ---------------------------------------------------------------------------------


def parse_day(text: str) -> datetime:
    return parse_time(text, DAY_FORMAT)


def nights_of_stay(first_night: datetime, count: int) -> list[str]:
    """The ``count`` nights of a stay starting on ``first_night``, as ``YYYY-MM-DD`` strings."""
    return [(first_night + timedelta(days=i)).strftime(DAY_FORMAT) for i in range(count)]


def today(ctx: Context) -> str:
    return cast(str, ctx.db["interaction_time"].split("T")[0])


def unbound(variable: str) -> UnboundLocalError:
    # The published tools read a loop result that was never set; this is the interpreter's text.
    return UnboundLocalError(
        f"cannot access local variable '{variable}' where it is not associated with a value"
    )


def is_booking_for(
    booking: Mapping[str, Any], guest_name: str, check_in_date: str, check_out_date: str
) -> bool:
    return cast(
        bool,
        booking["guest"] == guest_name
        and booking["check_in_date"] == check_in_date
        and booking["check_out_date"] == check_out_date,
    )


def find_booking(
    ctx: Context, guest_name: str, check_in_date: str, check_out_date: str
) -> tuple[str, dict[str, Any]] | None:
    """The first booking of this guest with exactly these dates, with its id."""
    for booking_id, booking in ctx.db["bookings"].items():
        if is_booking_for(booking, guest_name, check_in_date, check_out_date):
            return booking_id, booking
    return None


def stay_points(ctx: Context, guest_name: str, nights: int) -> int:
    """Loyalty points a stay earns: by the tier of the first member with the guest's name."""
    for member in ctx.db.get("loyalty_members", {}).values():
        if member.get("name") == guest_name:
            return POINTS_PER_NIGHT.get(member.get("tier", "").lower(), 0) * nights
    return 0


def next_id(prefix: str, records: Mapping[str, Any]) -> str:
    return prefix + str(len(records) + 1).zfill(3)


def first_free_room(ctx: Context, room_type: str, nights: list[str]) -> tuple[Any, list[str]] | None:
    """The first room of the type (in stored order) free on all ``nights``, with its free nights."""
    for room_id, free_nights in ctx.db["rooms"][room_type]["availability"].items():
        if all(night in free_nights for night in nights):
            return room_id, free_nights
    return None


def take_first_free_room(ctx: Context, room_type: str, nights: list[str]) -> Any:
    """Take ``nights`` in the first room free on all of them; its id, or None when there is none."""
    found = first_free_room(ctx, room_type, nights)
    if found is None:
        return None
    room_id, free_nights = found
    for night in nights:
        free_nights.remove(night)
    return room_id


def give_back_nights(ctx: Context, room_id: str, nights: list[str], from_type: str, file_under: str) -> None:
    """Make ``nights`` free again in the room's list (sorted) and store it under ``file_under``."""
    rooms = ctx.db["rooms"]
    free_nights = rooms[from_type]["availability"].get(room_id, [])
    for night in nights:
        if night not in free_nights:
            free_nights.append(night)
    free_nights.sort()
    rooms[file_under]["availability"][room_id] = free_nights


def priced_order_lines(
    ctx: Context, order_type: str, order_items: list[dict[str, Any]]
) -> Iterator[tuple[Any, Any, Any]]:
    """``(item, quantity, cost)`` per ordered entry, priced from the room-service menu."""
    menu = ctx.db["room_service_options"]
    for entry in order_items:
        item = entry.get("name")
        quantity = entry.get("quantity", 0)
        yield item, quantity, menu[order_type][item] * quantity


def checked_in_booking(ctx: Context, guest_name: str) -> tuple[str, dict[str, Any]] | None:
    for booking_id, booking in ctx.db["bookings"].items():
        if booking["guest"] == guest_name and booking["status"] == "checked-in":
            return booking_id, booking
    return None


# ---- rooms and reasons -----------------------------------------------------------------------


@DOMAIN.tool(
    READ,
    "List every room type with its rooms, the nights each room is still free, and the price per night.",
    returns="Returns the room types mapped to their availability and nightly price.",
)
def show_available_rooms(ctx: Context) -> tuple[bool, Any]:
    return True, ctx.db["rooms"]


@DOMAIN.tool(
    READ,
    "List the reasons for which a checked-in guest may ask to change rooms.",
    returns="Returns the list of accepted room-change reasons.",
)
def show_room_change_options(ctx: Context) -> bool | tuple[bool, Any]:
    # Published: gated by show_available_rooms' innate entry rather than its own.
    if ctx.call("show_available_rooms") is False:
        return False
    return True, ctx.db["valid_room_change_reasons"]


# ---- reservations ----------------------------------------------------------------------------


@DOMAIN.tool(
    WRITE,
    "Reserve a room of the given type for a guest from the check-in date to the check-out date, "
    "paying the given amount; the first room free on every night is assigned.",
    returns="Returns true when the reservation was recorded.",
)
def book_room(
    ctx: Context, guest_name: str, room_type: str, check_in_date: str, check_out_date: str, amount: float
) -> tuple[bool, Any]:
    first_night = parse_day(check_in_date)
    nights = (parse_day(check_out_date) - first_night).days
    points = stay_points(ctx, guest_name, nights)
    bookings = ctx.db["bookings"]
    booking_id = next_id("BK", bookings)
    bookings[booking_id] = {
        "guest": guest_name,
        "room_type": room_type,
        "check_in_date": check_in_date,
        "check_out_date": check_out_date,
        "booking_time": ctx.db["interaction_time"],
        "status": "confirmed",
        "loyalty_points_to_add": points,
        "room_change": 0,
        "room_service": 0,  # published: a count, not the {day: count} record place_room_service_order needs
    }
    ctx.db["room_assignment"][booking_id] = take_first_free_room(
        ctx, room_type, nights_of_stay(first_night, nights)
    )
    return True, True


@DOMAIN.tool(
    READ,
    "Look up a guest's reservation with exactly the given check-in and check-out dates.",
    returns="Returns the reservation's details, or an empty object when there is none.",
)
def find_booking_info(
    ctx: Context, guest_name: str, check_in_date: str, check_out_date: str
) -> tuple[bool, Any]:
    found = find_booking(ctx, guest_name, check_in_date, check_out_date)
    return True, (found[1] if found else {})


@DOMAIN.tool(
    WRITE,
    "Cancel the guest's reservation for the given dates and free its room for those nights.",
    returns="Returns true when the reservation was cancelled.",
)
def cancel_reservation(
    ctx: Context, guest_name: str, check_in_date: str, check_out_date: str
) -> tuple[bool, Any]:
    bookings = ctx.db["bookings"]
    found = find_booking(ctx, guest_name, check_in_date, check_out_date)
    if found is None:
        if not bookings:
            raise unbound("booking_id")
        booking_id = next(reversed(bookings))  # published: the loop variable's last value
    else:
        booking_id, booking = found
        room_type = booking["room_type"]
        first_night = parse_day(booking["check_in_date"])
        nights = nights_of_stay(first_night, (parse_day(booking["check_out_date"]) - first_night).days)
        room_id = ctx.db["room_assignment"].get(booking_id)
        if room_id:
            give_back_nights(ctx, room_id, nights, room_type, room_type)
    del bookings[booking_id]
    ctx.db["room_assignment"].pop(booking_id, None)
    return True, True


@DOMAIN.tool(
    WRITE,
    "Move the guest's reservation from its old dates to new dates and a (possibly different) room "
    "type, paying the given amount for any price difference.",
    returns="Returns true when the reservation was changed.",
)
def modify_reservation(
    ctx: Context,
    guest_name: str,
    old_check_in_date: str,
    old_check_out_date: str,
    check_in_date: str,
    check_out_date: str,
    room_type: str,
    amount: float,
) -> tuple[bool, Any]:
    found = find_booking(ctx, guest_name, old_check_in_date, old_check_out_date)
    assignment = ctx.db["room_assignment"]
    if found is None:
        raise unbound("old_booking_id")
    booking_id, booking = found
    old_room = assignment.get(booking_id)
    old_first_night = parse_day(booking["check_in_date"])
    old_nights_count = (parse_day(booking["check_out_date"]) - old_first_night).days
    old_type = booking["room_type"]
    old_nights = nights_of_stay(old_first_night, old_nights_count)
    if old_room:
        give_back_nights(ctx, old_room, old_nights, old_type, file_under=room_type)  # published: new type
    first_night = parse_day(check_in_date)
    nights = (parse_day(check_out_date) - first_night).days
    points = stay_points(ctx, guest_name, nights)
    booking["room_type"] = room_type
    booking["check_in_date"] = check_in_date
    booking["check_out_date"] = check_out_date
    booking["booking_time"] = ctx.db["interaction_time"]
    booking["status"] = "confirmed"
    booking["loyalty_points_to_add"] = points
    assignment[booking_id] = take_first_free_room(ctx, room_type, nights_of_stay(first_night, nights))
    return True, True


# ---- the stay --------------------------------------------------------------------------------


@DOMAIN.tool(
    WRITE,
    "Check a guest in for the reservation with the given dates, recording the identity document "
    "shown (its type and the holder's birthday).",
    returns="Returns the id of the room the guest is checked into.",
)
def process_guest_checkin(
    ctx: Context, guest_name: str, check_in_date: str, check_out_date: str, identification: dict[str, Any]
) -> tuple[bool, Any]:
    found = find_booking(ctx, guest_name, check_in_date, check_out_date)
    booking_id, booking = found if found else (None, None)
    room_id = ctx.db["room_assignment"].get(booking_id)
    ctx.db["room_checkins"][room_id] = {
        "booking_id": booking_id,
        "check_in_time": ctx.db["interaction_time"],
        "identity_document": identification.get("type", ""),
    }
    if booking is None:
        raise TypeError("'NoneType' object does not support item assignment")
    booking["status"] = "checked-in"
    return True, room_id


@DOMAIN.tool(
    WRITE,
    "Check a guest out: close their stay, clear the room's check-in record and credit the stay's "
    "loyalty points to their membership.",
    returns="Returns true when the guest was checked out.",
)
def process_guest_checkout(ctx: Context, guest_name: str, key_returned: bool) -> tuple[bool, Any]:
    bookings = ctx.db["bookings"]
    # The guest's first booking in stored order, whatever its status (published).
    booking_id = next((bid for bid, booking in bookings.items() if booking["guest"] == guest_name), None)
    if booking_id is None:
        raise unbound("booking_id_to_remove")
    points = bookings[booking_id].get("loyalty_points_to_add", 0)
    del bookings[booking_id]
    checkins = ctx.db["room_checkins"]
    for room_id, checkin in list(checkins.items()):
        if checkin.get("booking_id") == booking_id:
            del checkins[room_id]
            break
    for member in ctx.db.get("loyalty_members", {}).values():
        if member.get("name") == guest_name:
            member["loyalty_points"] += points
            break
    return True, True


@DOMAIN.tool(
    WRITE,
    "Move a checked-in guest to a free room of another type for the rest of the stay, for the given "
    "reason, paying the given amount for any price difference.",
    returns="Returns true when the guest was moved.",
)
def request_room_change(
    ctx: Context, guest_name: str, amount: float, reason: str, room_type: str
) -> tuple[bool, Any]:
    bookings = ctx.db["bookings"]
    assignment = ctx.db["room_assignment"]
    found = checked_in_booking(ctx, guest_name)
    if found is None:
        if not bookings:
            raise unbound("booking_id")
        raise TypeError("'NoneType' object is not subscriptable")
    booking_id, booking = found
    old_room = assignment.get(booking_id)
    old_type = booking["room_type"]
    check_out_date = booking["check_out_date"]
    change_day = parse_day(today(ctx))
    check_out = parse_day(check_out_date)
    # The old room is given back from tomorrow on; the new room is taken from today on.
    given_back = nights_of_stay(change_day + timedelta(days=1), (check_out - change_day).days - 1)
    freed = None
    for night in given_back:
        freed = ctx.db["rooms"][old_type]["availability"].setdefault(old_room, [])
        if night not in freed:
            freed.append(night)
    if freed:
        freed.sort()
    needed = nights_of_stay(change_day, (check_out - change_day).days)
    found_room = first_free_room(ctx, room_type, needed)
    if found_room is not None:
        new_room, free_nights = found_room
        for night in needed:
            free_nights.remove(night)
    booking["room_type"] = room_type
    booking["room_change"] += 1
    if found_room is None:
        raise unbound("new_room_id")  # published: after the booking was already updated
    assignment[booking_id] = new_room
    checkins = ctx.db["room_checkins"]
    checkins[new_room] = checkins.pop(old_room)
    return True, True


@DOMAIN.tool(
    WRITE,
    "Place a room-service order for a guest's room: items of one service type with quantities, paid "
    "by the given method (the amount is needed unless paying with loyalty points).",
    returns="Returns true when the order was placed.",
)
def place_room_service_order(
    ctx: Context,
    guest_name: str,
    room_id: str,
    order_type: str,
    order_items: list[Any],
    payment_method: str,
    amount: float | None = None,
) -> tuple[bool, Any]:
    total = 0
    details = []
    for item, quantity, cost in priced_order_lines(ctx, order_type, order_items):
        total += cost
        details.append({"item": item, "quantity": quantity, "price": cost})
    orders = ctx.db["room_service_orders"]
    orders[next_id("RS", orders)] = {
        "room": room_id,
        "order_time": ctx.db["interaction_time"],
        "order_type": order_type,
        "order_details": details,
        "order_total": total,
        "payment": payment_method,
        "status": "in-progress",
    }
    bookings = ctx.db["bookings"]
    for booking_id, assigned_room in ctx.db["room_assignment"].items():
        if assigned_room == room_id:
            if booking_id in bookings:
                day = today(ctx)
                served = bookings[booking_id]["room_service"]  # 0 for bookings made by book_room: raises
                if day not in served:
                    served[day] = 0
                served[day] += 1
            break
    return True, True


@DOMAIN.tool(
    WRITE,
    "Enrol a guest in the loyalty programme as a new silver member with no points.",
    returns="Returns true when the guest was enrolled.",
)
def register_loyalty_member(ctx: Context, guest_name: str) -> tuple[bool, Any]:
    rng = random.Random(guest_name)  # same draws as the published random.seed(guest_name)
    digits = str(rng.randint(1000, 9999))
    letter = chr(rng.randint(65, 90))
    ctx.db["loyalty_members"]["HTL" + digits + letter] = {
        "name": guest_name,
        "loyalty_points": 0,
        "tier": NEW_MEMBER_TIER,
    }
    return True, True


# ---- internal look-ups -----------------------------------------------------------------------


@DOMAIN.tool(
    READ,
    "Read the check-in records of occupied rooms.",
    returns="Returns room ids mapped to their booking id, check-in time and identity document type.",
)
def internal_get_room_checkin_details(ctx: Context) -> tuple[bool, Any]:
    return True, ctx.db["room_checkins"]


@DOMAIN.tool(
    READ,
    "Read every reservation the hotel holds.",
    returns="Returns booking ids mapped to the full reservation records.",
)
def internal_get_booking_details(ctx: Context) -> tuple[bool, Any]:
    return True, ctx.db["bookings"]


@DOMAIN.tool(
    READ,
    "Read a loyalty member's record by the member's name.",
    returns="Returns the member id mapped to the member's name, points and tier.",
)
def internal_get_loyalty_member_info(ctx: Context, guest_name: str) -> tuple[bool, Any]:
    for member_id, member in ctx.db["loyalty_members"].items():
        if member.get("name") == guest_name:
            return True, {member_id: member}
    return True, {}


@DOMAIN.tool(
    READ,
    "Read the date and time of the current interaction.",
    returns="Returns the timestamp as YYYY-MM-DDTHH:MM:SS.",
)
def internal_get_interaction_time(ctx: Context) -> tuple[bool, Any]:
    return True, ctx.db["interaction_time"]


@DOMAIN.tool(
    READ,
    "Read every room-service order placed so far.",
    returns="Returns order ids mapped to the order records.",
)
def internal_get_room_service_order_details(ctx: Context) -> tuple[bool, Any]:
    return True, ctx.db["room_service_orders"]


@DOMAIN.tool(
    READ,
    "Read which room is assigned to each reservation.",
    returns="Returns booking ids mapped to room ids.",
)
def internal_get_room_assignment(ctx: Context) -> tuple[bool, Any]:
    return True, ctx.db["room_assignment"]


@DOMAIN.tool(
    READ,
    "Work out what a room-service order costs from the menu prices of its items and quantities.",
    returns="Returns the order's total price.",
)
def internal_compute_room_service_order_fee(
    ctx: Context, order_type: str, order_items: list[Any]
) -> tuple[bool, Any]:
    total = 0
    for _item, _quantity, cost in priced_order_lines(ctx, order_type, order_items):
        total += cost
    return True, total


@DOMAIN.tool(
    READ,
    "Tell whether the hotel has a room type of this name.",
    returns="Returns true or false.",
)
def internal_valid_room_type(ctx: Context, room_type: str) -> tuple[bool, Any]:
    return True, room_type in ctx.db["rooms"]


@DOMAIN.tool(
    READ,
    "Tell whether a guest of this name is a loyalty member.",
    returns="Returns true or false.",
)
def internal_is_loyalty_member(ctx: Context, guest_name: str) -> tuple[bool, Any]:
    members = ctx.db.get("loyalty_members", {}).values()
    return True, any(member.get("name") == guest_name for member in members)


@DOMAIN.tool(
    READ,
    "Tell whether a reason is one the hotel accepts for a room change.",
    returns="Returns true or false.",
)
def internal_valid_room_change_reason(ctx: Context, reason: str) -> tuple[bool, Any]:
    return True, reason in ctx.call("show_room_change_options")[1]


@DOMAIN.tool(
    READ,
    "Tell whether room service offers this type of order.",
    returns="Returns true or false.",
)
def internal_valid_room_service_order_type(ctx: Context, order_type: str) -> tuple[bool, Any]:
    return True, order_type in ctx.db["room_service_options"]


@DOMAIN.tool(
    READ,
    "Tell whether every item of an order is on the menu of the order's service type.",
    returns="Returns true or false.",
)
def internal_valid_room_service_item(
    ctx: Context, order_type: str, order_items: list[Any]
) -> tuple[bool, Any]:
    menu = ctx.db["room_service_options"][order_type]
    return True, all(entry.get("name") in menu for entry in order_items)


@DOMAIN.tool(
    READ,
    "Tell whether a room id belongs to any room type of the hotel.",
    returns="Returns true or false.",
)
def internal_valid_room_id(ctx: Context, room_id: str) -> tuple[bool, Any]:
    rooms = ctx.db["rooms"].values()
    return True, any(room_id in room_type.get("availability", {}) for room_type in rooms)


@DOMAIN.tool(
    READ,
    "Tell whether room service accepts this payment method.",
    returns="Returns true or false.",
)
def internal_valid_room_service_payment_method(ctx: Context, payment_method: str) -> tuple[bool, Any]:
    return True, payment_method in ctx.db["room_service_payment_method"]
