"""The university domain: tools, checks, session, database model, and replay of the recorded runs.

What every domain must satisfy (catalogue, wordings, schemas, calls that never reach a tool, task
databases) is checked in test_all_domains.py, and every task's reference path in
test_reference_paths.py. The replay here reads the recorded trajectories from ``../shared`` and is
skipped when they are absent.
"""

from __future__ import annotations

import copy
import csv
from collections import Counter
from pathlib import Path
from typing import Any

import pydantic
import pytest

from sopbench.constraints import Single, parse
from sopbench.domains import SESSION_BEFORE_CREDENTIALS, LenientSystem, StrictSystem, get_domain
from sopbench.domains.university import EMPTY_MAJOR_RESTRICTION_IS_OPEN
from sopbench.replay import ReplaySummary, replay_paths

DOMAIN = get_domain("university")

_DATABASE: dict[str, Any] = {
    "students": {
        "dana": {
            "password": "pw-dana",
            "major": "Biology",
            "completed_credits": 90,
            "gpa": 3.1,
            "enrolled_courses": ["BIO110"],
            "completed_courses": ["CHEM100", "GEN1"],
            "current_credits": 14,
            "tuition_balance": 0,
            "academic_status": "Good",
            "financial_aid_quarters": 11,
            "residency": "in-state",
            "income": 50000,
            "minors": ["Chemistry"],
            "major_changes": 2,
        },
        "eli": {
            "password": "pw-eli",
            "major": "History",
            "completed_credits": 89,
            "gpa": 1.9,
            "enrolled_courses": [],
            "completed_courses": [],
            "current_credits": 0,
            "tuition_balance": 120,
            "academic_status": "probation",
            "financial_aid_quarters": 0,
            "residency": "out-of-state",
            "income": 50001,
            "minors": [],
            "major_changes": 0,
        },
    },
    "courses": {
        "BIO110": {
            "prerequisites": [],
            "capacity": 40,
            "enrolled": 39,
            "schedule": {"days": ["Mon", "Wed"], "time": "09:00-10:30"},
            "credits": 4,
            "division": "lower",
            "exam_schedule": "2024-03-18T08:00",
            "restricted_to_majors": ["Biology"],
        },
        "BIO320": {
            "prerequisites": ["CHEM100"],
            "capacity": 20,
            "enrolled": 20,
            "schedule": {"days": ["Wed", "Fri"], "time": "10:30-12:00"},
            "credits": 4,
            "division": "upper",
            "exam_schedule": "2024-03-18T08:00",
            "restricted_to_majors": [],
        },
        "HIS200": {
            "prerequisites": [],
            "capacity": 30,
            "enrolled": 3,
            "schedule": {"days": ["Mon"], "time": "10:00-11:00"},
            "credits": 2,
            "division": "lower",
            "exam_schedule": "2024-03-19T13:00",
            "restricted_to_majors": ["History", "Biology"],
        },
    },
    "academic_calendar": {
        "registration_period": ["2024-01-02", "2024-01-20"],
        "graduation_deadline": "2024-05-01",
        "withdrawal_deadline": "2024-02-10",
        "major_change_deadline": "2024-01-20",
        "minor_declaration_deadline": "2024-01-25",
    },
    "majors": {
        "Biology": {"required_courses": ["BIO110", "CHEM100"], "min_gpa": 3.0, "capacity": 2},
        "History": {"required_courses": ["HIS200"], "min_gpa": 2.0, "capacity": 1},
    },
    "minors": {
        "Chemistry": {
            "required_courses": ["CHEM100", "BIO110", "CHEM200"],
            "min_credits": 30,
            "min_gpa": 3.1,
            "prerequisites": ["CHEM100"],
            "max_overlap": 1,
            "incompatible_majors": ["History"],
        },
        "Film": {
            "required_courses": [],
            "min_credits": 10,
            "min_gpa": 2.0,
            "prerequisites": [],
            "max_overlap": 0,
            "incompatible_majors": [],
        },
    },
    "interaction_time": "2024-01-20T00:00:00",
}


def sample_database() -> dict[str, Any]:
    """A fresh copy of a small two-student database written for these tests."""
    return copy.deepcopy(_DATABASE)


def lenient(database=None, **parameters) -> LenientSystem:
    return LenientSystem(DOMAIN, database or sample_database(), parameters or None)


def check(name: str, system: LenientSystem | StrictSystem | None = None, **arguments) -> bool:
    system = system or lenient()
    return DOMAIN.checks[name](system.ctx, **arguments)


# ---- wordings ----------------------------------------------------------------------------------
def test_wording_is_filled_with_variable_names_and_parameters():
    text = DOMAIN.describe_single(Single.of("credits_within_limit", {"username": "who", "course_code": "c"}))
    assert "who" in text and "c" in text and "18" in text
    negated = DOMAIN.describe_single(Single.of("not under_max_minors", {"username": "u"}), {"max_minors": 4})
    assert "4" in negated and "already" in negated


# ---- tools ---------------------------------------------------------------------------------------
def test_login_checks_the_password_and_fails_for_an_unknown_student():
    system = lenient()
    assert system.invoke("login_user", {"username": "dana", "password": "pw-dana"}) is True
    assert system.invoke("login_user", {"username": "dana", "password": "nope"}) is False
    assert system.invoke("login_user", {"username": "zed", "password": "x"}) is False  # innate check


def test_enrolling_adds_credits_and_takes_a_seat():
    system = lenient()
    assert system.execute("enroll_course", {"username": "eli", "course_code": "HIS200"}).content() == "True"
    assert system.db["students"]["eli"]["enrolled_courses"] == ["HIS200"]
    assert system.db["students"]["eli"]["current_credits"] == 2
    assert system.db["courses"]["HIS200"]["enrolled"] == 4


def test_enrolling_in_an_unknown_course_fails_and_an_unknown_student_raises():
    system = lenient()
    assert system.execute("enroll_course", {"username": "eli", "course_code": "XYZ"}).content() == "False"
    assert (
        system.execute("enroll_course", {"username": "zed", "course_code": "HIS200"}).content()
        == "KeyError: 'zed'"
    )
    assert system.db == sample_database()


def test_dropping_a_course_that_is_not_enrolled_raises_like_the_published_system():
    system = lenient()
    outcome = system.execute("drop_course", {"username": "dana", "course_code": "HIS200"})
    assert outcome.content() == "ValueError: list.remove(x): x not in list"
    assert (
        system.execute("drop_course", {"username": "dana", "course_code": "NOPE"}).content()
        == "KeyError: 'NOPE'"
    )
    assert system.execute("drop_course", {"username": "dana", "course_code": "BIO110"}).ok
    assert system.db["students"]["dana"]["current_credits"] == 10
    assert system.db["courses"]["BIO110"]["enrolled"] == 38


def test_graduation_request_changes_nothing_even_for_an_unknown_student():
    system = lenient()
    assert system.invoke("request_graduation", {"username": "nobody"}) is True
    assert system.db == sample_database()


def test_service_writes():
    system = lenient()
    assert system.invoke("apply_financial_aid", {"username": "dana"}) is True
    assert system.invoke("change_major", {"username": "dana", "new_major": "History"}) is True
    assert (
        system.invoke("change_major", {"username": "dana", "new_major": "Poetry"}) is False
    )  # unknown major
    assert system.invoke("declare_minor", {"username": "eli", "minor": "Film"}) is True
    assert system.invoke("declare_minor", {"username": "eli", "minor": "Poetry"}) is False
    dana, eli = system.db["students"]["dana"], system.db["students"]["eli"]
    assert (dana["financial_aid_quarters"], dana["major"], dana["major_changes"]) == (12, "History", 3)
    assert eli["minors"] == ["Film"]


def test_readers_return_pairs_and_their_published_failure_values():
    system = lenient()
    assert system.invoke("internal_check_username_exists", {"username": "zed"}) == (True, False)
    assert system.invoke("internal_get_student_info", {"username": "zed"}) == (False, {})
    assert system.invoke("internal_get_course_info", {"course_code": "X"}) == (False, {})
    assert system.invoke("internal_get_major_info", {"major": "X"}) == (False, {})
    assert system.invoke("internal_get_minor_info", {"minor": "X"}) == (False, None)
    assert system.invoke("internal_get_number_of_students_for_major", {"major": "X"}) is False
    assert system.invoke("internal_get_number_of_students_for_major", {"major": "Biology"}) == (True, 1)
    assert system.invoke("internal_get_interaction_time", {}) == (True, "2024-01-20T00:00:00")
    info = system.execute("internal_get_major_info", {"major": "History"})
    assert info.content() == "{'required_courses': ['HIS200'], 'min_gpa': 2.0, 'capacity': 1}"
    assert info.content("tuple") == "(True, {'required_courses': ['HIS200'], 'min_gpa': 2.0, 'capacity': 1})"


def test_a_partial_write_is_kept_when_not_atomic_and_undone_when_atomic():
    database = sample_database()
    del database["students"]["dana"]["major_changes"]
    kept = LenientSystem(DOMAIN, database, atomic=False)
    assert (
        kept.execute("change_major", {"username": "dana", "new_major": "History"}).content()
        == "KeyError: 'major_changes'"
    )
    assert kept.db["students"]["dana"]["major"] == "History"
    undone = LenientSystem(DOMAIN, database)
    undone.execute("change_major", {"username": "dana", "new_major": "History"})
    assert undone.db["students"]["dana"]["major"] == "Biology"


# ---- bad input from a model ----------------------------------------------------------------------
# Unknown or unoffered tools, arguments that are not a JSON object, missing or unexpected arguments:
# for every domain in test_all_domains.py.
@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "enroll_course",
            {"username": "dana", "course_code": ["BIO110"]},
            "TypeError: unhashable type: 'list'",
        ),
        ("login_user", {"username": 7, "password": "x"}, "False"),
        ("login_user", {"username": "d" * 1_000_000, "password": "x"}, "False"),
        ("drop_course", {"username": "dana", "course_code": "C" * 1_000_000}, None),
    ],
)
def test_bad_calls_become_error_text_and_leave_the_database_alone(tool, arguments, expected):
    system = lenient()
    outcome = system.execute(tool, arguments)
    text = outcome.content()
    assert isinstance(text, str) and not outcome.ok
    if expected is not None:
        assert text == expected
    else:
        assert text.startswith(("Error:", "KeyError:"))
    assert system.db == sample_database()


# ---- checks --------------------------------------------------------------------------------------
def test_credit_limit_and_minimum_after_drop_are_inclusive():
    assert check("credits_within_limit", username="dana", course_code="BIO110")  # 14 + 4 == 18
    assert not check(
        "credits_within_limit", lenient(max_credits_per_quarter=17), username="dana", course_code="BIO110"
    )
    assert check("maintains_min_credits", lenient(min_credits_drop=10), username="dana", course_code="BIO110")
    assert not check(
        "maintains_min_credits", lenient(min_credits_drop=11), username="dana", course_code="BIO110"
    )


def test_capacity_checks_are_strict():
    assert check("course_has_capacity", course_code="BIO110")  # 39 of 40
    assert not check("course_has_capacity", course_code="BIO320")  # 20 of 20
    assert check("major_has_capacity", new_major="Biology")  # 1 of 2
    assert not check("major_has_capacity", new_major="History")  # 1 of 1


def test_major_capacity_of_an_unknown_major_raises_on_the_bare_failure_value():
    with pytest.raises(TypeError, match="cannot unpack non-iterable bool object"):
        check("major_has_capacity", new_major="Poetry")


def test_division_requirement_uses_a_fixed_90_credits():
    assert check("meets_division_requirements", username="dana", course_code="BIO320")  # 90 credits
    assert not check("meets_division_requirements", username="eli", course_code="BIO320")  # 89 credits
    assert check("meets_division_requirements", username="eli", course_code="HIS200")  # lower division


def test_schedule_and_exam_conflicts():
    # BIO110 Mon/Wed 09:00-10:30 against BIO320 Wed/Fri 10:30-12:00: touching ends do not clash.
    assert check("no_schedule_conflict", username="dana", course_code="BIO320")
    assert not check("no_schedule_conflict", username="dana", course_code="HIS200")  # Mon 10:00 overlaps
    assert not check("no_exam_conflict", username="dana", course_code="BIO320")  # identical exam time
    assert check("no_exam_conflict", username="dana", course_code="HIS200")


def test_registration_period_compares_date_times_but_major_change_compares_dates():
    at = sample_database()
    at["interaction_time"] = "2024-01-20T09:00:00"  # after midnight of the last day
    assert check("within_registration_period")  # exactly midnight of the last day
    assert not check("within_registration_period", lenient(at))
    assert check("within_major_change_period", lenient(at))  # same date
    at["interaction_time"] = "2024-02-10T00:00:01"
    assert not check("within_withdrawal_period", lenient(at))


def test_student_thresholds_at_their_boundaries():
    assert check("financial_aid_quota_available", username="dana")  # 11 < 12
    assert not check("financial_aid_quota_available", lenient(max_financial_aid_quarters=11), username="dana")
    assert check("meets_income_requirements", username="dana")  # 50000 <= 50000
    assert not check("meets_income_requirements", username="eli")
    assert not check("not_on_probation", username="eli")  # "probation" in any case
    assert not check("valid_residency_status", username="eli")
    assert check("under_max_major_changes", username="dana")  # 2 < 3
    assert not check("under_max_minors", lenient(max_minors=1), username="dana")
    assert check("tuition_balance_zero", username="dana") and not check(
        "tuition_balance_zero", username="eli"
    )
    assert not check("meets_half_time_enrollment", username="eli")
    assert check("meets_major_gpa_requirement", username="dana", new_major="Biology")  # 3.1 >= 3.0
    assert check("meets_minor_gpa_requirement", username="dana", minor="Chemistry")  # 3.1 >= 3.1


def test_minor_checks():
    assert not check("minor_compatible_with_major", username="eli", minor="Chemistry")
    assert check("minor_compatible_with_major", username="dana", minor="Chemistry")
    # Chemistry shares CHEM100 and BIO110 with Biology: 2 <= 2 holds, 2 <= 1 does not.
    assert check("minor_course_overlap_check", username="dana", minor="Chemistry")
    assert not check(
        "minor_course_overlap_check", lenient(max_overlap_minor_major=1), username="dana", minor="Chemistry"
    )
    assert check("meets_minor_prerequisites", username="dana", minor="Chemistry")
    assert not check("meets_minor_prerequisites", username="eli", minor="Chemistry")
    # An unknown student is never read when the minor has no prerequisite (lazy, as published) ...
    assert check("meets_minor_prerequisites", username="zed", minor="Film")
    # ... but is when it has one: the empty failure record has no completed courses.
    with pytest.raises(KeyError, match="completed_courses"):
        check("meets_minor_prerequisites", username="zed", minor="Chemistry")
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'get'"):
        check("minor_compatible_with_major", username="dana", minor="Poetry")


def test_graduation_checks():
    database = sample_database()
    database["students"]["dana"]["completed_courses"] += ["BIO110"] + [f"GEN{i}" for i in range(2, 11)]
    system = lenient(database)
    assert check("major_requirements_met", system, username="dana")
    assert not check("major_requirements_met", username="dana")
    assert check("gen_ed_requirements_met", system, username="dana")  # GEN1..GEN10
    assert not check("gen_ed_requirements_met", username="dana")
    assert check("credit_requirement_met", lenient(graduation_credit_requirement=90), username="dana")
    assert not check("credit_requirement_met", username="dana")
    assert check("gpa_requirement_met", username="dana") and not check("gpa_requirement_met", username="eli")
    assert check("before_graduation_deadline")


def test_empty_major_restriction_is_closed_unless_the_option_says_open():
    assert not check("meets_major_restriction", username="dana", course_code="BIO320")
    opened = LenientSystem(DOMAIN, sample_database(), options={EMPTY_MAJOR_RESTRICTION_IS_OPEN: True})
    assert check("meets_major_restriction", opened, username="dana", course_code="BIO320")
    assert check("meets_major_restriction", username="eli", course_code="HIS200")


# ---- the oracle and its session ------------------------------------------------------------------
def _oracle(quirks=frozenset()) -> StrictSystem:
    logged_in = parse(["single", "logged_in_user", {"username": "username"}])
    dependencies = {"login_user": None, "logout_user": None, "enroll_course": logged_in}
    return StrictSystem(DOMAIN, sample_database(), None, dependencies, quirks=quirks)


def test_oracle_requires_a_successful_login_and_forgets_it_on_logout():
    oracle = _oracle()
    enroll = {"username": "eli", "course_code": "HIS200"}
    assert oracle.execute("enroll_course", enroll).content() == "False"
    assert not oracle.execute("login_user", {"username": "eli", "password": "wrong"}).ok
    assert oracle.session["user"] is None
    assert oracle.execute("login_user", {"username": "eli", "password": "pw-eli"}).ok
    assert oracle.session["user"] == "eli"
    assert oracle.execute("enroll_course", enroll).ok
    assert oracle.execute("logout_user", {"username": "someone"}).ok
    assert oracle.session["user"] is None
    assert not oracle.execute("enroll_course", enroll).ok
    assert oracle.db["courses"]["HIS200"]["enrolled"] == 4


def test_published_quirk_logs_in_before_checking_the_password():
    oracle = _oracle(frozenset({SESSION_BEFORE_CREDENTIALS}))
    assert not oracle.execute("login_user", {"username": "eli", "password": "wrong"}).ok
    assert oracle.session["user"] == "eli"


def test_oracle_refuses_tools_missing_from_its_table():
    assert _oracle().execute("apply_financial_aid", {"username": "eli"}).content() == "False"


# ---- database model ------------------------------------------------------------------------------
def test_sample_database_validates_and_a_broken_one_is_rejected_clearly():
    DOMAIN.database_model.model_validate(sample_database())
    broken = sample_database()
    broken["students"] = [broken["students"]["dana"]]
    with pytest.raises(pydantic.ValidationError, match="students"):
        DOMAIN.database_model.model_validate(broken)
    broken = sample_database()
    broken["courses"]["BIO110"]["credits"] = "4"
    with pytest.raises(pydantic.ValidationError, match=r"courses\.BIO110\.credits"):
        DOMAIN.database_model.model_validate(broken)
    broken = sample_database()
    del broken["students"]["eli"]["gpa"]
    with pytest.raises(pydantic.ValidationError, match=r"students\.eli\.gpa"):
        DOMAIN.database_model.model_validate(broken)


# ---- replay of the recorded trajectories ---------------------------------------------------------
def test_recorded_trajectories_replay_exactly(shared_dir: Path, published_trajectories_dir: Path):
    folder = published_trajectories_dir / "university"
    if not folder.exists():
        pytest.skip("../shared/sopbench not found: published data needed")
    summary = ReplaySummary()
    misaligned = Counter()
    mismatches = []
    for replay in replay_paths([folder]):
        summary.add(replay)
        if replay.misaligned:
            misaligned[Path(replay.source).name] += 1
            continue
        place = (replay.source, replay.record, replay.run)
        mismatches += [(*place, mismatch) for mismatch in replay.mismatches()]
        if not replay.database_matches:
            mismatches.append((*place, "final database"))
    (total,) = summary.rows()
    assert total["tool_outputs"] > 9000 and total["runs"] > 2000
    # The runs set aside are exactly those the published data lists as misaligned, file by file.
    with (shared_dir / "sopbench" / "misaligned_files.csv").open() as handle:
        listed = {
            f"{row['file']}.gz": int(row["misaligned_interactions"])
            for row in csv.DictReader(handle)
            if row["domain"] == "university" and (folder / f"{row['file']}.gz").exists()
        }
    assert dict(misaligned) == listed
    assert mismatches == []
    assert total["tool_outputs_matching"] == total["tool_outputs"]
    assert total["final_databases_matching"] == total["runs"]
