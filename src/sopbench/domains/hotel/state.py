"""The hotel database layout and the (empty) session state.

``HotelDatabase`` validates a task's initial database once, before an episode. Records may carry
extra fields (the tools ignore them), but every field a tool reads must be present with a usable
type, and dates must have the formats the tools parse; a database that breaks this would make the
tools crash half-way through an episode instead of failing up front.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Timestamp = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")]
Number = int | float


class _Record(BaseModel):
    # strict: a list is not a dict and "80" is not a price; extra fields are tolerated.
    model_config = ConfigDict(strict=True, extra="allow")


class RoomType(_Record):
    # Free nights are only compared, never parsed; one published task lists a night as "2024-08".
    availability: dict[str, list[str]]
    price_per_night: Number


class CheckIn(_Record):
    booking_id: str | None
    check_in_time: str
    identity_document: str


class Booking(_Record):
    guest: str
    room_type: str
    check_in_date: Day
    check_out_date: Day
    booking_time: str
    status: str
    loyalty_points_to_add: Number
    room_change: int
    # Task databases hold {day: orders that day}; bookings created by book_room hold 0.
    room_service: dict[str, int] | int


class OrderLine(_Record):
    item: str
    quantity: Number
    price: Number


class RoomServiceOrder(_Record):
    room: str
    order_time: str
    order_type: str
    order_details: list[OrderLine]
    order_total: Number
    payment: str
    status: str


class LoyaltyMember(_Record):
    name: str
    loyalty_points: Number
    tier: str


class HotelDatabase(_Record):
    rooms: dict[str, RoomType]
    room_checkins: dict[str, CheckIn]
    bookings: dict[str, Booking]
    room_assignment: dict[str, str | None]  # None: booked, but no room was free on every night
    room_service_options: dict[str, dict[str, Number]]
    room_service_payment_method: list[str]
    room_service_orders: dict[str, RoomServiceOrder]
    loyalty_members: dict[str, LoyaltyMember]
    valid_room_change_reasons: list[str]
    interaction_time: Timestamp


def new_session() -> dict[str, Any]:
    """Hotel keeps no session state: nobody logs in and no administrator is authenticated."""
    return {}
