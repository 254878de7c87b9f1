"""The library domain: tools, checks, session, database model, and the published data.

Unit tests run on a small database of our own. Tests that need the published tasks, tables or
trajectories read them from ``../shared`` and are skipped when it is absent.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from sopbench.constraints import Expr, parse, singles
from sopbench.domains import (
    SESSION_BEFORE_CREDENTIALS,
    LenientSystem,
    StrictSystem,
    get_domain,
    tool_not_found,
)
from sopbench.domains.library import DOMAIN, LibraryDatabase
from sopbench.domains.library.tools import human_to_iso, iso_to_human

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TASKS_FILE = SHARED / "sopbench" / "tasks" / "library_tasks.json.gz"
TABLES_FILE = SHARED / "reference" / "SOPBENCH_DOMAIN_TABLES.json"
TRAJECTORIES = SHARED / "sopbench" / "trajectories" / "library"

needs_tasks = pytest.mark.skipif(not TASKS_FILE.exists(), reason="../shared/sopbench not found: published data needed")
needs_trajectories = pytest.mark.skipif(
    not TRAJECTORIES.is_dir(), reason="../shared/sopbench not found: published data needed"
)


def make_db() -> dict[str, Any]:
    """A small library: ada (member, one overdue loan), ben (no membership, 2 late returns), cleo (admin)."""
    return {
        "interaction_date": "March 3rd, 2025",
        "accounts": {
            "ada": {
                "password": "pw-ada",
                "admin": False,
                "balance": 12,
                "membership": "March 3rd, 2025",
                "borrowed": {"BK0001": "March 1st, 2025"},
                "late_book_count": 0,
                "room_reservation": {"R1": {"March 4th, 2025": ["09:00"]}},
            },
            "ben": {
                "password": "pw-ben",
                "admin": False,
                "balance": 6,
                "membership": None,
                "borrowed": {},
                "late_book_count": 2,
                "room_reservation": {},
            },
            "cleo": {
                "password": "pw-cleo",
                "admin": True,
                "balance": 0,
                "membership": "March 2nd, 2025",
                "borrowed": {"BK0002": "March 17th, 2025"},
                "late_book_count": 0,
                "room_reservation": {},
            },
        },
        "books": {
            "BK0001": {"count": 0, "restricted": True},
            "BK0002": {"count": 4, "restricted": False},
            "BK0003": {"count": 1, "restricted": False},
        },
        "book_title_to_id": {"Middlemarch": "BK0001", "Moby-Dick": "BK0002", "Walden": "BK0003", "Ghost": ""},
        "late_fee_per_book": 2.5,
        "membership_monthly_fee": 4.0,
        "loan_period": 14,
        "rooms": {
            "R1": {"March 4th, 2025": ["09:00", "10:00", "11:00"], "March 5th, 2025": ["14:00"]},
            "R2": {"March 4th, 2025": ["15:00"]},
        },
    }


@pytest.fixture
def system() -> LenientSystem:
    return LenientSystem(DOMAIN, make_db(), atomic=False)


def run(system: LenientSystem, tool: str, **arguments: Any) -> str:
    return system.execute(tool, arguments, offered_only=False).content("tuple")


def holds(system: LenientSystem | StrictSystem, name: str, **arguments: Any) -> bool:
    single = ["single", name, {param: param for param in arguments}]
    return system.holds(parse(single), arguments)


# ---- the domain as a whole ---------------------------------------------------------------------
def test_domain_is_registered_and_complete():
    assert get_domain("library") is DOMAIN
    assert DOMAIN.validate() == []
    assert set(DOMAIN.tools) == set(DOMAIN.catalogue.tools)
    assert not DOMAIN.tools["internal_get_interaction_date"].offered
    assert not DOMAIN.tools["internal_get_database"].offered
    assert len(DOMAIN.offered_tools()) == 31


def test_tool_signatures_are_the_published_ones():
    for name, published in DOMAIN.catalogue.tools.items():
        assert DOMAIN.tools[name].params == published.params, name


def _catalogue_constraint_names() -> set[str]:
    catalogue = DOMAIN.catalogue
    names: set[str] = set(catalogue.links) | {link.name for link in catalogue.links.values()}
    names |= {n for n in catalogue.processes}
    for table in (catalogue.innate, catalogue.required, catalogue.constraint_dependencies):
        names |= {s.name for expr in table.values() for s in singles(expr)}
    names |= {s.name for pool in catalogue.customizable.values() for expr in pool for s in singles(expr)}
    return names


def _usages() -> Iterator[Any]:
    catalogue = DOMAIN.catalogue
    exprs: list[Expr | None] = [*catalogue.innate.values(), *catalogue.required.values()]
    exprs += [*catalogue.constraint_dependencies.values()]
    exprs += [expr for pool in catalogue.customizable.values() for expr in pool]
    for expr in exprs:
        yield from singles(expr)


def test_every_constraint_has_a_positive_and_a_negative_wording():
    for name in _catalogue_constraint_names():
        wording = DOMAIN.wordings.get(name)
        assert wording is not None, name
        assert wording.positive and wording.negative and wording.positive != wording.negative, name
    for single in _usages():
        for negated in (False, True):
            text = DOMAIN.describe_single(type(single)(single.name, single.params, negated))
            assert "{" not in text and text.endswith("."), text
    limit = DOMAIN.describe_single(parse(["single", "within_borrow_limit", {"username": "member"}]), {"borrow_limit": 7})
    assert '"member"' in limit and "7" in limit


def test_offered_tools_have_valid_function_schemas():
    json_types = {"string", "number", "integer", "boolean", "array", "object"}
    for spec in DOMAIN.offered_tools():
        schema = spec.openai_schema()
        json.dumps(schema)
        assert schema["type"] == "function"
        function = schema["function"]
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", function["name"]) and function["name"] == spec.name
        assert isinstance(function["description"], str) and len(function["description"]) > 20
        parameters = function["parameters"]
        assert parameters["type"] == "object" and parameters["additionalProperties"] is False
        assert list(parameters["properties"]) == list(spec.params)
        assert set(parameters["required"]) <= set(parameters["properties"])
        if function["strict"]:  # OpenAI strict mode: every property required
            assert set(parameters["required"]) == set(parameters["properties"])
        for prop in parameters["properties"].values():
            assert prop["type"] in json_types
            if prop["type"] == "array":
                assert prop["items"]["type"] in json_types


# ---- tools ---------------------------------------------------------------------------------------
def test_login_user(system):
    assert run(system, "login_user", username="ada", password="pw-ada") == "True"
    assert run(system, "login_user", username="ada", password="wrong") == "False"
    assert run(system, "login_user", username="nobody", password="x") == "False"  # innate: no such user


def test_borrow_book_sets_due_date_and_takes_a_copy(system):
    assert run(system, "borrow_book", username="ben", book_title="Walden") == "True"
    assert system.db["accounts"]["ben"]["borrowed"] == {"BK0003": "March 17th, 2025"}
    assert system.db["books"]["BK0003"]["count"] == 0
    system.db["interaction_date"] = "December 25th, 2024"
    run(system, "borrow_book", username="ben", book_title="Moby-Dick")
    assert system.db["accounts"]["ben"]["borrowed"]["BK0002"] == "January 8th, 2025"


def test_borrow_unknown_title_keeps_the_published_partial_write(system):
    assert run(system, "borrow_book", username="ben", book_title="Nope") == "KeyError: None"
    assert None in system.db["accounts"]["ben"]["borrowed"]
    atomic = LenientSystem(DOMAIN, make_db())
    assert atomic.execute("borrow_book", {"username": "ben", "book_title": "Nope"}).content() == "KeyError: None"
    assert atomic.db == make_db()


def test_return_book_counts_late_returns_strictly_after_the_due_date(system):
    assert run(system, "return_book", username="ada", book_title="Middlemarch") == "True"
    assert system.db["accounts"]["ada"]["late_book_count"] == 1
    assert system.db["books"]["BK0001"]["count"] == 1
    assert system.db["accounts"]["ada"]["borrowed"] == {}
    system.db["interaction_date"] = "March 17th, 2025"  # the due date itself is on time
    run(system, "return_book", username="cleo", book_title="Moby-Dick")
    assert system.db["accounts"]["cleo"]["late_book_count"] == 0
    assert run(system, "return_book", username="ada", book_title="Walden") == "KeyError: 'BK0003'"


def test_check_return_date(system):
    assert run(system, "check_return_date", username="cleo", book_title="Moby-Dick") == "(True, 'March 17th, 2025')"
    assert system.execute("check_return_date", {"username": "cleo", "book_title": "Moby-Dick"}).content() == (
        "March 17th, 2025"
    )
    assert run(system, "check_return_date", username="ada", book_title="Walden") == "KeyError: 'BK0003'"
    assert run(system, "check_return_date", username="zoe", book_title="Walden") == "KeyError: 'zoe'"


def test_balance_credit_and_late_fee(system):
    assert run(system, "get_account_balance", username="ada") == "(True, 12)"
    assert run(system, "credit_balance", username="ada", amount=0) == "False"  # innate: amount > 0
    assert run(system, "credit_balance", username="ada", amount=-3) == "False"
    assert run(system, "credit_balance", username="ada", amount=2.5) == "True"
    assert system.db["accounts"]["ada"]["balance"] == 14.5
    assert run(system, "credit_balance", username="ada", amount="5") == (
        "TypeError: '>' not supported between instances of 'str' and 'int'"
    )
    assert run(system, "pay_late_fee", username="ben") == "True"
    assert system.db["accounts"]["ben"]["balance"] == 1.0
    assert system.db["accounts"]["ben"]["late_book_count"] == 2  # published: the count is not reset
    run(system, "pay_late_fee", username="ben")
    assert system.db["accounts"]["ben"]["balance"] == -4.0


def test_update_membership_extends_from_expiry_or_today(system):
    assert run(system, "update_membership", username="ada") == "(True, 'April 2nd, 2025')"
    assert system.db["accounts"]["ada"]["balance"] == 8.0
    assert run(system, "update_membership", username="ben") == "(True, 'April 2nd, 2025')"  # from today
    # A lapsed membership is extended from its old expiry, not from today (published behaviour).
    assert run(system, "update_membership", username="cleo") == "(True, 'April 1st, 2025')"
    assert system.db["accounts"]["cleo"]["balance"] == -4.0


def test_add_book_reproduces_published_ids_and_overwrites_known_titles(system):
    # The id the published code gave "The Great Gatsby" (seen in recorded final databases).
    assert run(system, "add_book", username="cleo", book_title="The Great Gatsby", count=2, restricted=False) == "True"
    assert system.db["book_title_to_id"]["The Great Gatsby"] == "HGOPTDP"
    assert system.db["books"]["HGOPTDP"] == {"count": 2, "restricted": False}
    run(system, "add_book", username="cleo", book_title="Walden", count=9, restricted=True)
    assert system.db["books"]["BK0003"] == {"count": 9, "restricted": True}
    assert run(system, "add_book", username="cleo", book_title="X", count=0, restricted=False) == "False"


def test_remove_book(system):
    assert run(system, "remove_book", username="cleo", book_title="Walden") == "True"
    assert "Walden" not in system.db["book_title_to_id"] and "BK0003" not in system.db["books"]
    assert run(system, "remove_book", username="cleo", book_title="Walden") == "False"  # innate


def test_show_available_books_and_rooms(system):
    assert run(system, "show_available_book", username="ben") == "(True, ['Moby-Dick', 'Walden'])"
    ok, rooms = system.invoke("show_available_rooms", {"username": "ben"})
    assert ok and rooms is system.db["rooms"]


def test_reserve_room(system):
    reserve = {"username": "ben", "room_id": "R1", "resv_date": "March 4th, 2025"}
    assert run(system, "reserve_room", **reserve, slots=["10:00", "12:00"]) == "True"
    assert system.db["accounts"]["ben"]["room_reservation"] == {"R1": {"March 4th, 2025": ["10:00", "12:00"]}}
    assert system.db["rooms"]["R1"]["March 4th, 2025"] == ["09:00", "11:00"]  # 12:00 was not free; kept anyway
    run(system, "reserve_room", **reserve, slots=["11:00"])
    assert system.db["accounts"]["ben"]["room_reservation"]["R1"]["March 4th, 2025"] == ["10:00", "12:00", "11:00"]
    # A second date of a room already held is dropped, but its slot is still taken (published behaviour);
    # the date disappears from the room with its last slot.
    run(system, "reserve_room", **{**reserve, "resv_date": "March 5th, 2025"}, slots=["14:00"])
    assert "March 5th, 2025" not in system.db["accounts"]["ben"]["room_reservation"]["R1"]
    assert "March 5th, 2025" not in system.db["rooms"]["R1"]
    assert run(system, "reserve_room", **{**reserve, "room_id": "R9"}, slots=["10:00"]) == "False"  # innate


def test_reserve_room_on_an_unknown_date_keeps_the_reservation(system):
    reserve = {"username": "ben", "room_id": "R2", "resv_date": "2025-03-04", "slots": ["15:00"]}
    assert run(system, "reserve_room", **reserve) == "KeyError: '2025-03-04'"
    assert system.db["accounts"]["ben"]["room_reservation"] == {"R2": {"2025-03-04": ["15:00"]}}


def test_reserved_slots_do_not_alias_the_arguments(system):
    slots = ["09:00"]
    system.invoke("reserve_room", {"username": "ben", "room_id": "R1", "resv_date": "March 4th, 2025", "slots": slots})
    slots.append("23:00")
    assert system.db["accounts"]["ben"]["room_reservation"]["R1"]["March 4th, 2025"] == ["09:00"]


def test_internal_readers(system):
    assert run(system, "internal_check_username_exist", username="ada") == "(True, True)"
    assert run(system, "internal_check_username_exist", username="Ada") == "(True, False)"
    assert run(system, "internal_convert_book_title_to_id", book_title="Nope") == "(True, None)"
    assert run(system, "internal_check_book_exist", book_title="Ghost") == "(True, False)"  # empty id
    assert run(system, "internal_check_book_available", book_title="Middlemarch") == "(True, False)"
    assert run(system, "internal_check_book_available", book_title="Nope") == "False"  # innate
    assert run(system, "internal_get_user_borrowed", username="cleo") == "(True, ['BK0002'])"
    assert run(system, "internal_get_user_borrowed", username="nobody") == "False"
    assert run(system, "internal_get_user_num_borrowed", username="ada") == "(True, 1)"
    assert run(system, "internal_calculate_late_fee", username="ben") == "(True, 5.0)"
    assert run(system, "internal_get_membership_fee") == "(True, 4.0)"
    assert run(system, "internal_is_restricted", book_title="Middlemarch") == "(True, True)"
    assert run(system, "internal_get_membership_status", username="ben") == "(True, None)"
    assert run(system, "internal_is_admin", username="cleo") == "(True, True)"
    assert run(system, "internal_get_num_reserved_slots", username="ada") == "(True, 1)"
    assert run(system, "internal_check_room_exist", room_id="R3") == "(True, False)"
    assert run(system, "internal_check_date_available_for_the_room", room_id="R2", resv_date="March 5th, 2025") == (
        "(True, False)"
    )
    slots_on = {"room_id": "R1", "resv_date": "March 4th, 2025"}
    assert run(system, "internal_all_slots_available_for_the_room_on_the_date", **slots_on, slots=[]) == "(True, True)"
    assert run(system, "internal_all_slots_available_for_the_room_on_the_date", **slots_on, slots=["09:00", "13:00"]) == (
        "(True, False)"
    )
    unknown_date = {**slots_on, "resv_date": "March 9th, 2025", "slots": ["09:00"]}
    assert run(system, "internal_all_slots_available_for_the_room_on_the_date", **unknown_date) == "False"
    assert run(system, "internal_get_interaction_date") == "(True, 'March 3rd, 2025')"


def test_date_conversions():
    assert human_to_iso("October 1st, 2024") == "2024-10-01"
    for iso, human in [("2024-10-11", "October 11th, 2024"), ("2024-10-12", "October 12th, 2024"),
                       ("2024-10-13", "October 13th, 2024"), ("2024-10-21", "October 21st, 2024"),
                       ("2024-10-22", "October 22nd, 2024"), ("2024-10-23", "October 23rd, 2024")]:
        assert iso_to_human(iso) == human
    system = LenientSystem(DOMAIN, make_db())
    assert run(system, "internal_convert_human_date_to_iso", date_string="2024-10-10") == (
        "ValueError: Invalid date format: 2024-10-10"
    )
    assert run(system, "internal_convert_iso_to_human_date", iso_date="October 10th, 2024") == (
        "ValueError: Invalid ISO date format: October 10th, 2024"
    )
    assert run(system, "internal_convert_iso_to_human_date", iso_date=20241010).startswith("TypeError: strptime()")


@given(st.dates(min_value=dt.date(1000, 1, 1), max_value=dt.date(9999, 12, 31)))
def test_dates_round_trip(day: dt.date):
    assert human_to_iso(iso_to_human(day.isoformat())) == day.isoformat()


# ---- constraint checks -----------------------------------------------------------------------------
def test_checks_at_their_boundaries(system):
    assert holds(system, "within_borrow_limit", username="ada")  # 1 < 2
    system.parameters["borrow_limit"] = 1
    assert not holds(system, "within_borrow_limit", username="ada")  # 1 < 1 fails
    assert holds(system, "within_max_reservation_slots", username="ada", slots=["a", "b"])  # 1 + 2 <= 3
    assert not holds(system, "within_max_reservation_slots", username="ada", slots=["a", "b", "c"])
    system.db["accounts"]["ben"]["balance"] = 5.0
    assert holds(system, "sufficient_account_balance_for_late_fee", username="ben")  # 5.0 >= 2 * 2.5
    system.db["accounts"]["ben"]["balance"] = 4.99
    assert not holds(system, "sufficient_account_balance_for_late_fee", username="ben")
    assert holds(system, "sufficient_account_balance_for_membership", username="ben")  # 4.99 >= 4.0
    assert not holds(system, "amount_positive_restr", amount=0)
    assert holds(system, "amount_positive_restr", amount=0.01)


def test_valid_membership(system):
    assert holds(system, "valid_membership", username="ada")  # expires today
    assert not holds(system, "valid_membership", username="cleo")  # expired yesterday
    assert not holds(system, "valid_membership", username="ben")  # never a member


def test_loan_checks(system):
    assert holds(system, "user_book_borrowed", username="ada", book_title="Middlemarch")
    assert holds(system, "user_book_not_borrowed", username="ada", book_title="Walden")
    assert not holds(system, "database_book_not_borrowed", book_title="Moby-Dick")
    assert holds(system, "database_book_not_borrowed", book_title="Walden")
    # As published: the reader's innate failure (False) is indexed, which raises.
    with pytest.raises(TypeError, match="'bool' object is not subscriptable"):
        holds(system, "user_book_borrowed", username="nobody", book_title="Walden")


def test_session_effects_in_the_strict_oracle():
    oracle = StrictSystem(DOMAIN, make_db(), None, DOMAIN.catalogue.required)
    borrow = {"username": "ben", "book_title": "Walden"}
    assert oracle.execute("borrow_book", borrow).raw is False  # not logged in: refused
    assert oracle.db == make_db()
    assert not oracle.execute("login_user", {"username": "ben", "password": "nope"}).ok
    assert not holds(oracle, "logged_in_user", username="ben")  # a wrong password does not log in
    assert oracle.execute("login_user", {"username": "ben", "password": "pw-ben"}).ok
    assert holds(oracle, "logged_in_user", username="ben") and not holds(oracle, "logged_in_user", username="ada")
    assert oracle.execute("borrow_book", borrow).ok
    assert oracle.execute("logout_user", {"username": "ben"}).ok
    assert oracle.session == {"user": None}
    quirky = StrictSystem(DOMAIN, make_db(), None, DOMAIN.catalogue.required,
                          quirks=frozenset({SESSION_BEFORE_CREDENTIALS}))
    quirky.execute("login_user", {"username": "ben", "password": "nope"})
    assert holds(quirky, "logged_in_user", username="ben")
    # The lenient system never logs anyone in.
    lenient = LenientSystem(DOMAIN, make_db())
    lenient.execute("login_user", {"username": "ben", "password": "pw-ben"})
    assert not holds(lenient, "logged_in_user", username="ben")


# ---- bad input from a model ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("fly_to_moon", "{}", "Error: Tool fly_to_moon not found."),
        ("internal_get_interaction_date", "{}", "Error: Tool internal_get_interaction_date not found."),
        ("internal_get_database", "{}", "Error: Tool internal_get_database not found."),
        ("login_user", '{"username": "ada"}',
         "TypeError: Library.login_user() missing 1 required positional argument: 'password'"),
        ("borrow_book", '{"username": "ada", "book_title": "Walden", "copies": 2}',
         "TypeError: Library.borrow_book() got an unexpected keyword argument 'copies'"),
        ("add_book", '{"username": "cleo", "book_title": "Y", "count": "3", "restricted": false}',
         "TypeError: '>' not supported between instances of 'str' and 'int'"),
        ("check_return_date", '{"username": ["ada"], "book_title": "Walden"}', "TypeError: unhashable type: 'list'"),
        ("credit_balance", '{"username": "ada", "amount": 5', "Error: arguments of credit_balance are not valid JSON"),
        ("credit_balance", '[1, 2]', "Error: arguments of credit_balance must be a JSON object, got list."),
    ],
)
def test_bad_calls_become_error_text_and_change_nothing(tool, arguments, expected):
    system = LenientSystem(DOMAIN, make_db())
    outcome = system.execute(tool, arguments)
    assert outcome.content().startswith(expected)
    assert not outcome.ok
    assert system.db == make_db()


def test_a_megabyte_argument_is_handled():
    system = LenientSystem(DOMAIN, make_db())
    huge = "x" * 1_000_000
    assert system.execute("get_account_balance", json.dumps({"username": huge})).content().startswith("KeyError: 'xxx")
    assert system.execute("reserve_room", {"username": "ada", "room_id": "R1", "resv_date": huge, "slots": []}).error
    assert system.db == make_db()


# ---- the database model --------------------------------------------------------------------------
def test_database_model_accepts_a_good_database_and_names_what_is_broken():
    LibraryDatabase.model_validate(make_db())
    broken = make_db()
    broken["accounts"] = ["ada", "ben"]
    with pytest.raises(ValidationError, match=r"accounts\n  Input should be a valid dictionary"):
        LibraryDatabase.model_validate(broken)
    broken = make_db()
    broken["accounts"]["ben"]["balance"] = "6"
    with pytest.raises(ValidationError, match=r"accounts\.ben\.balance"):
        LibraryDatabase.model_validate(broken)
    broken = make_db()
    del broken["books"]["BK0002"]["restricted"]
    with pytest.raises(ValidationError, match=r"books\.BK0002\.restricted\n  Field required"):
        LibraryDatabase.model_validate(broken)
    broken = make_db()
    broken["room"] = broken.pop("rooms")
    with pytest.raises(ValidationError, match="rooms\n  Field required"):
        LibraryDatabase.model_validate(broken)


def _read_json_gz(path: Path) -> Any:
    return json.loads(gzip.decompress(path.read_bytes()))


def _published_tasks() -> Iterator[tuple[str, dict[str, Any]]]:
    for goal, tasks in _read_json_gz(TASKS_FILE).items():
        for task in tasks:
            yield goal, task


@needs_tasks
def test_every_published_database_validates():
    count = 0
    for _, task in _published_tasks():
        LibraryDatabase.model_validate(task["initial_database"])
        count += 1
    for path in sorted(TRAJECTORIES.glob("*.json.gz")):
        for record in _read_json_gz(path) or []:
            LibraryDatabase.model_validate(record["task"]["initial_database"])
            count += 1
    assert count >= 78


@needs_tasks
def test_checks_and_wordings_cover_the_published_state_tracker_and_descriptions():
    table = json.loads(TABLES_FILE.read_text())["library"]
    tracker = {m for m in table["state_tracker_methods"] if not m.startswith("set_")}
    assert set(DOMAIN.checks) == tracker
    assert set(table["constraint_names_with_descriptions"]) <= set(DOMAIN.wordings)


# ---- reference paths: every published task's verdict through our strict oracle ----------------------
def _published_defaults() -> dict[str, Expr | None]:
    table = json.loads(TABLES_FILE.read_text())["library"]["derived_default_dependency_full_expanded"]
    return {action: parse(expr) for action, expr in table.items()}


def _required_actions(constraints: Expr | None, known: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Linked tools (login_user) whose constraints occur, in order of first occurrence."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for single in singles(constraints):
        link = DOMAIN.catalogue.links.get(single.name)
        if link is None:
            continue
        link_map, outer = link.param_map, single.param_map
        args = {}
        for param in DOMAIN.catalogue.tools[link.name].params:
            var = outer.get(link_map[param], link_map[param]) if param in link_map else param
            if var in known:
                args[param] = known[var]
        if (link.name, args) not in calls:
            calls.append((link.name, args))
    return calls


def _reference_outcome(goal: str, task: dict[str, Any], defaults: dict[str, Expr | None]) -> bool:
    constraints = parse(task["constraints"])
    oracle = StrictSystem(DOMAIN, task["initial_database"], task["constraint_parameters"],
                          {**defaults, goal: constraints})
    known = task["user_known"]
    for tool, args in _required_actions(constraints, known):
        if not oracle.execute(tool, args).ok:
            return False
    args = {p: known[p] for p in DOMAIN.catalogue.tools[goal].params if p in known}
    return oracle.execute(goal, args).ok


@needs_tasks
def test_reference_paths_reproduce_every_published_verdict():
    defaults = _published_defaults()
    wrong = [
        (goal, task["user_prompt"][:60])
        for goal, task in _published_tasks()
        if _reference_outcome(goal, task, defaults) != bool(task["action_should_succeed"])
    ]
    assert wrong == []
    assert sum(1 for _ in _published_tasks()) == 78


# ---- replay of the recorded trajectories -------------------------------------------------------------
NOT_A_CALL = {"none", "n/a"}


def _output_format(records: list[dict[str, Any]]) -> str:
    for record in records:
        for run_ in record.get("interactions") or []:
            for message in run_["interaction"]:
                if "tool_call_id" in message and message["content"].startswith(("(True,", "(False,")):
                    return "tuple"
    return "value"


def _offered(record: dict[str, Any]) -> set[str]:
    offered = {spec.name for spec in DOMAIN.offered_tools()}
    if record["setup"]["tool_list"] == "full":
        return offered
    nodes = record["task"]["directed_action_graph"]["nodes"]
    return offered & {node[0] for node in nodes if isinstance(node, list)}


def _belongs_to_its_task(record: dict[str, Any], run_: dict[str, Any]) -> bool:
    first = next((m for m in run_["interaction"] if m.get("sender") == "user"), None)
    return first is not None and (first.get("content") or "").startswith(record["task"]["user_prompt"])


def _replay(record, run_, fmt) -> tuple[list[tuple[str, str, str]], bool]:
    task, offered = record["task"], _offered(record)
    system = LenientSystem(DOMAIN, task["initial_database"], task["constraint_parameters"], atomic=False)
    compared: list[tuple[str, str, str]] = []
    answers = iter(run_["interaction"])
    for message in answers:
        calls = [c for c in message.get("tool_calls") or [] if c["function"]["name"].lower() not in NOT_A_CALL]
        if not calls:
            continue
        if any(c["function"]["name"] == "exit_conversation" for c in calls):
            break
        for call in calls:
            answer = next(answers)
            assert answer["tool_call_id"] == call["id"]
            name = call["function"]["name"]
            if name in offered:
                outcome = system.execute(name, call["function"]["arguments"], offered_only=False)
            else:
                outcome = tool_not_found(name)
            compared.append((name, answer["content"], outcome.content(fmt)))
    return compared, system.db == run_["database"]


@needs_trajectories
def test_replay_reproduces_recorded_tool_outputs_and_databases():
    calls = Counter()
    databases = Counter()
    residual = Counter()
    for path in sorted(TRAJECTORIES.glob("*.json.gz")):
        records = _read_json_gz(path) or []
        fmt = _output_format(records)
        for record in records:
            for run_ in record.get("interactions") or []:
                if not _belongs_to_its_task(record, run_):
                    databases["misaligned"] += 1
                    continue
                compared, same_db = _replay(record, run_, fmt)
                databases[same_db] += 1
                for name, recorded, ours in compared:
                    calls[recorded == ours] += 1
                    if recorded != ours:
                        residual[(name, recorded[:9], ours)] += 1
    assert calls[True] / (calls[True] + calls[False]) >= 0.998, (calls, residual)
    assert databases[True] / (databases[True] + databases[False]) >= 0.997, databases
    # The only differences: older runs that were still offered internal_get_database.
    not_offered = ("internal_get_database", "(True, {'", "Error: Tool internal_get_database not found.")
    assert set(residual) <= {not_offered}, residual
