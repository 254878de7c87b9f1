"""The DMV database layout and the oracle's session state.

The model is used once per task to check that its ``initial_database`` has the shape the tools rely
on. Every field a tool or check reads is required with its type; dates and times must parse in the
formats the tools use, because a malformed one would only surface later as an exception in the
middle of an episode. Unknown extra fields are tolerated (no tool reads them).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict

DATE_FORMAT = "%Y-%m-%d"
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"


def _parses_as(fmt: str, what: str) -> Callable[[str], str]:
    def check(text: str) -> str:
        try:
            datetime.strptime(text, fmt)
        except ValueError as exc:
            raise ValueError(f"{what} {text!r} is not in the form {fmt}") from exc
        return text

    return check


Date = Annotated[str, AfterValidator(_parses_as(DATE_FORMAT, "date"))]
Timestamp = Annotated[str, AfterValidator(_parses_as(TIME_FORMAT, "timestamp"))]


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class Vehicle(_Record):
    model: str
    vin: str
    reg_date: Date
    address: str
    insurance_status: str


class DriverLicense(_Record):
    dl_number: str
    legal_name: str
    exp_date: Date
    address: str


class TestRecord(_Record):
    status: str
    scheduled_time: Timestamp | None
    attempts: int


class Tests(_Record):
    # drive_test_ready reads both entries, so both must be present.
    knowledge: TestRecord
    drive: TestRecord


class Account(_Record):
    identification: str | dict[str, Any]
    admin_password: str
    birthday: Date
    address: str
    vehicles: dict[str, Vehicle]
    driver_license: DriverLicense | None
    tests: Tests


class DMVDatabase(_Record):
    accounts: dict[str, Account]
    test_slots: dict[str, list[Timestamp]]
    interaction_time: Timestamp


def new_session() -> dict[str, Any]:
    """The strict oracle's session: several users may be logged in at once; one global admin flag."""
    return {"logged_in_users": set(), "admin_authenticated": False}
