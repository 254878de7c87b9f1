"""The university domain: tools, checks, session, database model, reference paths and replay."""

from __future__ import annotations

import copy
import csv
import gzip
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pydantic
import pytest

from sopbench.constraints import Expr, Single, parse, singles
from sopbench.domains import (
    SESSION_BEFORE_CREDENTIALS,
    Domain,
    LenientSystem,
    StrictSystem,
    get_domain,
    tool_not_found,
)
from sopbench.domains.university import EMPTY_MAJOR_RESTRICTION_IS_OPEN

DOMAIN = get_domain("university")

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TASKS = SHARED / "sopbench" / "tasks" / "university_tasks.json.gz"
TRAJECTORIES = SHARED / "sopbench" / "trajectories" / "university"
TABLES = SHARED / "reference" / "SOPBENCH_DOMAIN_TABLES.json"
MISALIGNED = SHARED / "sopbench" / "misaligned_files.csv"
needs_tasks = pytest.mark.skipif(
    not TASKS.exists(), reason="../shared/sopbench not found: published data needed"
)

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


# ---- reference paths -----------------------------------------------------------------------------
def load_tasks() -> dict[str, list[dict[str, Any]]]:
    return json.loads(gzip.decompress(TASKS.read_bytes()))


def published_default_dependencies() -> dict[str, Expr | None]:
    table = json.loads(TABLES.read_text())["university"]["derived_default_dependency_full_expanded"]
    return {tool: parse(expr, f"default[{tool}]") for tool, expr in table.items()}


def _linked_calls(
    domain: Domain, constraints: Expr | None, known: Mapping[str, Any]
) -> Iterator[tuple[str, dict]]:
    """The tool calls that make the task's state constraints true, in order of first occurrence."""
    seen: set[str] = set()
    for single in singles(constraints):
        link = domain.catalogue.links.get(single.name)
        if link is None or single.name in seen:
            continue
        seen.add(single.name)
        arguments = {}
        for param in domain.catalogue.tools[link.name].params:
            variable = link.param_map.get(param, param)
            variable = single.param_map.get(variable, variable)
            if variable in known:
                arguments[param] = known[variable]
        yield link.name, arguments


def reference_outcome(
    domain: Domain, goal: str, task: Mapping[str, Any], defaults: Mapping[str, Expr | None]
) -> bool:
    """Whether the goal succeeds on the oracle after the required actions (stopping at a failed one)."""
    constraints = parse(task["constraints"])
    dependencies = {**defaults, goal: constraints}
    oracle = StrictSystem(domain, task["initial_database"], task["constraint_parameters"], dependencies)
    known = task["user_known"]
    for tool, arguments in _linked_calls(domain, constraints, known):
        if not oracle.execute(tool, arguments).ok:
            return False
    arguments = {p: known[p] for p in domain.catalogue.tools[goal].params if p in known}
    return oracle.execute(goal, arguments).ok


# ---- replay of recorded trajectories -------------------------------------------------------------
@dataclass
class RunReplay:
    calls: list[tuple[str, str, str, str]] = field(default_factory=list)  # name, arguments, recorded, ours
    database_matches: bool = False

    @property
    def perfect(self) -> bool:
        return self.database_matches and all(recorded == ours for _, _, recorded, ours in self.calls)


def _offered(domain: Domain, setup: Mapping[str, Any], task: Mapping[str, Any]) -> set[str]:
    if setup["tool_list"] == "full":
        return {spec.name for spec in domain.offered_tools()}
    return {node[0] for node in task["directed_action_graph"]["nodes"] if isinstance(node, list)}


def replay_run(
    domain: Domain, task: Mapping[str, Any], setup: Mapping[str, Any], run: Mapping[str, Any]
) -> RunReplay:
    messages = run["interaction"]
    system = LenientSystem(domain, task["initial_database"], task["constraint_parameters"], atomic=False)
    offered = _offered(domain, setup, task)
    replies = {m["tool_call_id"]: m for m in messages if "tool_call_id" in m}
    old_format = any(m["content"].startswith(("(True", "(False")) for m in replies.values())
    output_format = "tuple" if old_format else "value"
    result = RunReplay()
    for message in messages:
        calls = message.get("tool_calls") or []
        if any(call["function"]["name"] == "exit_conversation" for call in calls):
            break  # nothing in the closing message is executed
        for call in calls:
            reply = replies.get(call["id"])
            if reply is None:
                continue
            name, arguments = call["function"]["name"], call["function"]["arguments"]
            outcome = (
                system.execute(name, arguments, offered_only=False)
                if name in offered
                else tool_not_found(name)
            )
            result.calls.append((name, arguments, reply["content"], outcome.content(output_format)))
    result.database_matches = system.db == run["database"]
    return result


def _first_user_message(run: Mapping[str, Any]) -> str:
    return next((m.get("content") or "" for m in run["interaction"] if m.get("sender") == "user"), "")


@dataclass
class ReplayFigures:
    calls: int = 0
    calls_matching: int = 0
    runs: int = 0
    databases_matching: int = 0
    misaligned: dict[str, int] = field(default_factory=dict)
    mismatches: list[tuple] = field(default_factory=list)


def replay_all(domain: Domain) -> ReplayFigures:
    """Replay every recorded run; runs whose conversation belongs to another task are set aside.

    A run is misaligned when its first user message is not its task's prompt, or when it does not
    reproduce on its own task but reproduces exactly on another task of the same file that has the
    same prompt (several tasks of a goal share one prompt, so the prompt alone cannot tell).
    """
    figures = ReplayFigures()
    for path in sorted(TRAJECTORIES.glob("*.json.gz")):
        records = json.loads(gzip.decompress(path.read_bytes())) or []
        for index, record in enumerate(records):
            task = record["task"]
            for run_index, run in enumerate(record.get("interactions") or []):
                opening = _first_user_message(run)
                replay = (
                    replay_run(domain, task, record["setup"], run)
                    if opening.startswith(task["user_prompt"])
                    else None
                )
                if replay is not None and not replay.perfect:
                    others = [
                        r["task"]
                        for r in records
                        if r["task"] != task and opening.startswith(r["task"]["user_prompt"])
                    ]
                    if any(replay_run(domain, other, record["setup"], run).perfect for other in others):
                        replay = None
                if replay is None:
                    figures.misaligned[path.name] = figures.misaligned.get(path.name, 0) + 1
                    continue
                figures.runs += 1
                figures.databases_matching += replay.database_matches
                figures.calls += len(replay.calls)
                for name, arguments, recorded, ours in replay.calls:
                    if recorded == ours:
                        figures.calls_matching += 1
                    else:
                        figures.mismatches.append(
                            (path.name, index, run_index, name, arguments, recorded, ours)
                        )
                if not replay.database_matches:
                    figures.mismatches.append((path.name, index, run_index, "final database"))
    return figures


def lenient(database=None, **parameters) -> LenientSystem:
    return LenientSystem(DOMAIN, database or sample_database(), parameters or None)


def check(name: str, system: LenientSystem | StrictSystem | None = None, **arguments) -> bool:
    system = system or lenient()
    return DOMAIN.checks[name](system.ctx, **arguments)


# ---- the domain as a whole -----------------------------------------------------------------------
def test_domain_is_complete_and_consistent():
    assert DOMAIN.validate() == []
    assert set(DOMAIN.tools) == set(DOMAIN.catalogue.tools)
    assert DOMAIN.system_name == "University"


def test_every_catalogue_constraint_has_both_wordings():
    names = set(DOMAIN.checks) | set(DOMAIN.catalogue.links)
    for table in (
        DOMAIN.catalogue.innate,
        DOMAIN.catalogue.required,
        DOMAIN.catalogue.constraint_dependencies,
    ):
        names |= {s.name for expr in table.values() for s in _singles(expr)}
    names |= {
        s.name for pool in DOMAIN.catalogue.customizable.values() for expr in pool for s in _singles(expr)
    }
    names |= {link.name for link in DOMAIN.catalogue.links.values()}
    for name in names:
        wording = DOMAIN.wordings[name]
        assert wording.positive and wording.negative and wording.positive != wording.negative, name


def _singles(expr):
    return list(singles(expr))


def test_wording_is_filled_with_variable_names_and_parameters():
    text = DOMAIN.describe_single(Single.of("credits_within_limit", {"username": "who", "course_code": "c"}))
    assert "who" in text and "c" in text and "18" in text
    negated = DOMAIN.describe_single(Single.of("not under_max_minors", {"username": "u"}), {"max_minors": 4})
    assert "4" in negated and "already" in negated


_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}


@pytest.mark.parametrize("spec", DOMAIN.offered_tools(), ids=lambda s: s.name)
def test_offered_tool_schema_is_a_valid_function_schema(spec):
    schema = spec.openai_schema()
    assert schema["type"] == "function"
    function = schema["function"]
    assert _NAME.match(function["name"]) and function["name"] == spec.name
    assert isinstance(function["description"], str) and len(function["description"]) > 10
    parameters = function["parameters"]
    assert parameters["type"] == "object" and parameters["additionalProperties"] is False
    assert set(parameters["properties"]) == set(spec.params)
    assert all(p["type"] in _JSON_TYPES for p in parameters["properties"].values())
    assert set(parameters["required"]) <= set(parameters["properties"])
    if function["strict"]:
        assert set(parameters["required"]) == set(parameters["properties"])
    orjson.dumps(schema)  # serialisable as sent to a model


def test_the_full_database_reader_is_not_offered():
    assert "internal_get_database" not in {s.name for s in DOMAIN.offered_tools()}
    assert len(DOMAIN.offered_tools()) == 19


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
@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("hack_grades", {}, "Error: Tool hack_grades not found."),
        ("internal_get_database", {}, "Error: Tool internal_get_database not found."),
        (
            "login_user",
            {"username": "dana"},
            "TypeError: University.login_user() missing 1 required positional argument: 'password'",
        ),
        (
            "enroll_course",
            {"username": "dana", "course_code": "BIO110", "password": "pw"},
            "TypeError: University.enroll_course() got an unexpected keyword argument 'password'",
        ),
        (
            "enroll_course",
            {"username": "dana", "course_code": ["BIO110"]},
            "TypeError: unhashable type: 'list'",
        ),
        ("login_user", {"username": 7, "password": "x"}, "False"),
        ("login_user", '{"username": "dana", ', None),
        ("login_user", "[1, 2]", None),
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


@needs_tasks
def test_every_published_task_database_validates():
    tasks = load_tasks()
    count = 0
    for items in tasks.values():
        for task in items:
            DOMAIN.database_model.model_validate(task["initial_database"])
            count += 1
    assert count == 44


# ---- published data ------------------------------------------------------------------------------
@needs_tasks
@pytest.mark.skipif(not TABLES.exists(), reason="../shared/reference not found: published tables needed")
def test_reference_paths_reach_the_published_outcome():
    defaults = published_default_dependencies()
    outcomes = [
        (goal, i, reference_outcome(DOMAIN, goal, task, defaults), bool(task["action_should_succeed"]))
        for goal, items in load_tasks().items()
        for i, task in enumerate(items)
    ]
    wrong = [o for o in outcomes if o[2] != o[3]]
    assert len(outcomes) == 44 and wrong == []


@pytest.mark.skipif(not TRAJECTORIES.exists(), reason="../shared/sopbench not found: published data needed")
def test_recorded_trajectories_replay_exactly():
    figures = replay_all(DOMAIN)
    assert figures.calls > 9000 and figures.runs > 2000
    # The runs set aside are exactly those the published data lists as misaligned, file by file.
    listed = {
        f"{row['file']}.gz": int(row["misaligned_interactions"])
        for row in csv.DictReader(MISALIGNED.open())
        if row["domain"] == "university" and (TRAJECTORIES / f"{row['file']}.gz").exists()
    }
    assert figures.misaligned == listed
    assert figures.mismatches == []
    assert figures.calls_matching == figures.calls and figures.databases_matching == figures.runs
