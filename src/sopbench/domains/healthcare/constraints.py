"""Truth of every healthcare constraint, and its wording.

Checks read the database through the lenient tools (``ctx.call``), as the published state tracker
did, so they raise the same exceptions in the same order when a prerequisite does not hold (e.g.
``KeyError: 'status'`` when a claim is missing). That is why the SOP tables guard them with existence
checks in chains. Arithmetic and comparisons are the published ones: ``>= 0`` for amounts here,
``<`` for the claim limit, ``<=`` for coverage, income and both periods.

Published behaviours kept: ``provider_available`` compares the availability text, lower-cased, with
"available", so the many providers stored as "Avaliable" (sic) count as unavailable; the periods
parse the stored dates as "YYYY-MM-DD" only, so a full timestamp or "" raises ``ValueError``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from sopbench.domains import Context, parse_time

from . import DOMAIN

VALID_POLICY_TYPES = {"Health", "Dental", "Pharmacy", "Vision"}
STORED_DATE = "%Y-%m-%d"
INTERACTION_TIME = "%Y-%m-%dT%H:%M:%S"
# The layouts an appointment date may be given in, tried in this order.
APPOINTMENT_DATE_LAYOUTS = (
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%d",
)


def _read(ctx: Context, tool: str, **arguments: Any) -> Any:
    """The value of a read tool's ``(ok, value)`` answer, unpacked as the published checks did.

    A failed read still yields its placeholder value (``{}``), so the caller's next lookup raises.
    """
    _, value = ctx.call(tool, **arguments)
    return value


def _now(ctx: Context) -> datetime:
    return parse_time(_read(ctx, "internal_get_interaction_time"), INTERACTION_TIME)


# ---- session ---------------------------------------------------------------------------------


@DOMAIN.check(
    "The user {username} has logged in with the right identification.",
    "The user {username} has not logged in with the right identification.",
)
def logged_in_user(ctx: Context, username: str) -> bool:
    return ctx.session.get("user") == username


@DOMAIN.session_effect("login_user")
def _remember_login(session: dict[str, Any], username: str, **_: Any) -> None:
    session["user"] = username


@DOMAIN.session_effect("logout_user")
def _forget_login(session: dict[str, Any], **_: Any) -> None:
    session["user"] = None


# ---- arguments only --------------------------------------------------------------------------


@DOMAIN.check("The amount {amount} is zero or more.", "The amount {amount} is below zero.")
def amount_positive_restr(ctx: Context, amount: float) -> bool:
    return amount >= 0


@DOMAIN.check(
    "The claimed amount {amount} is below the per-claim limit of {maximum_claimable_amount}.",
    "The claimed amount {amount} reaches or exceeds the per-claim limit of {maximum_claimable_amount}.",
)
def claim_within_limits(ctx: Context, amount: float) -> bool:
    return cast(bool, amount < ctx.params["maximum_claimable_amount"])


@DOMAIN.check(
    "The requested coverage {coverage_amount} is at most {max_coverage_percentage}% of the annual income "
    "{annual_income}.",
    "The requested coverage {coverage_amount} is more than {max_coverage_percentage}% of the annual income "
    "{annual_income}.",
)
def income_proof_enough(ctx: Context, annual_income: float, coverage_amount: float) -> bool:
    return cast(bool, coverage_amount <= (annual_income * ctx.params["max_coverage_percentage"] / 100))


@DOMAIN.check(
    "The policy type {policy_type} is one of Health, Dental, Pharmacy or Vision.",
    "The policy type {policy_type} is not one of Health, Dental, Pharmacy or Vision.",
)
def policy_type_valid(ctx: Context, policy_type: str) -> bool:
    return policy_type in VALID_POLICY_TYPES


@DOMAIN.check(
    "The appointment date {appointment_date} is a readable date and not before today.",
    "The appointment date {appointment_date} is unreadable or before today.",
)
def appointment_date_valid(ctx: Context, appointment_date: str) -> bool:
    now = _now(ctx)
    for layout in APPOINTMENT_DATE_LAYOUTS:
        try:
            when = parse_time(appointment_date, layout)
        except ValueError:  # only a layout mismatch moves on; a non-text date raises TypeError
            continue
        # The day counts, not the hour: an appointment later today is compared at midnight.
        return when.replace(hour=0, minute=0, second=0, microsecond=0) >= now
    return False


# ---- policy ----------------------------------------------------------------------------------


@DOMAIN.check(
    "The policy of {username} is active.",
    "The policy of {username} is not active.",
)
def policy_active(ctx: Context, username: str) -> bool:
    return cast(bool, _read(ctx, "get_policy_details", username=username)["type"] != "Inactive")


@DOMAIN.check(
    "The policy of {username} is inactive.",
    "The policy of {username} is not inactive.",
)
def policy_inactive(ctx: Context, username: str) -> bool:
    return cast(bool, _read(ctx, "get_policy_details", username=username)["type"] == "Inactive")


@DOMAIN.check(
    "The policy of {username} was enrolled at most {enrollment_period} days ago.",
    "The policy of {username} was enrolled more than {enrollment_period} days ago.",
)
def within_enrollment_period(ctx: Context, username: str) -> bool:
    enrolled = parse_time(_read(ctx, "get_policy_details", username=username)["enrollment_date"], STORED_DATE)
    return (_now(ctx) - enrolled) <= timedelta(days=ctx.params["enrollment_period"])


@DOMAIN.check(
    "The provider {provider_id} is not yet among the providers authorised by the policy of {username}.",
    "The provider {provider_id} is already among the providers authorised by the policy of {username}.",
)
def provider_not_already_authorized(ctx: Context, username: str, provider_id: str) -> bool:
    return provider_id not in _read(ctx, "get_policy_details", username=username)["authorized_providers"]


@DOMAIN.check(
    "The provider {provider_id} is among the providers authorised by the policy of {username}.",
    "The provider {provider_id} is not among the providers authorised by the policy of {username}.",
)
def provider_authorized(ctx: Context, username: str, provider_id: str) -> bool:
    return provider_id in _read(ctx, "get_policy_details", username=username)["authorized_providers"]


@DOMAIN.check(
    "The service type of provider {provider_id} matches the type of the policy of {username}.",
    "The service type of provider {provider_id} differs from the type of the policy of {username}.",
)
def provider_covers_policy(ctx: Context, username: str, provider_id: str) -> bool:
    # The provider is read first: with a missing provider the lookup fails before the policy is read.
    service_type = _read(ctx, "get_provider_details", provider_id=provider_id)["service_type"]
    return cast(bool, service_type == _read(ctx, "get_policy_details", username=username)["type"])


@DOMAIN.check(
    "The provider {provider_id} is available for appointments.",
    "The provider {provider_id} is not available for appointments.",
)
def provider_available(ctx: Context, provider_id: str) -> bool:
    return cast(
        bool,
        _read(ctx, "get_provider_details", provider_id=provider_id)["availability"].lower() == "available",
    )


# ---- claims ----------------------------------------------------------------------------------


@DOMAIN.check(
    "The user {username} has no claim still pending.",
    "The user {username} has at least one claim still pending.",
)
def no_pending_claims(ctx: Context, username: str) -> bool:
    return all(claim["status"] != "pending" for claim in _read(ctx, "get_claim_history", username=username))


@DOMAIN.check(
    "The pending and approved claims of {username} plus the amount {amount} stay within the policy's "
    "coverage amount.",
    "The pending and approved claims of {username} plus the amount {amount} exceed the policy's "
    "coverage amount.",
)
def claim_within_coverage_amount(ctx: Context, username: str, amount: float) -> bool:
    # History before details, as published: the order decides which lookup raises first.
    history = _read(ctx, "get_claim_history", username=username)
    coverage = _read(ctx, "get_policy_details", username=username)["coverage_amount"]
    claimed = sum(claim["amount"] for claim in history if claim["status"] in ["pending", "approved"])
    return cast(bool, (claimed + amount) <= coverage)


@DOMAIN.check(
    "The claim {claim_id} of {username} has been denied.",
    "The claim {claim_id} of {username} has not been denied.",
)
def claim_status_denied(ctx: Context, username: str, claim_id: str) -> bool:
    return cast(
        bool, _read(ctx, "get_claim_details", username=username, claim_id=claim_id)["status"] == "denied"
    )


@DOMAIN.check(
    "The claim {claim_id} of {username} was filed at most {appeal_period} days ago.",
    "The claim {claim_id} of {username} was filed more than {appeal_period} days ago.",
)
def within_appeal_period(ctx: Context, username: str, claim_id: str) -> bool:
    claim = _read(ctx, "get_claim_details", username=username, claim_id=claim_id)
    filed = parse_time(claim["claim_date"], STORED_DATE)
    return (_now(ctx) - filed) <= timedelta(days=ctx.params["appeal_period"])


# ---- constraints that are tools --------------------------------------------------------------

DOMAIN.describe(
    "internal_check_username_exist",
    "An account with the username {username} exists.",
    "No account with the username {username} exists.",
)
DOMAIN.describe(
    "internal_check_provider_exists",
    "A provider with the id {provider_id} exists.",
    "No provider with the id {provider_id} exists.",
)
DOMAIN.describe(
    "internal_check_claim_exists",
    "The user {username} has a claim with the id {claim_id}.",
    "The user {username} has no claim with the id {claim_id}.",
)
DOMAIN.describe(
    "login_user",
    "The user {username} can log in with the identification {identification}.",
    "The user {username} cannot log in with the identification {identification}.",
)
