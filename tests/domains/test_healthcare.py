"""The healthcare domain: tools, checks, session, database model, and the published data.

The published data (tasks, reference tables, trajectories) is read from ``../shared``; tests that
need it are skipped when it is absent. Two kinds of evidence that the domain behaves as the original:
the reference path of every task reaches the recorded outcome, and replaying every recorded
trajectory reproduces the tool outputs the agents saw and the final databases.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from sopbench.constraints import Single, parse, singles
from sopbench.domains import (
    SESSION_BEFORE_CREDENTIALS,
    LenientSystem,
    StrictSystem,
    canonical_json,
    get_domain,
)
from sopbench.domains.healthcare import DOMAIN, HealthcareDatabase

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TASKS_FILE = SHARED / "sopbench" / "tasks" / "healthcare_tasks.json.gz"
TABLES_FILE = SHARED / "reference" / "SOPBENCH_DOMAIN_TABLES.json"
TRAJECTORIES = SHARED / "sopbench" / "trajectories" / "healthcare"

needs_shared = pytest.mark.skipif(
    not TASKS_FILE.exists(), reason="../shared/sopbench not found: published data needed"
)

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


# ---- the domain as a whole -------------------------------------------------------------------


def test_domain_is_registered_and_complete() -> None:
    assert get_domain("healthcare") is DOMAIN
    assert DOMAIN.system_name == "Healthcare"
    assert DOMAIN.validate() == []
    assert set(DOMAIN.tools) == set(DOMAIN.catalogue.tools)
    for name, signature in DOMAIN.catalogue.tools.items():
        assert DOMAIN.tools[name].params == signature.params, name


def test_offered_tools_are_the_published_seventeen_in_order() -> None:
    offered = [tool.name for tool in DOMAIN.offered_tools()]
    assert len(offered) == 17
    assert "internal_get_database" not in offered
    assert offered == [name for name, sig in DOMAIN.catalogue.tools.items() if sig.offered]


def _catalogue_constraint_names() -> set[str]:
    catalogue = DOMAIN.catalogue
    names = set(catalogue.links)
    for table in (catalogue.innate, catalogue.required, catalogue.constraint_dependencies):
        names.update(single.name for expr in table.values() for single in singles(expr))
    for pool in catalogue.customizable.values():
        names.update(single.name for expr in pool for single in singles(expr))
    names.update(catalogue.constraint_dependencies)
    return names


def test_every_constraint_has_both_wordings() -> None:
    names = _catalogue_constraint_names() | {"login_user"}
    assert names <= set(DOMAIN.wordings), names - set(DOMAIN.wordings)
    for name in names:
        wording = DOMAIN.wordings[name]
        assert wording.positive and wording.negative and wording.positive != wording.negative


@needs_shared
def test_wordings_cover_the_published_constraint_names() -> None:
    published = json.loads(TABLES_FILE.read_text())["healthcare"]["constraint_names_with_descriptions"]
    assert set(published) <= set(DOMAIN.wordings)


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


NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
JSON_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}


def _assert_property_schema(schema: dict[str, Any]) -> None:
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    assert types and set(types) <= JSON_TYPES
    if "object" in types and "properties" in schema:
        assert set(schema.get("required", [])) <= set(schema["properties"])
        for sub in schema["properties"].values():
            _assert_property_schema(sub)


@pytest.mark.parametrize("tool", DOMAIN.offered_tools(), ids=lambda tool: tool.name)
def test_openai_schema_is_a_valid_function_schema(tool: Any) -> None:
    schema = tool.openai_schema()
    json.dumps(schema)  # plain JSON data
    assert schema["type"] == "function"
    function = schema["function"]
    assert set(function) == {"name", "description", "strict", "parameters"}
    assert NAME_PATTERN.match(function["name"]) and function["name"] == tool.name
    assert isinstance(function["description"], str) and len(function["description"]) > 20
    assert isinstance(function["strict"], bool)
    parameters = function["parameters"]
    assert parameters["type"] == "object" and parameters["additionalProperties"] is False
    assert list(parameters["properties"]) == list(tool.params)
    assert set(parameters["required"]) <= set(parameters["properties"])
    for prop in parameters["properties"].values():
        _assert_property_schema(prop)


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

BAD_CALLS = [
    ("no_such_tool", "{}", "Error: Tool no_such_tool not found."),
    ("internal_get_database", "{}", "Error: Tool internal_get_database not found."),
    ("get_policy_details", "{}", "missing 1 required positional argument: 'username'"),
    ("get_policy_details", '{"username": "ana", "extra": 1}', "got an unexpected keyword argument 'extra'"),
    (
        "submit_claim",
        '{"username": "ana", "amount": null, "description": "x", "provider_id": "smile_dental"}',
        "TypeError: '>=' not supported between instances of 'NoneType' and 'int'",
    ),
    ("get_provider_details", '{"provider_id": ["smile_dental"]}', "TypeError: unhashable type: 'list'"),
    ("update_policy", '{"username": "ana", ', "not valid JSON"),
    ("update_policy", "[1, 2]", "must be a JSON object"),
    ("get_claim_history", json.dumps({"username": "z" * 1_000_000}), "KeyError: 'zzzz"),
    ("appeal_claim", "x" * 1_000_000, "not valid JSON"),
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


# ---- the published data ----------------------------------------------------------------------


def published_tasks() -> Iterator[tuple[str, int, dict[str, Any]]]:
    with gzip.open(TASKS_FILE) as handle:
        tasks = json.load(handle)
    for goal, items in tasks.items():
        for index, task in enumerate(items):
            yield goal, index, task


@needs_shared
def test_every_published_task_database_validates() -> None:
    count = 0
    for _, _, task in published_tasks():
        HealthcareDatabase.model_validate(task["initial_database"])
        count += 1
    assert count == 130


def reference_outcome(goal: str, task: dict[str, Any], defaults: dict[str, Any]) -> bool:
    """Run the required actions (linked tools, first occurrence order) then the goal on the oracle."""
    constraints = parse(task["constraints"])
    dependencies = {**defaults, goal: constraints}
    system = StrictSystem(DOMAIN, task["initial_database"], task["constraint_parameters"], dependencies)
    known = task["user_known"]
    linked: list[str] = []
    for single in singles(constraints):
        link = DOMAIN.catalogue.links.get(single.name)
        if link is None or single.name in linked:
            continue
        linked.append(single.name)
        arguments = {}
        for param in DOMAIN.tools[link.name].params:
            variable = link.param_map.get(param, param)
            variable = single.param_map.get(variable, variable)
            if variable in known:
                arguments[param] = known[variable]
        if not system.execute(link.name, arguments).ok:
            return False  # a failed login ends the path: the goal is never called
    arguments = {param: known[param] for param in DOMAIN.tools[goal].params if param in known}
    return system.execute(goal, arguments).ok


@needs_shared
def test_reference_paths_reach_the_recorded_outcome() -> None:
    table = json.loads(TABLES_FILE.read_text())["healthcare"]["derived_default_dependency_full_expanded"]
    defaults = {tool: parse(expr) for tool, expr in table.items()}
    results = [
        (goal, index, reference_outcome(goal, task, defaults) == bool(task["action_should_succeed"]))
        for goal, index, task in published_tasks()
    ]
    assert len(results) == 130
    assert [(goal, index) for goal, index, ok in results if not ok] == []


# ---- replay of the recorded trajectories -----------------------------------------------------

NOT_OFFERED_DATABASE = "Error: Tool internal_get_database not found."


def _tool_messages(records: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for record in records:
        for run in record.get("interactions") or []:
            for message in run["interaction"]:
                if "tool_call_id" in message:
                    yield message


def _offered(record: dict[str, Any], offers_database: bool) -> set[str]:
    offered = {tool.name for tool in DOMAIN.offered_tools()}
    if record["setup"]["tool_list"] != "full":  # "oracle" (older files: "test"): the task graph's tools
        graph = record["task"]["directed_action_graph"]["nodes"]
        offered &= {node[0] for node in graph if isinstance(node, list)}
    if offers_database:
        offered.add("internal_get_database")
    return offered


def _aligned(record: dict[str, Any], run: dict[str, Any]) -> bool:
    """A record whose conversation opens with another task's prompt is misaligned (quirk Q15)."""
    first = next((m.get("content") or "" for m in run["interaction"] if m.get("sender") == "user"), "")
    return first.startswith(record["task"]["user_prompt"])  # "adv" runs append a paragraph


def _answers_after(messages: list[dict[str, Any]], position: int) -> Iterator[dict[str, Any]]:
    """The tool messages that directly follow the assistant message at ``position``."""
    for message in messages[position + 1 :]:
        if "tool_call_id" not in message:
            return
        yield message


def replay_file(path: Path) -> dict[str, int]:
    with gzip.open(path) as handle:
        records = json.load(handle) or []
    contents = [message["content"] for message in _tool_messages(records)]
    output_format = "tuple" if any(c.startswith(("(True,", "(False,")) for c in contents) else "value"
    # Two older files were given internal_get_database: their records answer it with the database.
    offers_database = any(
        m["tool_name"] == "internal_get_database" and m["content"] != NOT_OFFERED_DATABASE
        for m in _tool_messages(records)
    )
    counts = dict.fromkeys(("runs", "excluded", "calls", "calls_ok", "databases_ok"), 0)
    for record in records:
        task = record["task"]
        offered = _offered(record, offers_database)
        for run in record.get("interactions") or []:
            if not _aligned(record, run):
                counts["excluded"] += 1
                continue
            counts["runs"] += 1
            system = LenientSystem(
                DOMAIN, task["initial_database"], task["constraint_parameters"], atomic=False
            )
            messages = run["interaction"]
            for position, message in enumerate(messages):
                calls = message.get("tool_calls") if "tool_call_id" not in message else None
                if not calls or any(c["function"]["name"].lower() in ("none", "n/a") for c in calls):
                    continue  # the simulator read "None"/"N/A" calls as no call at all
                if any(c["function"]["name"] == "exit_conversation" for c in calls):
                    break
                answers = {m["tool_call_id"]: m["content"] for m in _answers_after(messages, position)}
                for call in calls:
                    name = call["function"]["name"]
                    counts["calls"] += 1
                    if name in offered:
                        # The published simulator parsed with json.loads, which accepts Infinity/NaN.
                        arguments = json.loads(call["function"]["arguments"])
                        content = system.execute(name, arguments, offered_only=False).content(output_format)
                    else:
                        content = f"Error: Tool {name} not found."
                    counts["calls_ok"] += content == answers.get(call["id"])
            counts["databases_ok"] += system.db == run["database"]
    return counts


@needs_shared
@pytest.mark.skipif(not TRAJECTORIES.exists(), reason="no healthcare trajectories")
def test_replay_reproduces_recorded_outputs_and_databases() -> None:
    totals = dict.fromkeys(("runs", "excluded", "calls", "calls_ok", "databases_ok"), 0)
    for path in sorted(TRAJECTORIES.glob("*.json.gz")):
        for key, value in replay_file(path).items():
            totals[key] += value
    # 183 runs of three files open with another task's prompt (see misaligned_files.csv).
    assert (totals["runs"], totals["excluded"], totals["calls"]) == (3416, 183, 10328)
    assert totals["calls_ok"] == totals["calls"], totals
    assert totals["databases_ok"] == totals["runs"], totals
