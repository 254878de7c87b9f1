"""The hotel domain: tools, checks, wording, database model, robustness, and the reference paths.

What every domain must satisfy (catalogue, wordings, schemas, calls that never reach a tool, task
databases) is checked in test_all_domains.py. Hotel has no recorded trajectories, so the 196
reference paths of its tasks (test_reference_paths.py) are the evidence that the oracle decides
every task as the published one did; here, that they call nothing but the goal. That test needs
the published data (../shared/sopbench) and is skipped when it is absent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic
import pytest

import sopbench.domains.hotel as hotel_package
from sopbench.constraints import Single, parse
from sopbench.domains import (
    LenientSystem,
    StrictSystem,
    published_offer,
    required_actions,
    run_reference_path,
)
from sopbench.domains.hotel import DOMAIN, HotelDatabase, new_session
from sopbench.evaluation import canonical_json
from sopbench.tasks import Task

SOP_FILE = Path(hotel_package.__file__).with_name("sop.json")


def small_db() -> dict[str, Any]:
    """A small hotel of our own: one guest checked in, one reservation ahead, one gold member."""
    return {
        "rooms": {
            "single": {
                "availability": {
                    "201": ["2025-03-10", "2025-03-11", "2025-03-12"],
                    "202": ["2025-03-09", "2025-03-10", "2025-03-11", "2025-03-12", "2025-03-13"],
                },
                "price_per_night": 90,
            },
            "double": {
                "availability": {"301": ["2025-03-09", "2025-03-10", "2025-03-11", "2025-03-12"], "302": []},
                "price_per_night": 130,
            },
            "suite": {"availability": {"401": ["2025-03-10", "2025-03-11"]}, "price_per_night": 250},
        },
        "room_checkins": {
            "201": {
                "booking_id": "BK001",
                "check_in_time": "2025-03-08T16:00:00",
                "identity_document": "passport",
            }
        },
        "bookings": {
            "BK001": {
                "guest": "Mira Chen",
                "room_type": "single",
                "check_in_date": "2025-03-08",
                "check_out_date": "2025-03-11",
                "booking_time": "2025-02-20T10:00:00",
                "status": "checked-in",
                "loyalty_points_to_add": 75,
                "room_change": 0,
                "room_service": {"2025-03-09": 2},
            },
            "BK002": {
                "guest": "Omar Haddad",
                "room_type": "double",
                "check_in_date": "2025-03-14",
                "check_out_date": "2025-03-16",
                "booking_time": "2025-02-25T09:00:00",
                "status": "confirmed",
                "loyalty_points_to_add": 0,
                "room_change": 0,
                "room_service": {},
            },
        },
        "room_assignment": {"BK001": "201", "BK002": "301"},
        "room_service_options": {"dining": {"soup": 8, "pasta": 15}, "spa": {"massage": 60}},
        "room_service_payment_method": ["credit_card", "loyalty_points"],
        "room_service_orders": {
            "RS001": {
                "room": "201",
                "order_time": "2025-03-09T12:00:00",
                "order_type": "dining",
                "order_details": [{"item": "soup", "quantity": 1, "price": 8}],
                "order_total": 8,
                "payment": "credit_card",
                "status": "in-progress",
            }
        },
        "loyalty_members": {"HTL1111A": {"name": "Mira Chen", "loyalty_points": 300, "tier": "gold"}},
        "valid_room_change_reasons": ["noise", "upgrade"],
        "interaction_time": "2025-03-09T18:30:00",
    }


def stay(guest: str, room_type: str, check_in: str, check_out: str, amount: float) -> dict[str, Any]:
    """Arguments of book_room."""
    return {
        "guest_name": guest,
        "room_type": room_type,
        "check_in_date": check_in,
        "check_out_date": check_out,
        "amount": amount,
    }


def reservation(guest: str, check_in: str, check_out: str) -> dict[str, Any]:
    """Arguments naming one reservation (find_booking_info, cancel_reservation)."""
    return {"guest_name": guest, "check_in_date": check_in, "check_out_date": check_out}


def lenient(
    db: dict[str, Any] | None = None, params: dict[str, Any] | None = None, **kw: Any
) -> LenientSystem:
    return LenientSystem(DOMAIN, db or small_db(), params, **kw)


def check(
    name: str, db: dict[str, Any] | None = None, params: dict[str, Any] | None = None, **args: Any
) -> Any:
    system = lenient(db, params)
    return DOMAIN.checks[name](system.ctx, **args)


def at(time: str) -> dict[str, Any]:
    db = small_db()
    db["interaction_time"] = time
    return db


# ---- the domain as a whole -------------------------------------------------------------------


def test_every_published_tool_is_offered_in_the_published_order():
    published_tools = [t["name"] for t in json.loads(SOP_FILE.read_text())["tools"]]
    assert published_offer(DOMAIN) == published_tools
    assert DOMAIN.tools["place_room_service_order"].signature.parameters["amount"].default is None


def test_no_session_state_and_no_links():
    assert new_session() == {}
    assert DOMAIN.new_session() == {}
    assert DOMAIN.effects == {}
    assert DOMAIN.catalogue.links == {}


def test_wording_names_variables_and_parameter_values():
    single = Single.of(
        "not has_exceeded_maximum_stays", {"check_in_date": "arrival", "check_out_date": "departure"}
    )
    text = DOMAIN.describe_single(single, {"max_stays": 7})
    assert "arrival" in text and "departure" in text and "7" in text


# ---- reservations ----------------------------------------------------------------------------


def test_book_room_assigns_first_free_room_and_earns_tier_points():
    system = lenient()
    assert system.invoke(
        "book_room",
        stay("Mira Chen", "suite", "2025-03-10", "2025-03-12", 500),
    ) == (True, True)
    booking = system.db["bookings"]["BK003"]
    assert booking == {
        "guest": "Mira Chen",
        "room_type": "suite",
        "check_in_date": "2025-03-10",
        "check_out_date": "2025-03-12",
        "booking_time": "2025-03-09T18:30:00",
        "status": "confirmed",
        "loyalty_points_to_add": 50,
        "room_change": 0,
        "room_service": 0,
    }
    assert system.db["room_assignment"]["BK003"] == "401"
    assert system.db["rooms"]["suite"]["availability"]["401"] == []
    # A non-member earns nothing; 201 is free on the 12th but not the 13th, so 202 is taken.
    system.invoke(
        "book_room",
        stay("Omar Haddad", "single", "2025-03-12", "2025-03-14", 180),
    )
    assert system.db["bookings"]["BK004"]["loyalty_points_to_add"] == 0
    assert system.db["room_assignment"]["BK004"] == "202"  # 201 lacks 2025-03-13
    assert system.db["rooms"]["single"]["availability"]["202"] == ["2025-03-09", "2025-03-10", "2025-03-11"]


def test_book_room_without_a_free_room_assigns_none():
    system = lenient()
    args = stay("Omar Haddad", "double", "2025-03-12", "2025-03-14", 260)
    assert system.invoke("book_room", args) == (True, True)
    assert system.db["room_assignment"]["BK003"] is None


@pytest.mark.parametrize(
    "change",
    [{"amount": 0}, {"amount": -1}, {"room_type": "penthouse"}, {"check_out_date": "2025-03-10"}],
)
def test_book_room_innate_failures_return_false_and_change_nothing(change):
    system = lenient()
    before = canonical_json(system.db)
    args = stay("Omar Haddad", "single", "2025-03-10", "2025-03-12", 180) | change
    outcome = system.execute("book_room", args)
    assert outcome.raw is False and outcome.content() == "False" and not outcome.ok
    assert canonical_json(system.db) == before


def test_booking_ids_count_bookings_so_a_new_one_can_overwrite():
    system = lenient()
    system.invoke(
        "cancel_reservation",
        reservation("Mira Chen", "2025-03-08", "2025-03-11"),
    )
    system.invoke(
        "book_room",
        stay("Ann Lee", "single", "2025-03-10", "2025-03-11", 90),
    )
    assert list(system.db["bookings"]) == ["BK002"]
    assert system.db["bookings"]["BK002"]["guest"] == "Ann Lee"  # published numbering: len + 1


def test_find_booking_info():
    system = lenient()
    found = system.execute(
        "find_booking_info",
        reservation("Omar Haddad", "2025-03-14", "2025-03-16"),
    )
    assert found.raw == (True, small_db()["bookings"]["BK002"])
    assert found.content("tuple").startswith("(True, {'guest': 'Omar Haddad'")
    missing = system.execute(
        "find_booking_info",
        reservation("Omar Haddad", "2025-03-15", "2025-03-16"),
    )
    assert missing.raw == (True, {}) and missing.content() == "{}"


def test_cancel_reservation_frees_the_nights():
    system = lenient()
    assert system.invoke(
        "cancel_reservation",
        reservation("Omar Haddad", "2025-03-14", "2025-03-16"),
    ) == (True, True)
    assert "BK002" not in system.db["bookings"] and "BK002" not in system.db["room_assignment"]
    assert system.db["rooms"]["double"]["availability"]["301"][-2:] == ["2025-03-14", "2025-03-15"]


def test_cancel_reservation_without_a_match_deletes_the_last_booking():
    system = lenient()
    assert system.invoke(
        "cancel_reservation",
        reservation("Nobody", "2025-03-01", "2025-03-02"),
    ) == (True, True)
    assert list(system.db["bookings"]) == ["BK001"]
    assert system.db["rooms"] == small_db()["rooms"]  # nothing freed
    empty = small_db()
    empty["bookings"] = {}
    outcome = lenient(empty).execute(
        "cancel_reservation",
        reservation("Nobody", "2025-03-01", "2025-03-02"),
    )
    assert outcome.content() == (
        "UnboundLocalError: cannot access local variable 'booking_id' where it is not associated with a value"
    )


def test_modify_reservation_files_old_room_under_new_type():
    system = lenient()
    args = dict(
        guest_name="Omar Haddad",
        old_check_in_date="2025-03-14",
        old_check_out_date="2025-03-16",
        check_in_date="2025-03-10",
        check_out_date="2025-03-11",
        room_type="suite",
        amount=10,
    )
    assert system.invoke("modify_reservation", args) == (True, True)
    rooms = system.db["rooms"]
    expected = ["2025-03-09", "2025-03-10", "2025-03-11", "2025-03-12", "2025-03-14", "2025-03-15"]
    assert rooms["suite"]["availability"]["301"] == expected  # published: under the new type...
    assert rooms["suite"]["availability"]["301"] is rooms["double"]["availability"]["301"]  # ...and shared
    assert system.db["room_assignment"]["BK002"] == "401"
    booking = system.db["bookings"]["BK002"]
    assert (booking["room_type"], booking["check_in_date"], booking["booking_time"]) == (
        "suite",
        "2025-03-10",
        "2025-03-09T18:30:00",
    )


def test_modify_reservation_without_a_match_raises_like_published():
    outcome = lenient().execute(
        "modify_reservation",
        dict(
            guest_name="Omar Haddad",
            old_check_in_date="2025-03-13",
            old_check_out_date="2025-03-16",
            check_in_date="2025-03-10",
            check_out_date="2025-03-11",
            room_type="suite",
            amount=10,
        ),
    )
    assert outcome.content() == (
        "UnboundLocalError: cannot access local variable 'old_booking_id' where it is not associated with a value"
    )


# ---- the stay --------------------------------------------------------------------------------


def test_checkin_returns_the_room_and_records_the_document():
    system = lenient()
    outcome = system.execute(
        "process_guest_checkin",
        {
            "guest_name": "Omar Haddad",
            "check_in_date": "2025-03-14",
            "check_out_date": "2025-03-16",
            "identification": {"type": "passport", "birthday": "1980-01-01"},
        },
    )
    assert outcome.raw == (True, "301") and outcome.content() == "301"
    assert system.db["room_checkins"]["301"] == {
        "booking_id": "BK002",
        "check_in_time": "2025-03-09T18:30:00",
        "identity_document": "passport",
    }
    assert system.db["bookings"]["BK002"]["status"] == "checked-in"


def test_checkin_without_booking_keeps_published_partial_write_when_not_atomic():
    args = {
        "guest_name": "Nobody",
        "check_in_date": "2025-03-14",
        "check_out_date": "2025-03-16",
        "identification": {"type": "passport", "birthday": "1980-01-01"},
    }
    replaying = lenient(atomic=False)
    outcome = replaying.execute("process_guest_checkin", args)
    assert outcome.content() == "TypeError: 'NoneType' object does not support item assignment"
    assert replaying.db["room_checkins"][None]["booking_id"] is None
    safe = lenient()  # atomic: the half-done write is undone
    assert safe.execute("process_guest_checkin", args).error
    assert safe.db == small_db()


def test_checkout_credits_points_and_clears_the_checkin():
    system = lenient()
    assert system.invoke("process_guest_checkout", {"guest_name": "Mira Chen", "key_returned": True}) == (
        True,
        True,
    )
    assert "BK001" not in system.db["bookings"] and "201" not in system.db["room_checkins"]
    assert system.db["loyalty_members"]["HTL1111A"]["loyalty_points"] == 375
    assert system.db["room_assignment"]["BK001"] == "201"  # published: the assignment stays
    outcome = system.execute("process_guest_checkout", {"guest_name": "Mira Chen", "key_returned": True})
    assert outcome.content().startswith(
        "UnboundLocalError: cannot access local variable 'booking_id_to_remove'"
    )


def test_room_change_moves_the_guest_and_gives_back_later_nights():
    system = lenient()
    args = {"guest_name": "Mira Chen", "amount": 100, "reason": "noise", "room_type": "double"}
    assert system.invoke("request_room_change", args) == (True, True)
    db = system.db
    assert db["room_assignment"]["BK001"] == "301"
    assert db["room_checkins"]["301"]["booking_id"] == "BK001" and "201" not in db["room_checkins"]
    assert db["rooms"]["double"]["availability"]["301"] == ["2025-03-11", "2025-03-12"]  # took 09, 10
    assert db["rooms"]["single"]["availability"]["201"] == ["2025-03-10", "2025-03-11", "2025-03-12"]
    assert (db["bookings"]["BK001"]["room_type"], db["bookings"]["BK001"]["room_change"]) == ("double", 1)


def test_room_change_without_a_free_room_raises_after_updating_the_booking():
    system = lenient(atomic=False)
    outcome = system.execute(
        "request_room_change",
        {"guest_name": "Mira Chen", "amount": 100, "reason": "noise", "room_type": "suite"},
    )
    assert outcome.content().startswith("UnboundLocalError: cannot access local variable 'new_room_id'")
    assert system.db["bookings"]["BK001"]["room_type"] == "suite"
    assert system.db["bookings"]["BK001"]["room_change"] == 1
    nobody = system.execute(
        "request_room_change",
        {"guest_name": "Omar Haddad", "amount": 100, "reason": "noise", "room_type": "suite"},
    )
    assert nobody.content() == "TypeError: 'NoneType' object is not subscriptable"
    assert (
        system.execute(
            "request_room_change",
            {"guest_name": "Mira Chen", "amount": 0, "reason": "noise", "room_type": "suite"},
        ).raw
        is False
    )


def test_room_service_order_is_priced_and_counted():
    system = lenient()
    items = [{"name": "soup", "quantity": 2}, {"name": "pasta", "quantity": 1}]
    args = {
        "guest_name": "Mira Chen",
        "room_id": "201",
        "order_type": "dining",
        "order_items": items,
        "payment_method": "credit_card",
        "amount": 31,
    }
    assert system.invoke("place_room_service_order", args) == (True, True)
    assert system.db["room_service_orders"]["RS002"] == {
        "room": "201",
        "order_time": "2025-03-09T18:30:00",
        "order_type": "dining",
        "order_details": [
            {"item": "soup", "quantity": 2, "price": 16},
            {"item": "pasta", "quantity": 1, "price": 15},
        ],
        "order_total": 31,
        "payment": "credit_card",
        "status": "in-progress",
    }
    assert system.db["bookings"]["BK001"]["room_service"] == {"2025-03-09": 3}
    unknown_item = dict(args, order_items=[{"name": "caviar", "quantity": 1}])
    assert system.invoke("place_room_service_order", unknown_item) is False


def test_room_service_for_a_booking_made_in_the_episode_crashes_after_writing_the_order():
    system = lenient(atomic=False)
    system.invoke(
        "book_room",
        stay("Ann Lee", "suite", "2025-03-10", "2025-03-11", 250),
    )
    outcome = system.execute(
        "place_room_service_order",
        {
            "guest_name": "Ann Lee",
            "room_id": "401",
            "order_type": "spa",
            "order_items": [{"name": "massage", "quantity": 1}],
            "payment_method": "credit_card",
            "amount": 60,
        },
    )
    assert outcome.content() == "TypeError: argument of type 'int' is not iterable"
    assert system.db["room_service_orders"]["RS002"]["room"] == "401"


def test_register_loyalty_member_id_is_seeded_by_the_name():
    system = lenient()
    assert system.invoke("register_loyalty_member", {"guest_name": "Ada Lovelace"}) == (True, True)
    # Golden value: the id the published code gives this name.
    assert system.db["loyalty_members"]["HTL7524S"] == {
        "name": "Ada Lovelace",
        "loyalty_points": 0,
        "tier": "silver",
    }
    other = lenient()
    other.invoke("register_loyalty_member", {"guest_name": "Ada Lovelace"})
    assert other.db == system.db


# ---- readers and internal checks -------------------------------------------------------------


def test_readers():
    system = lenient()
    db = small_db()
    assert system.invoke("show_available_rooms", {}) == (True, db["rooms"])
    assert system.invoke("show_room_change_options", {}) == (True, ["noise", "upgrade"])
    assert system.invoke("internal_get_interaction_time", {}) == (True, "2025-03-09T18:30:00")
    assert system.invoke("internal_get_room_assignment", {}) == (True, db["room_assignment"])
    assert system.invoke("internal_get_room_checkin_details", {}) == (True, db["room_checkins"])
    assert system.invoke("internal_get_booking_details", {}) == (True, db["bookings"])
    assert system.invoke("internal_get_room_service_order_details", {}) == (True, db["room_service_orders"])
    assert system.invoke("internal_get_loyalty_member_info", {"guest_name": "Mira Chen"}) == (
        True,
        {"HTL1111A": db["loyalty_members"]["HTL1111A"]},
    )
    assert system.invoke("internal_get_loyalty_member_info", {"guest_name": "Omar Haddad"}) is False  # innate


def test_internal_validators():
    system = lenient()

    def value(tool: str, **args: Any) -> Any:
        return system.invoke(tool, args)

    assert value("internal_valid_room_type", room_type="suite") == (True, True)
    assert value("internal_valid_room_type", room_type="loft") == (True, False)
    assert value("internal_is_loyalty_member", guest_name="Omar Haddad") == (True, False)
    assert value("internal_valid_room_change_reason", reason="upgrade") == (True, True)
    assert value("internal_valid_room_change_reason", reason="bored") == (True, False)
    assert value("internal_valid_room_service_order_type", order_type="spa") == (True, True)
    assert value("internal_valid_room_service_item", order_type="spa", order_items=[{"name": "soup"}]) == (
        True,
        False,
    )
    assert (
        value("internal_valid_room_service_item", order_type="bar", order_items=[]) is False
    )  # innate: type
    assert value("internal_valid_room_id", room_id="302") == (True, True)
    assert value("internal_valid_room_id", room_id="999") == (True, False)
    assert value("internal_valid_room_service_payment_method", payment_method="cash") == (True, False)
    items = [{"name": "soup", "quantity": 2}, {"name": "pasta"}]  # a missing quantity counts as 0
    assert value("internal_compute_room_service_order_fee", order_type="dining", order_items=items) == (
        True,
        16,
    )


# ---- checks at their boundaries --------------------------------------------------------------


def test_amount_and_date_pair_boundaries():
    assert check("amount_positive_restr", amount=0) is False
    assert check("amount_positive_restr", amount=0.01) is True
    assert check("valid_booking_date_pair", check_in_date="2025-03-10", check_out_date="2025-03-10") is False
    assert check("valid_booking_date_pair", check_in_date="2025-03-10", check_out_date="2025-03-11") is True
    with pytest.raises(ValueError, match="does not match format"):
        check("valid_booking_date_pair", check_in_date="10/03/2025", check_out_date="2025-03-11")


def test_lead_time_and_stay_length_boundaries():
    # today is 2025-03-09; default lead time 1..30 days
    within = "is_booking_date_within_lead_time_range"
    assert check(within, check_in_date="2025-03-10") is True  # exactly 1 day ahead
    assert check(within, check_in_date="2025-03-09") is False
    assert check(within, check_in_date="2025-04-08") is True  # exactly 30 days ahead
    assert check(within, check_in_date="2025-04-09") is False
    assert check(within, params={"min_booking_lead_time_days": 0}, check_in_date="2025-03-09") is True
    stays = "has_exceeded_maximum_stays"
    assert check(stays, check_in_date="2025-03-10", check_out_date="2025-03-20") is False  # 10 nights
    assert check(stays, check_in_date="2025-03-10", check_out_date="2025-03-21") is True
    assert (
        check(stays, params={"max_stays": 3}, check_in_date="2025-03-10", check_out_date="2025-03-14") is True
    )


def test_booking_amount_and_overlap_checks():
    enough = "sufficient_amount_for_booking"
    assert check(
        enough, room_type="double", check_in_date="2025-03-10", check_out_date="2025-03-12", amount=260
    )
    assert not check(
        enough, room_type="double", check_in_date="2025-03-10", check_out_date="2025-03-12", amount=259.99
    )
    overlap = "has_overlapping_booking_for_booking"
    assert check(overlap, guest_name="Omar Haddad", check_in_date="2025-03-15", check_out_date="2025-03-17")
    assert not check(
        overlap, guest_name="Omar Haddad", check_in_date="2025-03-16", check_out_date="2025-03-18"
    )
    assert not check(overlap, guest_name="Mira Chen", check_in_date="2025-03-11", check_out_date="2025-03-12")
    modify = "has_overlapping_booking_for_modification"
    assert not check(
        modify,
        guest_name="Omar Haddad",
        check_in_date="2025-03-15",
        check_out_date="2025-03-17",
        old_check_in_date="2025-03-14",
        old_check_out_date="2025-03-16",
    )
    assert check(
        "room_type_available_for_dates",
        room_type="single",
        check_in_date="2025-03-09",
        check_out_date="2025-03-14",
    )
    assert not check(
        "room_type_available_for_dates",
        room_type="single",
        check_in_date="2025-03-09",
        check_out_date="2025-03-15",
    )
    with pytest.raises(AttributeError):  # published: an unknown room type crashes the check
        check(
            "room_type_available_for_dates",
            room_type="loft",
            check_in_date="2025-03-09",
            check_out_date="2025-03-10",
        )


def test_modification_checks():
    deadline = "before_modification_deadline"  # check-in 15:00, 48 hours before
    assert check(deadline, db=at("2025-03-12T15:00:00"), check_in_date="2025-03-14") is True
    assert check(deadline, db=at("2025-03-12T15:00:01"), check_in_date="2025-03-14") is False
    assert (
        check(
            "has_confirmed_reservation",
            guest_name="Omar Haddad",
            check_in_date="2025-03-14",
            check_out_date="2025-03-16",
        )
        is True
    )
    assert (
        check(
            "has_confirmed_reservation",
            guest_name="Mira Chen",
            check_in_date="2025-03-08",
            check_out_date="2025-03-11",
        )
        is False
    )  # checked in, not confirmed
    fee = "sufficient_amount_for_reservation_modification"
    args = dict(
        guest_name="Omar Haddad",
        old_check_in_date="2025-03-14",
        old_check_out_date="2025-03-16",
        check_in_date="2025-03-14",
        check_out_date="2025-03-17",
        room_type="double",
    )
    assert check(fee, **args, amount=130) is True and check(fee, **args, amount=129) is False
    cheaper = dict(args, room_type="single", check_out_date="2025-03-15")
    assert check(fee, **cheaper, amount=0) is True  # never negative
    with pytest.raises(KeyError):  # no booking with the old dates: the published check crashes
        check(fee, **dict(args, old_check_in_date="2025-03-13"), amount=500)


@pytest.mark.parametrize(
    ("identification", "expected"),
    [
        ({"type": "passport", "birthday": "2007-03-09"}, True),  # 18 today
        ({"type": "passport", "birthday": "2007-03-10"}, False),  # 18 tomorrow
        ({"type": "Driver_License", "birthday": "1990-01-01"}, True),
        ({"type": "library_card", "birthday": "1990-01-01"}, False),
        ({"type": "passport", "birthday": "01/01/1990"}, False),
        ({"type": "passport"}, False),
        ({}, False),
    ],
)
def test_valid_identification(identification, expected):
    assert check("valid_identification", identification=identification) is expected


def test_time_of_day_checks():
    assert check("after_check_in_time", db=at("2025-03-09T15:00:00")) is True
    assert check("after_check_in_time", db=at("2025-03-09T14:59:59")) is False
    assert check("before_check_out_time", db=at("2025-03-09T11:00:00")) is True
    assert check("before_check_out_time", db=at("2025-03-09T11:00:01")) is False
    assert check("within_room_service_hours", db=at("2025-03-09T08:00:00")) is True
    assert check("within_room_service_hours", db=at("2025-03-09T07:59:59")) is False
    assert check("within_room_service_hours", db=at("2025-03-09T22:00:00")) is True
    assert check("within_room_service_hours", db=at("2025-03-09T22:00:01")) is False


def test_stay_checks():
    assert check("guest_already_checked_in", guest_name="Mira Chen") is True
    assert check("guest_already_checked_in", guest_name="Omar Haddad") is False
    assert check("room_key_returned", key_returned=True) is True
    assert check("room_key_returned", key_returned="yes") == "yes"  # returned as given, like published
    assert check("has_remaining_nights", guest_name="Mira Chen") is True
    assert check("has_remaining_nights", db=at("2025-03-11T09:00:00"), guest_name="Mira Chen") is False
    assert check("within_max_room_changes", guest_name="Mira Chen") is True
    assert check("within_max_room_changes", params={"max_room_changes": 0}, guest_name="Mira Chen") is False
    assert check("room_type_available_for_room_change", guest_name="Mira Chen", room_type="double") is True
    assert check("room_type_available_for_room_change", guest_name="Mira Chen", room_type="suite") is False
    fee = "sufficient_amount_for_room_change_fee"  # 2 nights left, double is 40 more a night
    assert check(fee, guest_name="Mira Chen", amount=80, room_type="double") is True
    assert check(fee, guest_name="Mira Chen", amount=79, room_type="double") is False
    with pytest.raises(TypeError, match="'NoneType' object is not subscriptable"):
        check(fee, guest_name="Omar Haddad", amount=80, room_type="double")


def test_room_service_checks():
    limit = "within_room_service_order_daily_limit"
    assert check(limit, guest_name="Mira Chen", room_id="201") is True  # 2 of 3 today
    assert (
        check(limit, params={"max_room_service_orders_per_day": 2}, guest_name="Mira Chen", room_id="201")
        is False
    )
    assert check("payment_with_loyalty_points", payment_method="loyalty_points") is True
    pay = "sufficient_payment_for_room_service"
    soup = [{"name": "soup", "quantity": 3}]  # 24: needs 240 points
    assert check(
        pay, guest_name="Mira Chen", order_type="dining", order_items=soup, payment_method="loyalty_points"
    )
    poorer = small_db()
    poorer["loyalty_members"]["HTL1111A"]["loyalty_points"] = 239
    assert not check(
        pay,
        db=poorer,
        guest_name="Mira Chen",
        order_type="dining",
        order_items=soup,
        payment_method="loyalty_points",
    )
    assert check(
        pay, guest_name="X", order_type="dining", order_items=soup, payment_method="credit_card", amount=24
    )
    assert not check(pay, guest_name="X", order_type="dining", order_items=soup, payment_method="credit_card")
    with pytest.raises(TypeError, match="'bool' object is not subscriptable"):  # not a member: innate fails
        check(
            pay,
            guest_name="Omar Haddad",
            order_type="dining",
            order_items=soup,
            payment_method="loyalty_points",
        )
    assert check("is_gold_or_higher_member", guest_name="Mira Chen") is True


# ---- the strict oracle -----------------------------------------------------------------------


def test_strict_oracle_enforces_the_sop_and_keeps_no_session():
    deps = {
        "book_room": parse(
            [
                "and",
                [
                    [
                        "single",
                        "not has_overlapping_booking_for_booking",
                        {
                            "guest_name": "guest_name",
                            "check_in_date": "check_in_date",
                            "check_out_date": "check_out_date",
                        },
                    ],
                    ["single", "is_booking_date_within_lead_time_range", {"check_in_date": "check_in_date"}],
                ],
            ]
        ),
        "show_available_rooms": None,
    }
    oracle = StrictSystem(DOMAIN, small_db(), None, deps)
    overlapping = stay("Omar Haddad", "single", "2025-03-15", "2025-03-17", 500)
    assert oracle.execute("book_room", overlapping).raw is False
    assert oracle.db == small_db()
    fine = dict(overlapping, check_in_date="2025-03-10", check_out_date="2025-03-12")
    assert oracle.execute("book_room", fine).raw == (True, True)
    assert oracle.execute("internal_get_booking_details", {}).raw is False  # not in the table: refused
    assert oracle.session == {}


# ---- bad input from a model ------------------------------------------------------------------


def test_bad_calls_become_error_text_and_leave_the_database_alone():
    system = lenient()
    before = canonical_json(system.db)
    checkin = {
        "guest_name": "Nobody",
        "check_in_date": "2025-03-14",
        "check_out_date": "2025-03-16",
        "identification": {"type": "passport", "birthday": "1980-01-01"},
    }
    # Unknown tools, arguments that are not a JSON object, one missing or an unexpected argument: for
    # every domain in test_all_domains.py.
    cases = [
        (
            "book_room",
            '{"guest_name": "A"}',
            "TypeError: Hotel.book_room() missing 4 required positional "
            "arguments: 'room_type', 'check_in_date', 'check_out_date', and 'amount'",
        ),
        (
            "book_room",
            {
                "guest_name": "A",
                "room_type": "single",
                "check_in_date": "2025-03-10",
                "check_out_date": "2025-03-11",
                "amount": "90",
            },
            "TypeError: '>' not supported between instances of 'str' and 'int'",
        ),
        (
            "process_guest_checkin",
            json.dumps(checkin),
            "TypeError: 'NoneType' object does not support item assignment",
        ),
    ]
    for tool, arguments, expected in cases:
        outcome = system.execute(tool, arguments)
        assert outcome.content() == expected and not outcome.ok, tool
        assert canonical_json(system.db) == before, tool
    huge = system.execute(
        "find_booking_info",
        json.dumps({"guest_name": "x" * 1_000_000, "check_in_date": "a", "check_out_date": "b"}),
    )
    assert huge.content() == "{}"
    assert system.execute("register_loyalty_member", {"guest_name": {"a": 1}}).error.startswith("TypeError: ")
    assert canonical_json(system.db) == before


# ---- the database model ----------------------------------------------------------------------


def test_database_model_accepts_ours_and_rejects_broken_layouts():
    HotelDatabase.model_validate(small_db())
    episode = lenient()
    episode.invoke(
        "book_room",
        stay("Ann Lee", "double", "2025-03-12", "2025-03-14", 260),
    )
    HotelDatabase.model_validate(episode.db)  # room_service 0 and a None room assignment are valid states
    breakages = {
        "bookings": lambda db: db.update(bookings=list(db["bookings"].values())),
        "interaction_time": lambda db: db.update(interaction_time="09/03/2025 18:30"),
        "price_per_night": lambda db: db["rooms"]["single"].update(price_per_night="90"),
        "check_in_date": lambda db: db["bookings"]["BK002"].update(check_in_date="14 March"),
        "loyalty_members": lambda db: db.pop("loyalty_members"),
    }
    for field, breakage in breakages.items():
        db = small_db()
        breakage(db)
        with pytest.raises(pydantic.ValidationError) as info:
            HotelDatabase.model_validate(db)
        assert field in str(info.value), field


# ---- published data --------------------------------------------------------------------------


def test_reference_paths_call_only_the_goal(published_tasks: Callable[[str], list[Task]]) -> None:
    """Hotel has no linked constraints: no task needs a required action before its goal."""
    tasks = published_tasks("hotel")
    assert len(tasks) == 196
    for task in tasks:
        assert required_actions(DOMAIN, task) == [], task.goal
        run = run_reference_path(DOMAIN, task)
        assert [call.tool for call, _ in run.calls] == [task.goal], task.goal
        assert run.goal_outcome is not None
