"""The healthcare domain: tools, checks, session, database model, and the published data.

What every domain must satisfy (catalogue, wordings, schemas, calls that never reach a tool, task
databases) is checked in test_all_domains.py, and every task's reference path in
test_reference_paths.py. Here: the healthcare rules, and the replay of every recorded healthcare
trajectory, which reproduces the tool outputs the agents saw and the final databases (published
data from ``../shared``, skipped when it is absent).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from sopbench.constraints import Single, parse
from sopbench.domains import (
    SESSION_BEFORE_CREDENTIALS,
    LenientSystem,
    StrictSystem,
)
from sopbench.domains.healthcare import DOMAIN, HealthcareDatabase
from sopbench.evaluation import canonical_json
from sopbench.replay import ReplaySummary, replay_paths

NOW = "2025-01-15T12:56:39"


def clinic() -> dict[str, Any]:
    """A small insurer of our own: an active and an inactive policy holder, three providers."""
    return {
        "accounts": {
            "ana": {
                "identification": "id-ana",
                "policy_number": "P-1",
                "policy": {
                    "details": {
                        "type": "Dental",
                        "coverage_amount": 3000,
                        "enrollment_date": "2024-12-01",
                        "authorized_providers": ["smile_dental"],
                        "annual_income": 15000,
                    },
                    "claims": [
                        {
                            "claim_id": "CLM-001",
                            "amount": 1000,
                            "status": "approved",
                            "description": "Filling",
                            "claim_date": "2024-11-20",
                        },
                        {
                            "claim_id": "CLM-002",
                            "amount": 500,
                            "status": "pending",
                            "description": "Cleaning",
                            "claim_date": "2024-12-20",
                        },
                        {
                            "claim_id": "CLM-003",
                            "amount": 700,
                            "status": "denied",
                            "description": "Whitening",
                            "claim_date": "2024-07-19",
                        },
                    ],
                },
                "scheduled_appointments": [],
            },
            "ben": {
                "identification": "id-ben",
                "policy_number": "P-2",
                "policy": {
                    "details": {
                        "type": "Inactive",
                        "coverage_amount": 0,
                        "authorized_providers": [],
                        "annual_income": 0,
                    },
                    "claims": [],
                },
                "scheduled_appointments": [],
            },
        },
        "providers": {
            "smile_dental": {
                "name": "Smile Dental",
                "location": "Leeds",
                "service_type": "Dental",
                "availability": "Available",
                "appointments": [],
            },
            "city_health": {
                "name": "City Health",
                "location": "York",
                "service_type": "Health",
                "availability": "Avaliable",  # the published misspelling: never counts as available
                "appointments": [],
            },
            "eye_care": {
                "name": "Eye Care",
                "location": "Hull",
                "service_type": "Vision",
                "availability": "Unavailable",
                "appointments": [],
            },
        },
        "interaction_time": NOW,
    }


def lenient(database: dict[str, Any] | None = None, **parameters: Any) -> LenientSystem:
    return LenientSystem(DOMAIN, database or clinic(), parameters)


def truth(system: LenientSystem | StrictSystem, constraint: str, **arguments: Any) -> bool:
    """The truth of a positive constraint, with its variables named as its parameters."""
    single = Single.of(constraint, {name: name for name in arguments})
    return system.holds(single, arguments)


# ---- wordings ------------------------------------------------------------------------------


def test_wordings_fill_variables_and_parameters() -> None:
    limit = Single.of("claim_within_limits", {"amount": "claim_amount"})
    text = DOMAIN.describe_single(limit, {"maximum_claimable_amount": 1500})
    assert "claim_amount" in text and "1500" in text
    negated = DOMAIN.describe_single(Single.of("not policy_active", {"username": "username"}))
    assert negated == DOMAIN.wordings["policy_active"].negative.format(username="username")
    for name, wording in DOMAIN.wordings.items():
        for template in (wording.positive, wording.negative):
            for placeholder in re.findall(r"{(\w+)}", template):
                known = placeholder in DOMAIN.catalogue.default_parameters or any(
                    placeholder in tool.params for tool in DOMAIN.tools.values()
                )
                assert known, (name, placeholder)


# ---- tools -----------------------------------------------------------------------------------


def test_login_user_compares_the_identification() -> None:
    system = lenient()
    assert system.invoke("login_user", {"username": "ana", "identification": "id-ana"}) is True
    assert system.invoke("login_user", {"username": "ana", "identification": "id-ben"}) is False
    assert system.invoke("login_user", {"username": "zoe", "identification": "id-ana"}) is False
    licence = {"drivers_license_id": "id-ana", "drivers_license_state": "CA"}
    assert system.execute("login_user", {"username": "ana", "identification": licence}).content() == "False"
    missing = system.execute("login_user", {"username": "ana"})
    assert missing.content() == (
        "TypeError: Healthcare.login_user() missing 1 required positional argument: 'identification'"
    )


def test_readers_answer_pairs_and_fail_with_their_placeholders() -> None:
    system = lenient()
    claim = system.execute("get_claim_details", {"username": "ana", "claim_id": "CLM-002"})
    assert claim.raw == (True, clinic()["accounts"]["ana"]["policy"]["claims"][1])
    assert claim.content() == (
        "{'claim_id': 'CLM-002', 'amount': 500, 'status': 'pending', 'description': 'Cleaning', "
        "'claim_date': '2024-12-20'}"
    )
    missing = system.execute("get_claim_details", {"username": "ana", "claim_id": "CLM-9"})
    assert (
        missing.raw == (False, {}) and missing.content() == "{}" and missing.content("tuple") == "(False, {})"
    )
    assert not missing.ok
    # An unknown user fails the claim check with a bare False, so the reader still answers its pair.
    assert system.invoke("internal_check_claim_exists", {"username": "zoe", "claim_id": "CLM-001"}) is False
    assert system.invoke("get_claim_details", {"username": "zoe", "claim_id": "CLM-001"}) == (False, {})
    assert system.invoke("get_provider_details", {"provider_id": "nowhere"}) == (False, {})
    assert system.invoke("get_policy_details", {"username": "zoe"}) == (True, {})
    assert system.execute("get_claim_history", {"username": "zoe"}).content() == "KeyError: 'zoe'"
    assert system.invoke("internal_get_interaction_time", {}) == (True, NOW)
    assert system.invoke("internal_check_provider_exists", {"provider_id": "eye_care"}) == (True, True)
    assert system.invoke("internal_check_username_exist", {"username": "zoe"}) == (True, False)


def test_update_policy_writes_the_three_fields_and_checks_amounts() -> None:
    system = lenient()
    assert system.invoke(
        "update_policy",
        {"username": "ana", "policy_type": "Vision", "coverage_amount": 0, "annual_income": 9.5},
    )
    details = system.db["accounts"]["ana"]["policy"]["details"]
    assert (details["type"], details["coverage_amount"], details["annual_income"]) == ("Vision", 0, 9.5)
    before = canonical_json(system.db)
    refused = system.execute(
        "update_policy",
        {"username": "ana", "policy_type": "Vision", "coverage_amount": -1, "annual_income": 1},
    )
    assert refused.raw is False and canonical_json(system.db) == before
    text = system.execute(
        "update_policy",
        {"username": "ana", "policy_type": "Vision", "coverage_amount": "1", "annual_income": 1},
    )
    assert text.content() == "TypeError: '>=' not supported between instances of 'str' and 'int'"
    unknown = system.execute(
        "update_policy",
        {"username": "zoe", "policy_type": "Vision", "coverage_amount": 1, "annual_income": 1},
    )
    assert unknown.content() == "KeyError: 'zoe'" and canonical_json(system.db) == before


def test_submit_claim_appends_a_pending_claim_dated_with_the_full_timestamp() -> None:
    system = lenient()
    arguments = {"username": "ana", "amount": 120.5, "description": "X-ray", "provider_id": "smile_dental"}
    assert system.invoke("submit_claim", arguments) is True
    claim = system.db["accounts"]["ana"]["policy"]["claims"][-1]
    assert list(claim.items()) == [
        ("claim_id", "CLM-4"),
        ("amount", 120.5),
        ("status", "pending"),
        ("description", "X-ray"),
        ("provider_id", "smile_dental"),
        ("claim_date", NOW),
    ]
    assert system.invoke("submit_claim", {**arguments, "provider_id": "nowhere"}) is False
    assert system.invoke("submit_claim", {**arguments, "amount": -5}) is False
    assert system.invoke("submit_claim", {**arguments, "amount": 0}) is True  # >= 0 in this domain


def test_deactivate_and_reactivate_replace_the_details() -> None:
    system = lenient()
    assert system.invoke("deactivate_policy", {"username": "ana"}) is True
    policy = system.db["accounts"]["ana"]["policy"]
    assert policy == {
        "details": {
            "type": "Inactive",
            "coverage_amount": 0,
            "enrollment_date": "",
            "authorized_providers": [],
            "annual_income": 0,
        },
        "claims": [],
    }
    arguments = {"username": "ana", "policy_type": "Health", "coverage_amount": 100, "annual_income": -3}
    assert system.invoke("reactivate_policy", arguments) is True  # only the coverage is checked
    assert list(policy["details"].items()) == [
        ("type", "Health"),
        ("coverage_amount", 100),
        ("enrollment_date", NOW),
        ("authorized_providers", []),
        ("annual_income", -3),
    ]
    assert system.invoke("reactivate_policy", {**arguments, "coverage_amount": -1}) is False


def test_appeal_authorise_and_schedule() -> None:
    system = lenient()
    assert system.invoke("appeal_claim", {"username": "ana", "claim_id": "CLM-001"}) is True
    assert system.db["accounts"]["ana"]["policy"]["claims"][0]["status"] == "pending"
    assert system.invoke("appeal_claim", {"username": "ana", "claim_id": "CLM-404"}) is False
    assert system.invoke("add_authorized_provider", {"username": "ben", "provider_id": "eye_care"}) is True
    assert system.db["accounts"]["ben"]["policy"]["details"]["authorized_providers"] == ["eye_care"]
    assert system.invoke("add_authorized_provider", {"username": "ben", "provider_id": "nowhere"}) is False
    for username in ("ana", "ben"):
        booked = {"username": username, "provider_id": "smile_dental", "appointment_date": "next Monday"}
        assert system.invoke("schedule_appointment", booked) is True
    assert system.db["accounts"]["ana"]["scheduled_appointments"] == [
        {"appointment_id": "APT-1", "provider_id": "smile_dental", "appointment_date": "next Monday"}
    ]
    # Ids count the user's appointments, so two users share APT-1 at one provider.
    assert system.db["providers"]["smile_dental"]["appointments"] == [
        {"appointment_id": "APT-1", "username": "ana", "appointment_date": "next Monday"},
        {"appointment_id": "APT-1", "username": "ben", "appointment_date": "next Monday"},
    ]
    assert system.invoke("logout_user", {"username": "anyone"}) is True


def test_a_write_that_raises_half_way_is_undone_only_when_atomic() -> None:
    database = clinic()
    del database["providers"]["smile_dental"]["appointments"]
    booked = {"username": "ana", "provider_id": "smile_dental", "appointment_date": "2025-02-01"}
    atomic = LenientSystem(DOMAIN, database)
    assert atomic.execute("schedule_appointment", booked).content() == "KeyError: 'appointments'"
    assert atomic.db == database
    published = LenientSystem(DOMAIN, database, atomic=False)
    published.execute("schedule_appointment", booked)
    assert len(published.db["accounts"]["ana"]["scheduled_appointments"]) == 1  # the partial write stays


# ---- bad input from a model ------------------------------------------------------------------

# Unknown tools, arguments that are not a JSON object (a megabyte of text too), missing or unexpected
# arguments: for every domain in test_all_domains.py.
BAD_CALLS = [
    (
        "submit_claim",
        '{"username": "ana", "amount": null, "description": "x", "provider_id": "smile_dental"}',
        "TypeError: '>=' not supported between instances of 'NoneType' and 'int'",
    ),
    ("get_provider_details", '{"provider_id": ["smile_dental"]}', "TypeError: unhashable type: 'list'"),
    ("get_claim_history", json.dumps({"username": "z" * 1_000_000}), "KeyError: 'zzzz"),
]


@pytest.mark.parametrize(("tool", "arguments", "expected"), BAD_CALLS)
def test_bad_calls_become_error_text_and_leave_the_database_alone(
    tool: str, arguments: str, expected: str
) -> None:
    system = lenient()
    before = canonical_json(system.db)
    outcome = system.execute(tool, arguments)
    assert not outcome.ok
    assert expected in outcome.content()
    assert canonical_json(system.db) == before


def test_a_huge_string_is_just_an_unknown_user() -> None:
    system = lenient()
    outcome = system.execute("get_policy_details", {"username": "a" * 1_000_000})
    assert outcome.ok and outcome.content() == "{}"


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
PARAMETER_NAMES = sorted({param for tool in DOMAIN.tools.values() for param in tool.params} | {"extra"})


@settings(max_examples=300, deadline=None)
@given(
    tool=st.sampled_from(sorted(DOMAIN.tools) + ["exit", ""]),
    arguments=st.dictionaries(st.sampled_from(PARAMETER_NAMES), JSON_VALUES, max_size=5),
)
def test_any_call_returns_text_and_never_raises(tool: str, arguments: dict[str, Any]) -> None:
    system = lenient()
    outcome = system.execute(tool, json.dumps(arguments))
    assert isinstance(outcome.content(), str) and isinstance(outcome.content("tuple"), str)
    if not outcome.ok and DOMAIN.is_read_only(tool) is False:
        assert system.db == clinic()  # a refused or failed write changed nothing


# ---- checks ----------------------------------------------------------------------------------


def test_amount_and_limit_boundaries() -> None:
    system = lenient(maximum_claimable_amount=1500)
    assert truth(system, "amount_positive_restr", amount=0)
    assert not truth(system, "amount_positive_restr", amount=-0.01)
    assert truth(system, "claim_within_limits", amount=1499.99)
    assert not truth(system, "claim_within_limits", amount=1500)  # strictly below the limit


def test_coverage_counts_pending_and_approved_claims_only() -> None:
    system = lenient()  # ana: coverage 3000, approved 1000 + pending 500 (+ denied 700, ignored)
    assert truth(system, "claim_within_coverage_amount", username="ana", amount=1500)
    assert not truth(system, "claim_within_coverage_amount", username="ana", amount=1500.01)
    with pytest.raises(KeyError, match="zoe"):
        truth(system, "claim_within_coverage_amount", username="zoe", amount=1)


def test_income_proof_boundary() -> None:
    system = lenient(max_coverage_percentage=20)
    assert truth(system, "income_proof_enough", annual_income=15000, coverage_amount=3000)
    assert not truth(system, "income_proof_enough", annual_income=15000, coverage_amount=3000.5)
    assert truth(system, "income_proof_enough", annual_income=0.1, coverage_amount=0.02)


def test_enrollment_period_counts_the_clock_time() -> None:
    database = clinic()
    details = database["accounts"]["ana"]["policy"]["details"]
    details["enrollment_date"] = "2024-10-17"  # 90 days and 12:56:39 before now
    assert not truth(lenient(database, enrollment_period=90), "within_enrollment_period", username="ana")
    details["enrollment_date"] = "2024-10-18"
    assert truth(lenient(database, enrollment_period=90), "within_enrollment_period", username="ana")
    database["interaction_time"] = "2025-01-15T00:00:00"
    details["enrollment_date"] = "2024-10-17"  # exactly 90 days: inside
    assert truth(lenient(database, enrollment_period=90), "within_enrollment_period", username="ana")


def test_dates_written_during_the_episode_cannot_be_parsed() -> None:
    system = lenient()
    system.invoke(
        "submit_claim", {"username": "ana", "amount": 1, "description": "d", "provider_id": "smile_dental"}
    )
    with pytest.raises(ValueError, match="unconverted data remains: T12:56:39"):
        truth(system, "within_appeal_period", username="ana", claim_id="CLM-4")
    system.invoke("deactivate_policy", {"username": "ana"})
    with pytest.raises(ValueError, match="does not match format"):
        truth(system, "within_enrollment_period", username="ana")
    with pytest.raises(KeyError, match="enrollment_date"):
        truth(system, "within_enrollment_period", username="ben")  # never enrolled


def test_appeal_period_and_denied_status() -> None:
    system = lenient(appeal_period=180)
    assert truth(system, "within_appeal_period", username="ana", claim_id="CLM-003") is False  # 180 d + 12:56
    assert truth(system, "within_appeal_period", username="ana", claim_id="CLM-002")
    assert truth(system, "claim_status_denied", username="ana", claim_id="CLM-003")
    assert not truth(system, "claim_status_denied", username="ana", claim_id="CLM-001")
    with pytest.raises(KeyError, match="status"):
        truth(system, "claim_status_denied", username="ana", claim_id="CLM-404")


def test_appointment_dates() -> None:
    system = lenient()
    assert truth(system, "appointment_date_valid", appointment_date="2025-01-16")
    assert truth(system, "appointment_date_valid", appointment_date="2025-01-16 09:30")
    assert truth(system, "appointment_date_valid", appointment_date="2025-01-16T09:30:00")
    # The day is compared at midnight with the current time, so later today is already too late.
    assert not truth(system, "appointment_date_valid", appointment_date="2025-01-15 23:00")
    assert not truth(system, "appointment_date_valid", appointment_date="16/01/2025")
    with pytest.raises(TypeError):
        truth(system, "appointment_date_valid", appointment_date=20250116)
    database = clinic()
    database["interaction_time"] = "2025-01-15T00:00:00"
    assert truth(lenient(database), "appointment_date_valid", appointment_date="2025-01-15")


def test_policy_and_provider_checks() -> None:
    system = lenient()
    assert truth(system, "policy_active", username="ana") and not truth(
        system, "policy_inactive", username="ana"
    )
    assert truth(system, "policy_inactive", username="ben")
    with pytest.raises(KeyError, match="type"):
        truth(system, "policy_active", username="zoe")  # an unknown user reads as an empty policy
    assert truth(system, "provider_authorized", username="ana", provider_id="smile_dental")
    assert not truth(system, "provider_not_already_authorized", username="ana", provider_id="smile_dental")
    assert truth(system, "provider_covers_policy", username="ana", provider_id="smile_dental")
    assert not truth(system, "provider_covers_policy", username="ana", provider_id="city_health")
    with pytest.raises(KeyError, match="service_type"):
        truth(system, "provider_covers_policy", username="zoe", provider_id="nowhere")
    assert truth(system, "provider_available", provider_id="smile_dental")
    assert not truth(system, "provider_available", provider_id="city_health")  # "Avaliable"
    assert not truth(system, "provider_available", provider_id="eye_care")
    assert truth(system, "no_pending_claims", username="ben")
    assert not truth(system, "no_pending_claims", username="ana")
    assert truth(system, "policy_type_valid", policy_type="Pharmacy")
    assert not truth(system, "policy_type_valid", policy_type="health")
    assert not truth(system, "policy_type_valid", policy_type="Inactive")


# ---- the strict oracle and its session -------------------------------------------------------


def strict(quirks: frozenset[str] = frozenset()) -> StrictSystem:
    dependencies = {name: None for name in DOMAIN.tools}
    dependencies["get_claim_history"] = parse(["single", "logged_in_user", {"username": "username"}])
    return StrictSystem(DOMAIN, clinic(), None, dependencies, quirks=quirks)


def test_session_follows_login_and_logout() -> None:
    system = strict()
    assert system.session == {"user": None}
    assert system.execute("get_claim_history", {"username": "ana"}).raw is False
    assert system.execute("login_user", {"username": "ana", "identification": "id-ben"}).raw is False
    assert system.session["user"] is None  # a wrong identification does not log in
    assert system.execute("login_user", {"username": "ana", "identification": "id-ana"}).ok
    assert system.session["user"] == "ana"
    assert truth(system, "logged_in_user", username="ana") and not truth(
        system, "logged_in_user", username="ben"
    )
    assert system.execute("get_claim_history", {"username": "ana"}).ok
    assert system.execute("logout_user", {"username": "ana"}).ok
    assert system.session["user"] is None


def test_published_quirk_logs_in_before_checking_credentials() -> None:
    system = strict(frozenset({SESSION_BEFORE_CREDENTIALS}))
    assert system.execute("login_user", {"username": "ana", "identification": "wrong"}).raw is False
    assert system.session["user"] == "ana"


def test_lenient_system_never_logs_in() -> None:
    system = lenient()
    system.execute("login_user", {"username": "ana", "identification": "id-ana"})
    assert system.session == {"user": None}


# ---- database model --------------------------------------------------------------------------


def test_our_database_validates() -> None:
    HealthcareDatabase.model_validate(clinic())


@pytest.mark.parametrize(
    ("break_it", "where"),
    [
        (lambda db: db.update(accounts=["ana"]), "accounts"),
        (
            lambda db: db["accounts"]["ana"]["policy"]["details"].update(coverage_amount="3000"),
            "coverage_amount",
        ),
        (lambda db: db["accounts"]["ana"]["policy"].pop("claims"), "claims"),
        (lambda db: db["providers"]["eye_care"].update(appointments={}), "appointments"),
        (lambda db: db.update(interaction_time="15/01/2025"), "interaction_time"),
        (lambda db: db.pop("interaction_time"), "interaction_time"),
    ],
)
def test_a_broken_database_is_rejected_with_its_location(break_it: Any, where: str) -> None:
    database = clinic()
    break_it(database)
    with pytest.raises(ValidationError) as error:
        HealthcareDatabase.model_validate(database)
    assert where in str(error.value)


# ---- replay of the recorded trajectories -----------------------------------------------------


def test_replay_reproduces_recorded_outputs_and_databases(published_trajectories_dir: Path) -> None:
    folder = published_trajectories_dir / "healthcare"
    if not folder.exists():
        pytest.skip("no healthcare trajectories")
    summary = ReplaySummary()
    for replay in replay_paths([folder]):
        summary.add(replay)
    (total,) = summary.rows()
    # 183 runs of three files open with another task's prompt (see misaligned_files.csv).
    assert (total["runs"], total["misaligned_runs"], total["tool_outputs"]) == (3416, 183, 10328)
    assert total["tool_outputs_matching"] == total["tool_outputs"], total
    assert total["final_databases_matching"] == total["runs"], total
