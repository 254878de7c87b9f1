"""The DMV domain: tools, checks, session effects, database model, and fidelity to the published runs.

Unit tests use a small database written here. What every domain must satisfy (catalogue, wordings,
schemas, calls that never reach a tool, task databases) is checked in test_all_domains.py, and every
task's reference path in test_reference_paths.py; the replay of the recorded DMV trajectories here
reads them from ``../shared`` and is skipped when they are absent.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pydantic
import pytest

from sopbench.constraints import Expr, Single
from sopbench.domains import SESSION_BEFORE_CREDENTIALS, LenientSystem, StrictSystem
from sopbench.domains.dmv import DOMAIN, LICENCE_NUMBER_OPTION, DMVDatabase
from sopbench.domains.dmv.tools import licence_number
from sopbench.replay import ReplaySummary, replay_paths


# ---- a small database of our own ---------------------------------------------------------------------
def _tests(
    knowledge: str = "passed", drive: str = "not scheduled", drive_time: str | None = None, attempts: int = 0
):
    return {
        "knowledge": {"status": knowledge, "scheduled_time": None, "attempts": 1},
        "drive": {"status": drive, "scheduled_time": drive_time, "attempts": attempts},
    }


def make_db() -> dict[str, Any]:
    return {
        "accounts": {
            "alice": {
                "identification": "id-alice",
                "admin_password": "adm-alice",
                "birthday": "2008-03-10",
                "address": "1 Main St",
                "vehicles": {
                    "AAA111": {
                        "model": "Fiat Panda",
                        "vin": "vin-a",
                        "reg_date": "2025-05-10",
                        "address": "1 Main St",
                        "insurance_status": "expired",
                    }
                },
                "driver_license": {
                    "dl_number": "D0000000001",
                    "legal_name": "Alice A",
                    "exp_date": "2025-09-07",
                    "address": "1 Main St",
                },
                "tests": _tests(drive="scheduled", drive_time="2025-03-10T12:00:01", attempts=3),
            },
            "bob": {
                "identification": "id-bob",
                "admin_password": "adm-bob",
                "birthday": "2004-02-29",
                "address": "2 Side St",
                "vehicles": {},
                "driver_license": None,
                "tests": _tests(drive="scheduled", drive_time="2025-03-10T12:00:00", attempts=1),
            },
        },
        "test_slots": {
            "knowledge": ["2025-03-20T09:00:00"],
            "drive": ["2025-03-21T14:00:00", "2025-03-22T14:00:00"],
        },
        "interaction_time": "2025-03-10T12:00:00",
    }


def lenient(db: dict[str, Any] | None = None, **parameters: Any) -> LenientSystem:
    return LenientSystem(DOMAIN, db or make_db(), parameters or None)


def call(system: LenientSystem, tool: str, **arguments: Any) -> str:
    return system.execute(tool, arguments).content("tuple")


# ---- wordings ----------------------------------------------------------------------------------------
def test_wordings_fill_variable_names_and_parameter_values():
    single = Single.of("within_attempt_limit", {"username": "applicant", "test_type": "kind"})
    text = DOMAIN.describe_single(single, {"attempt_limit": 4})
    assert "applicant" in text and "kind" in text and "4" in text and "{" not in text
    negated = DOMAIN.describe_single(Single.of("not internal_has_dl", {"username": "owner"}))
    assert "owner" in negated and negated == DOMAIN.wordings["internal_has_dl"].negative.format(
        username="owner"
    )


# ---- tools ---------------------------------------------------------------------------------------------
def test_login_compares_identification_and_checks_the_user_first():
    system = lenient()
    assert call(system, "login_user", username="alice", identification="id-alice") == "True"
    assert call(system, "login_user", username="alice", identification="id-bob") == "False"
    assert call(system, "login_user", username="carol", identification="x") == "False"  # innate check
    assert call(system, "logout_user", username="carol") == "True"


def test_argument_errors_read_like_the_published_system():
    system = lenient()
    assert call(system, "login_user", username="alice") == (
        "TypeError: DMV.login_user() missing 1 required positional argument: 'identification'"
    )
    assert call(system, "get_dl_status", username="alice", colour="red") == (
        "TypeError: DMV.get_dl_status() got an unexpected keyword argument 'colour'"
    )


def test_readers_return_pairs_and_raise_on_missing_records():
    system = lenient()
    assert call(system, "get_reg_status", username="alice", plate_num="AAA111") == "(True, '2025-05-10')"
    assert (
        system.execute("get_reg_status", {"username": "alice", "plate_num": "AAA111"}).content()
        == "2025-05-10"
    )
    assert call(system, "get_reg_status", username="carol", plate_num="AAA111") == "KeyError: 'carol'"
    assert (
        call(system, "get_dl_status", username="bob") == "TypeError: 'NoneType' object is not subscriptable"
    )
    assert call(system, "internal_get_vehicle_details", username="bob", plate_num="AAA111") == "False"
    assert call(system, "internal_get_dl_details", username="carol") == "False"
    assert call(system, "internal_vehicle_registered", plate_num="AAA111") == "(True, True)"
    assert call(system, "internal_vehicle_registered", plate_num="ZZZ999") == "(True, False)"
    assert call(
        system, "internal_check_test_slot_available", test_type="drive", schedule_time="2025-03-21T14:00:00"
    ) == ("(True, True)")
    assert call(system, "internal_check_test_slot_available", test_type="road", schedule_time="x") == "False"


def test_register_vehicle_uses_today_and_the_account_address():
    system = lenient()
    assert (
        call(system, "register_vehicle", username="bob", plate_num="BBB222", model="Kia", vin="v-b") == "True"
    )
    assert system.db["accounts"]["bob"]["vehicles"]["BBB222"] == {
        "model": "Kia",
        "vin": "v-b",
        "reg_date": "2025-03-10",
        "address": "2 Side St",
        "insurance_status": "expired",
    }


def test_renewals_add_a_year_to_the_vehicle_and_five_to_the_licence():
    system = lenient()
    assert call(system, "renew_vehicle", username="alice", plate_num="AAA111") == "(True, '2026-05-10')"
    assert call(system, "renew_dl", username="alice") == "(True, '2030-09-07')"
    system.db["accounts"]["alice"]["driver_license"]["exp_date"] = "2028-02-29"
    assert call(system, "renew_dl", username="alice") == "ValueError: day is out of range for month"


def test_test_booking_keeps_the_slot_and_counts_attempts():
    system = lenient()
    slot = "2025-03-20T09:00:00"
    assert (
        call(system, "schedule_test", username="alice", test_type="knowledge", schedule_time=slot) == "True"
    )
    knowledge = system.db["accounts"]["alice"]["tests"]["knowledge"]
    assert knowledge == {"status": "scheduled", "scheduled_time": slot, "attempts": 2}
    assert slot in system.db["test_slots"]["knowledge"]
    assert call(system, "cancel_test", username="alice", test_type="knowledge") == "True"
    assert knowledge == {"status": "not scheduled", "scheduled_time": None, "attempts": 1}
    assert call(system, "schedule_test", username="alice", test_type="road", schedule_time=slot) == "False"
    assert call(system, "show_available_test_slots", username="x", test_type="drive") == (
        "(True, ['2025-03-21T14:00:00', '2025-03-22T14:00:00'])"
    )


def test_passing_the_drive_test_issues_a_licence():
    system = lenient()
    assert call(system, "update_test_status", username="alice", test_type="drive", passed=True) == "True"
    account = system.db["accounts"]["alice"]
    assert account["tests"]["drive"] == {"status": "passed", "scheduled_time": None, "attempts": 3}
    licence = account["driver_license"]
    assert list(licence) == ["dl_number", "legal_name", "exp_date", "address"]
    assert licence["legal_name"] == "alice"  # no legal name given: the username
    assert licence["exp_date"] == "2030-03-10"  # this year's birthday + 5 years
    assert licence["dl_number"] == licence_number("alice")
    assert len(licence["dl_number"]) == 11 and licence["dl_number"][0] == "D"


def test_failing_a_test_unschedules_it_without_a_licence():
    system = lenient()
    assert (
        call(system, "update_test_status", username="bob", test_type="drive", passed=False, legal_name="B")
        == "True"
    )
    assert system.db["accounts"]["bob"]["tests"]["drive"]["status"] == "not scheduled"
    assert system.db["accounts"]["bob"]["driver_license"] is None


def test_a_leap_day_birthday_fails_after_the_status_was_written():
    arguments = {"username": "bob", "test_type": "drive", "passed": True}
    partial = LenientSystem(DOMAIN, make_db(), atomic=False)
    assert (
        partial.execute("update_test_status", arguments).content()
        == "ValueError: day is out of range for month"
    )
    assert partial.db["accounts"]["bob"]["tests"]["drive"]["status"] == "passed"  # published partial write
    atomic = lenient()
    atomic.execute("update_test_status", arguments)
    assert atomic.db == make_db()


def test_transfer_to_an_unknown_owner_loses_the_vehicle_unless_atomic():
    arguments = {"username": "alice", "target_owner": "carol", "plate_num": "AAA111"}
    partial = LenientSystem(DOMAIN, make_db(), atomic=False)
    assert partial.execute("transfer_title", arguments).content() == "KeyError: 'carol'"
    assert partial.db["accounts"]["alice"]["vehicles"] == {}
    atomic = lenient()
    atomic.execute("transfer_title", arguments)
    assert atomic.db == make_db()
    assert call(atomic, "transfer_title", username="alice", target_owner="bob", plate_num="AAA111") == "True"
    assert "AAA111" in atomic.db["accounts"]["bob"]["vehicles"]


def test_licence_numbers_are_stable_across_processes():
    script = "from sopbench.domains.dmv.tools import licence_number as n; print(n('alice'), n('x'))"
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outputs.add(
            subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True).stdout
        )
    assert outputs == {f"{licence_number('alice')} {licence_number('x')}\n"}
    assert licence_number("alice", "python_hash") == f"D{abs(hash('alice')) % 10**10:10d}"
    with pytest.raises(ValueError, match="licence_number"):
        licence_number("alice", "sha1")


def test_the_licence_number_option_selects_python_hash():
    system = LenientSystem(DOMAIN, make_db(), options={LICENCE_NUMBER_OPTION: "python_hash"})
    system.execute("update_test_status", {"username": "alice", "test_type": "drive", "passed": True})
    assert system.db["accounts"]["alice"]["driver_license"]["dl_number"] == licence_number(
        "alice", "python_hash"
    )


def test_tools_marked_read_never_change_the_database():
    values = {
        "username": "alice",
        "target_owner": "bob",
        "plate_num": "AAA111",
        "test_type": "drive",
        "schedule_time": "2025-03-21T14:00:00",
        "identification": "id-alice",
        "admin_password": "adm-alice",
    }
    for spec in DOMAIN.tools.values():
        if DOMAIN.is_read_only(spec.name):
            system = lenient()
            outcome = system.execute(spec.name, {p: values[p] for p in spec.params}, offered_only=False)
            assert outcome.error is None, spec.name
            assert system.db == make_db(), spec.name


# ---- bad input from a model ----------------------------------------------------------------------------
# Unknown tools, arguments that are not a JSON object, missing or unexpected arguments: for every
# domain in test_all_domains.py.
@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "login_user",
            '{"username": ["alice"], "identification": "x"}',
            "TypeError: unhashable type: 'list'",
        ),
        ("renew_vehicle", '{"username": "alice", "plate_num": 42}', "KeyError: 42"),
        ("set_admin_password", '{"username": "carol", "admin_password_new": "p"}', "KeyError: 'carol'"),
        (
            "schedule_test",
            '{"username": "alice", "test_type": {}, "schedule_time": "t"}',
            "TypeError: unhashable type",
        ),
    ],
)
def test_bad_calls_return_error_text_and_leave_the_database_alone(tool, arguments, expected):
    system = lenient()
    outcome = system.execute(tool, arguments)
    assert not outcome.ok
    assert outcome.content().startswith(expected)
    assert system.db == make_db()


def test_a_huge_argument_is_handled():
    system = lenient()
    huge = "x" * 1_000_000
    outcome = system.execute("change_dl_address", json.dumps({"username": huge, "address_new": "y"}))
    assert outcome.content().startswith("KeyError: 'xxx")
    assert system.execute("login_user", {"username": "alice", "identification": huge}).content() == "False"
    assert system.db == make_db()


# ---- checks --------------------------------------------------------------------------------------------
def check(system: LenientSystem, name: str, **arguments: Any) -> bool:
    return DOMAIN.checks[name](system.ctx, **arguments)


def test_vehicle_renewal_window_includes_both_ends():
    db = make_db()
    vehicle = db["accounts"]["alice"]["vehicles"]["AAA111"]
    for reg_date, inside in [
        ("2025-06-08", True),  # exactly 90 days ahead
        ("2025-06-09", False),
        ("2025-03-10", True),  # due today
        ("2025-03-09", False),
    ]:
        vehicle["reg_date"] = reg_date
        assert (
            check(lenient(db), "within_vehicle_renewal_period", username="alice", plate_num="AAA111")
            is inside
        )
    vehicle["reg_date"] = "2025-06-09"
    assert check(
        lenient(db, vehicle_renewal_window="91"),
        "within_vehicle_renewal_period",
        username="alice",
        plate_num="AAA111",
    )


def test_licence_renewal_window_uses_its_own_parameter():
    system = lenient()  # expiry 2025-09-07 is 181 days after 2025-03-10
    assert not check(system, "within_dl_renewal_period", username="alice")
    assert check(lenient(dl_renewal_window=181), "within_dl_renewal_period", username="alice")


def test_minimum_age_counts_whole_years():
    db = make_db()
    assert check(lenient(db), "above_minimum_age", username="alice")  # 17 today
    assert not check(lenient(db, min_age=18), "above_minimum_age", username="alice")
    db["accounts"]["alice"]["birthday"] = "2009-03-10"  # 16th birthday today
    assert check(lenient(db), "above_minimum_age", username="alice")
    db["accounts"]["alice"]["birthday"] = "2009-03-11"  # 16 tomorrow
    assert not check(lenient(db), "above_minimum_age", username="alice")


def test_attempt_limit_is_strict():
    system = lenient()  # alice: 3 drive attempts, bob: 1
    assert not check(system, "within_attempt_limit", username="alice", test_type="drive")
    assert check(lenient(attempt_limit=4), "within_attempt_limit", username="alice", test_type="drive")
    assert check(lenient(attempt_limit="2"), "within_attempt_limit", username="bob", test_type="drive")


def test_before_test_date_is_strict_to_the_second():
    system = lenient()
    assert check(system, "before_test_date", username="alice", test_type="drive")  # one second later
    assert not check(system, "before_test_date", username="bob", test_type="drive")  # the same second
    with pytest.raises(TypeError, match="must be str, not None"):
        check(system, "before_test_date", username="alice", test_type="knowledge")


def test_test_state_checks():
    system = lenient()
    assert check(system, "test_scheduled", username="bob", test_type="drive")
    assert not check(system, "test_scheduled", username="bob", test_type="knowledge")
    assert not check(system, "drive_test_ready", username="bob")
    system.db["accounts"]["bob"]["tests"]["drive"]["status"] = "not scheduled"
    assert check(system, "drive_test_ready", username="bob")
    assert check(system, "test_type_is_drive", test_type="drive")
    assert not check(system, "test_type_is_drive", test_type="Drive")


def test_address_and_insurance_checks():
    system = lenient()
    assert not check(
        system, "is_vehicle_address_different", username="alice", plate_num="AAA111", address_new="1 Main St"
    )
    assert check(
        system, "is_vehicle_address_different", username="alice", plate_num="AAA111", address_new="9 Elm"
    )
    assert check(system, "is_dl_address_different", username="alice", address_new="9 Elm")
    assert not check(system, "valid_vehicle_insurance", username="alice", plate_num="AAA111")
    system.execute("validate_vehicle_insurance", {"username": "alice", "plate_num": "AAA111"})
    assert check(system, "valid_vehicle_insurance", username="alice", plate_num="AAA111")


def test_checks_on_missing_records_fail_like_the_published_tracker():
    system = lenient()
    with pytest.raises(TypeError, match="'bool' object is not subscriptable"):
        check(system, "valid_vehicle_insurance", username="carol", plate_num="AAA111")
    with pytest.raises(TypeError, match="'bool' object is not subscriptable"):
        check(system, "is_dl_address_different", username="bob", address_new="x")


# ---- the strict oracle and the session ---------------------------------------------------------------
LOGIN = Single.of("logged_in_user", {"username": "username"})
ADMIN = Single.of("authenticated_admin_password", {"username": "username"})


def strict(dependencies: dict[str, Expr | None], quirks: frozenset[str] = frozenset()) -> StrictSystem:
    base: dict[str, Expr | None] = {
        "login_user": None,
        "logout_user": None,
        "authenticate_admin_password": None,
    }
    return StrictSystem(DOMAIN, make_db(), None, {**base, **dependencies}, quirks=quirks)


def test_several_users_can_be_logged_in_at_once():
    oracle = strict({"get_dl_status": LOGIN})
    assert not oracle.execute("get_dl_status", {"username": "alice"}).ok
    assert oracle.execute("login_user", {"username": "alice", "identification": "id-alice"}).ok
    assert oracle.execute("login_user", {"username": "bob", "identification": "id-bob"}).ok
    assert oracle.session["logged_in_users"] == {"alice", "bob"}
    assert oracle.execute("get_dl_status", {"username": "alice"}).content() == "2025-09-07"
    assert oracle.execute("logout_user", {"username": "bob"}).ok
    assert oracle.session["logged_in_users"] == {"alice"}


def test_a_wrong_identification_does_not_log_in_unless_the_published_quirk_is_on():
    sound = strict({})
    sound.execute("login_user", {"username": "alice", "identification": "wrong"})
    assert sound.session["logged_in_users"] == set()
    quirky = strict({}, frozenset({SESSION_BEFORE_CREDENTIALS}))
    assert quirky.execute("login_user", {"username": "alice", "identification": "wrong"}).content() == "False"
    assert quirky.session["logged_in_users"] == {"alice"}


def test_logging_out_a_user_who_is_not_logged_in_raises():
    oracle = strict({})
    assert oracle.execute("logout_user", {"username": "alice"}).content() == "KeyError: 'alice'"


def test_the_admin_flag_is_global():
    oracle = strict({"set_admin_password": ADMIN})
    assert not oracle.execute("set_admin_password", {"username": "bob", "admin_password_new": "n"}).ok
    assert oracle.execute(
        "authenticate_admin_password", {"username": "alice", "admin_password": "adm-alice"}
    ).ok
    assert oracle.execute("set_admin_password", {"username": "bob", "admin_password_new": "n"}).ok
    assert oracle.db["accounts"]["bob"]["admin_password"] == "n"


def test_tool_named_constraints_are_evaluated_on_the_lenient_tools():
    not_registered = Single.of("not internal_vehicle_registered", {"plate_num": "plate_num"})
    oracle = strict({"register_vehicle": not_registered})
    args = {"username": "bob", "plate_num": "AAA111", "model": "m", "vin": "v"}
    assert oracle.execute("register_vehicle", args).content() == "False"
    assert oracle.execute("register_vehicle", {**args, "plate_num": "NEW1"}).content() == "True"


# ---- the database model ---------------------------------------------------------------------------------
def test_our_database_validates():
    DMVDatabase.model_validate(make_db())


@pytest.mark.parametrize(
    ("break_it", "message"),
    [
        (lambda db: db.update(accounts=[]), "accounts"),
        (lambda db: db["accounts"]["bob"]["tests"].pop("drive"), "accounts.bob.tests.drive"),
        (lambda db: db["accounts"]["bob"].update(birthday="2004-13-01"), "accounts.bob.birthday"),
        (
            lambda db: db["accounts"]["alice"]["vehicles"]["AAA111"].pop("reg_date"),
            "vehicles.AAA111.reg_date",
        ),
        (lambda db: db["accounts"]["alice"]["tests"]["drive"].update(attempts="3"), "attempts"),
        (lambda db: db.update(interaction_time="2025-03-10 12:00"), "interaction_time"),
        (lambda db: db["test_slots"].update(drive="2025-03-21T14:00:00"), "test_slots.drive"),
    ],
)
def test_a_broken_database_is_rejected_with_its_location(break_it, message):
    db = make_db()
    break_it(db)
    with pytest.raises(pydantic.ValidationError) as error:
        DMVDatabase.model_validate(db)
    assert message in str(error.value)


# ---- replay of the published trajectories ------------------------------------------------------------
def without_licence_numbers(db: Any) -> Any:
    db = copy.deepcopy(db)
    for account in db["accounts"].values():
        if account.get("driver_license"):
            account["driver_license"]["dl_number"] = "*"
    return db


def test_replay_reproduces_the_recorded_runs(published_trajectories_dir: Path):
    folder = published_trajectories_dir / "dmv"
    if not any(folder.glob("*.json.gz")):
        pytest.skip("no dmv trajectories in ../shared/sopbench")
    summary = ReplaySummary()
    unexplained = []
    for replay in replay_paths([folder]):
        summary.add(replay)
        if replay.misaligned:
            continue
        # The one known cause: licence numbers the original derived from the salted hash() (Q18).
        for mismatch in replay.mismatches():
            if "'dl_number'" not in (mismatch["recorded"] or ""):
                unexplained.append((replay.source, replay.record, replay.run, mismatch))
        if without_licence_numbers(replay.final_database) != without_licence_numbers(
            replay.recorded_database
        ):
            unexplained.append((replay.source, replay.record, replay.run, "database"))
    assert unexplained == []
    (total,) = summary.rows()
    calls, runs = total["tool_outputs"], total["runs"]
    assert calls >= 8500 and total["tool_outputs_matching"] / calls >= 0.998, total
    assert runs >= 2900 and total["final_databases_matching"] >= runs - 40, total  # the rest: Q18
