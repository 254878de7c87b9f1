"""The healthcare database layout and the session the strict oracle keeps for it.

The model validates a task's ``initial_database`` once, before an episode starts. It insists on the
shape the tools and checks rely on (records where records are expected, numbers that are numbers,
lists that are lists) and lets records carry extra fields, since generated tasks may add some. The
database itself stays plain JSON data: the model is only a gate.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr

# Amounts and incomes are ints in every published task; episodes may write floats (a model's 150.0).
Number = StrictInt | StrictFloat

# "Now" for every date check; the checks parse it with exactly this layout.
INTERACTION_TIME_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$"


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class Claim(_Record):
    claim_id: StrictStr  # "CLM-<n>"
    amount: Number
    status: StrictStr  # "pending", "approved" or "denied"
    description: StrictStr
    claim_date: StrictStr  # "YYYY-MM-DD" in task data; a full timestamp once filed in an episode
    provider_id: StrictStr | None = None  # absent from the published claims, written by submit_claim


class PolicyDetails(_Record):
    type: StrictStr  # Health, Dental, Pharmacy, Vision, or "Inactive"
    coverage_amount: Number
    # Absent from most inactive policies; "" after a deactivation.
    enrollment_date: StrictStr | None = None
    authorized_providers: list[StrictStr]
    annual_income: Number


class Policy(_Record):
    details: PolicyDetails
    claims: list[Claim]


class Account(_Record):
    # The login schema also admits an identification object (a driver's licence).
    identification: StrictStr | dict[str, Any]
    policy_number: StrictStr
    policy: Policy
    scheduled_appointments: list[dict[str, Any]]


class Provider(_Record):
    name: StrictStr
    location: StrictStr
    service_type: StrictStr  # compared with the policy type
    availability: StrictStr  # compared case-insensitively with "available"
    appointments: list[dict[str, Any]]


class HealthcareDatabase(_Record):
    """Accounts keyed by username, providers keyed by provider id, and the interaction time."""

    accounts: dict[str, Account]
    providers: dict[str, Provider]
    interaction_time: StrictStr = Field(pattern=INTERACTION_TIME_PATTERN)


def new_session() -> dict[str, Any]:
    """The oracle's session: at most one logged-in user (None: nobody)."""
    return {"user": None}
