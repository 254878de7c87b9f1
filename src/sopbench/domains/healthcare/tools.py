"""The healthcare tools, as the lenient system runs them.

Each function runs after the tool's innate check (``sop.json``) has passed and returns what the
published system returns: ``(True, value)`` for a read, ``True`` for a write, the registered
``failure`` value when the innate check fails. Exceptions (a missing user is a ``KeyError``) arise
where the published system raised them, since agents saw their text.

Published behaviours kept (recorded trajectories were produced with them; replay must reproduce them):
- ``submit_claim`` dates a new claim with the full interaction timestamp ("2025-01-15T12:56:39"), which ``within_appeal_period`` cannot parse: appealing such a claim under that constraint raises ``ValueError``.
- ``reactivate_policy`` sets ``enrollment_date`` to the full timestamp and ``deactivate_policy`` sets it to "": ``within_enrollment_period`` raises ``ValueError`` on both.
- ``deactivate_policy`` deletes every claim of the policy; ``reactivate_policy`` starts with no authorised providers.
- New ids count the existing entries: ``CLM-<claims + 1>`` (unpadded, unlike the stored "CLM-001") and ``APT-<the user's appointments + 1>`` (not unique across users of one provider).
- ``amount_positive_restr`` (the innate check of amounts) accepts 0, and ``reactivate_policy`` checks only ``coverage_amount``, never ``annual_income``.
- ``get_policy_details`` has no innate check and answers ``(True, {})`` for an unknown user; ``update_policy``, ``get_claim_history``, ``add_authorized_provider``, ``deactivate_policy``, ``reactivate_policy`` and ``schedule_appointment`` raise ``KeyError: '<username>'``.
- ``internal_check_claim_exists`` fails with a bare ``False`` (not a pair) for an unknown user, so ``get_claim_details``/``appeal_claim`` then fail with their own failure values.
- ``appeal_claim`` puts any claim back to "pending" whatever its status; ``schedule_appointment`` stores the date text as given (the lenient system never checks it).
- ``login_user`` compares the identification with ``==``: an identification object never matches the stored string.
"""

from __future__ import annotations

from typing import Any, cast

from sopbench.domains import READ, WRITE, Context

from . import DOMAIN

INACTIVE = "Inactive"


def _account(ctx: Context, username: str) -> dict[str, Any]:
    return cast(dict[str, Any], ctx.db["accounts"][username])


def _claims(ctx: Context, username: str) -> list[dict[str, Any]]:
    return cast(list[dict[str, Any]], _account(ctx, username)["policy"]["claims"])


def _interaction_time(ctx: Context) -> str:
    return cast(str, ctx.db["interaction_time"])


# ---- session ---------------------------------------------------------------------------------


@DOMAIN.tool(
    READ,
    "Log a policy holder in by checking their username against their identification string.",
    returns="Returns True when the identification matches, False otherwise.",
)
def login_user(ctx: Context, username: str, identification: str) -> bool:
    return cast(bool, _account(ctx, username)["identification"] == identification)


@DOMAIN.tool(READ, "Log the policy holder out of the session.", returns="Returns True.")
def logout_user(ctx: Context, username: str) -> bool:
    return True


# ---- policy ----------------------------------------------------------------------------------


@DOMAIN.tool(
    WRITE,
    "Change a policy's type, coverage amount and the annual income declared for it.",
    returns="Returns True once the policy is updated.",
)
def update_policy(
    ctx: Context, username: str, policy_type: str, coverage_amount: float, annual_income: float
) -> bool:
    details = _account(ctx, username)["policy"]["details"]
    details["type"] = policy_type
    details["coverage_amount"] = coverage_amount
    details["annual_income"] = annual_income
    return True


@DOMAIN.tool(
    READ,
    "Look up a policy: its type, coverage amount, enrollment date, authorised providers and declared income.",
    returns="Returns the policy details.",
    failure=(False, {}),
)
def get_policy_details(ctx: Context, username: str) -> tuple[bool, dict[str, Any]]:
    # No innate check here: an unknown user reads as an empty policy rather than an error.
    return True, ctx.db["accounts"].get(username, {}).get("policy", {}).get("details", {})


@DOMAIN.tool(
    WRITE,
    "Add a provider to the providers a policy authorises.",
    returns="Returns True once the provider is added.",
)
def add_authorized_provider(ctx: Context, username: str, provider_id: str) -> bool:
    _account(ctx, username)["policy"]["details"]["authorized_providers"].append(provider_id)
    return True


@DOMAIN.tool(
    WRITE,
    "Deactivate a policy: it becomes inactive with no coverage, income or providers, and its claims are removed.",
    returns="Returns True once the policy is deactivated.",
)
def deactivate_policy(ctx: Context, username: str) -> bool:
    policy = _account(ctx, username)["policy"]
    policy["details"] = {
        "type": INACTIVE,
        "coverage_amount": 0,
        "enrollment_date": "",
        "authorized_providers": [],
        "annual_income": 0,
    }
    policy["claims"] = []
    return True


@DOMAIN.tool(
    WRITE,
    "Reactivate an inactive policy with a new type, coverage amount and declared income, enrolled as of now.",
    returns="Returns True once the policy is active again.",
)
def reactivate_policy(
    ctx: Context, username: str, policy_type: str, coverage_amount: float, annual_income: float
) -> bool:
    _account(ctx, username)["policy"]["details"] = {
        "type": policy_type,
        "coverage_amount": coverage_amount,
        "enrollment_date": _interaction_time(ctx),
        "authorized_providers": [],
        "annual_income": annual_income,
    }
    return True


# ---- claims ----------------------------------------------------------------------------------


@DOMAIN.tool(
    WRITE,
    "File a new claim for an amount spent on a treatment from a provider; it starts as pending.",
    returns="Returns True once the claim is filed.",
)
def submit_claim(ctx: Context, username: str, amount: float, description: str, provider_id: str) -> bool:
    claims = _account(ctx, username)["policy"]["claims"]
    claims.append(
        {
            "claim_id": f"CLM-{len(claims) + 1}",
            "amount": amount,
            "status": "pending",
            "description": description,
            "provider_id": provider_id,
            "claim_date": _interaction_time(ctx),
        }
    )
    return True


@DOMAIN.tool(
    READ,
    "Look up one claim of a policy holder by its claim id.",
    returns="Returns the claim: id, amount, status, description and date.",
    failure=(False, {}),
)
def get_claim_details(ctx: Context, username: str, claim_id: str) -> tuple[bool, dict[str, Any]] | None:
    for claim in _claims(ctx, username):
        if claim["claim_id"] == claim_id:
            return True, claim
    return None  # unreachable after the innate check, as in the published code


@DOMAIN.tool(
    READ,
    "List every claim filed under a policy holder's policy.",
    returns="Returns the list of claims.",
    failure=(False, []),
)
def get_claim_history(ctx: Context, username: str) -> tuple[bool, list[dict[str, Any]]]:
    return True, _claims(ctx, username)


@DOMAIN.tool(
    WRITE,
    "Appeal the decision on a claim, which puts the claim back under review as pending.",
    returns="Returns True once the claim is pending again.",
)
def appeal_claim(ctx: Context, username: str, claim_id: str) -> bool:
    for claim in _claims(ctx, username):
        if claim["claim_id"] == claim_id:
            claim["status"] = "pending"
            return True
    return False


# ---- providers -------------------------------------------------------------------------------


@DOMAIN.tool(
    READ,
    "Look up a healthcare provider by its provider id.",
    returns="Returns the provider: name, location, service type, availability and appointments.",
    failure=(False, {}),
)
def get_provider_details(ctx: Context, provider_id: str) -> tuple[bool, dict[str, Any]]:
    return True, ctx.db["providers"][provider_id]


@DOMAIN.tool(
    WRITE,
    "Book an appointment for a policy holder with a provider on a given date.",
    returns="Returns True once the appointment is booked.",
)
def schedule_appointment(ctx: Context, username: str, provider_id: str, appointment_date: str) -> bool:
    appointments = _account(ctx, username)["scheduled_appointments"]
    appointment_id = f"APT-{len(appointments) + 1}"
    appointments.append(
        {"appointment_id": appointment_id, "provider_id": provider_id, "appointment_date": appointment_date}
    )
    ctx.db["providers"][provider_id]["appointments"].append(
        {"appointment_id": appointment_id, "username": username, "appointment_date": appointment_date}
    )
    return True


# ---- internal helpers ------------------------------------------------------------------------


@DOMAIN.tool(READ, "Read the whole database.", returns="Returns the database.")
def internal_get_database(ctx: Context) -> tuple[bool, dict[str, Any]]:
    return True, ctx.db


@DOMAIN.tool(
    READ,
    "Check whether an account with this username exists.",
    returns="Returns True if it exists, False otherwise.",
)
def internal_check_username_exist(ctx: Context, username: str) -> tuple[bool, bool]:
    return True, username in ctx.db["accounts"]


@DOMAIN.tool(
    READ,
    "Check whether a provider with this provider id exists.",
    returns="Returns True if it exists, False otherwise.",
)
def internal_check_provider_exists(ctx: Context, provider_id: str) -> tuple[bool, bool]:
    return True, provider_id in ctx.db["providers"]


@DOMAIN.tool(
    READ,
    "Check whether a policy holder has a claim with this claim id.",
    returns="Returns True if the claim exists, False otherwise.",
)
def internal_check_claim_exists(ctx: Context, username: str, claim_id: str) -> tuple[bool, bool]:
    return True, any(claim["claim_id"] == claim_id for claim in _claims(ctx, username))


@DOMAIN.tool(
    READ,
    "Get the current date and time of this conversation, used for every deadline.",
    returns="Returns the time as an ISO string (YYYY-MM-DDTHH:MM:SS).",
)
def internal_get_interaction_time(ctx: Context) -> tuple[bool, str]:
    return True, _interaction_time(ctx)
