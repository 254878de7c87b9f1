"""The library database layout and the session the strict oracle keeps.

The model is used once per task to reject a malformed ``initial_database`` with a readable error
before any tool runs; the tools themselves work on the plain JSON dict. Types are strict (a balance
given as the string ``"10"`` or a count given as ``true`` is an error) and unknown fields are refused,
because the tools read these exact fields and a typo would otherwise surface as a ``KeyError`` in the
middle of an episode. Dates stay strings: the tools parse them lazily, and the published code raises
its own error for an unparsable one, which replay must reproduce.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# A reservation or an open room: human date ("October 10th, 2024") -> time slots ("12:00").
DateSlots = dict[str, list[str]]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class LibraryAccount(_Strict):
    password: str
    admin: bool
    balance: int | float
    membership: str | None = Field(description="expiry date of the membership, null for non-members")
    borrowed: dict[str, str] = Field(description="book id -> the date the book is due back")
    late_book_count: int = Field(description="overdue returns whose late fee is still counted")
    room_reservation: dict[str, DateSlots] = Field(description="room id -> date -> reserved slots")


class LibraryBook(_Strict):
    count: int = Field(description="copies on the shelf")
    restricted: bool = Field(description="restricted books need a valid membership to borrow")


class LibraryDatabase(_Strict):
    interaction_date: str = Field(description="today, for every date computation")
    accounts: dict[str, LibraryAccount]
    books: dict[str, LibraryBook]
    book_title_to_id: dict[str, str]
    late_fee_per_book: int | float
    membership_monthly_fee: int | float
    loan_period: int = Field(description="days a book may be kept")
    rooms: dict[str, DateSlots] = Field(description="room id -> date -> slots still free")


def new_session() -> dict[str, Any]:
    """The oracle's session: the one user who is logged in (``None``: nobody)."""
    return {"user": None}
