"""Generation works for seeds other than the ones it was developed on: for eleven seeds, every
combination that can be realised is realised, every task passes the strict oracle, and the
reference agent passes every task. To keep CI cheap each seed generates one domain (or a few goals
of hotel, the slowest domain); every domain is covered across the seeds."""

from __future__ import annotations

from pathlib import Path

import pytest

from sopbench.domains import get_domain, run_reference_path
from sopbench.generation import HIDDEN_PREREQUISITE_KEY, HIDDEN_REFUSAL, generate
from sopbench.runner import RunSpec, run
from sopbench.runner.store import open_existing
from sopbench.tasks import load_tasks

# seed -> (domain, goals or None for all of them)
SEEDS = {
    2: ("bank", None),
    3: ("dmv", None),
    4: ("healthcare", None),
    5: ("library", None),
    6: ("online_market", None),
    8: ("university", None),
    # Seeds 9 and 20 are among those where the search once left place_room_service_order variants
    # 1 and 3 (a room out of the inventory, refused because the guest has reached the day's limit)
    # unrealised.
    9: ("hotel", ("book_room", "cancel_reservation", "process_guest_checkin", "place_room_service_order")),
    11: ("hotel", ("request_room_change", "place_room_service_order", "process_guest_checkout")),
    13: ("bank", ("get_loan", "pay_loan", "transfer_funds")),
    17: ("dmv", ("renew_vehicle", "schedule_test")),
    20: ("hotel", ("place_room_service_order",)),
}


@pytest.fixture(scope="module", params=sorted(SEEDS), ids=lambda s: f"seed{s}-{SEEDS[s][0]}")
def generated(request, tmp_path_factory):
    seed = request.param
    domain, goals = SEEDS[seed]
    folder = tmp_path_factory.mktemp(f"seed{seed}")
    done = generate([domain], folder / "tasks", seed=seed, goals=goals)
    return seed, domain, folder, done[0]


def test_every_realisable_combination_is_realised(generated):
    seed, domain, _, item = generated
    report = item.result.report
    assert report.unrealisable == [], [u.reason for u in report.unrealisable]
    assert report.realised + len(report.excluded) == report.assignments > 0
    assert all(u.reason == HIDDEN_REFUSAL for u in report.excluded)


def test_only_the_room_change_with_no_night_left_is_excluded(generated):
    # The only combination no agent could refuse for a reason it is shown: a room change with no
    # night left costs nothing, so "the amount covers the fee" holds for any positive amount.
    # Whatever else the search misses must not be passed off as excluded by design.
    _, _, _, item = generated
    report = item.result.report
    excluded = {(u.goal, u.variant) for u in report.excluded}
    expected = {("request_room_change", 0)} if "request_room_change" in item.result.tasks else set()
    assert excluded == expected


def test_every_task_passes_the_strict_oracle(generated):
    _, domain, _, item = generated
    tasks = load_tasks(item.tasks_file, domain=domain)
    assert len(tasks) == item.result.report.tasks
    wrong = [
        (t.goal, t.index)
        for t in tasks
        if run_reference_path(get_domain(domain), t).goal_succeeded != t.action_should_succeed
    ]
    assert wrong == []


def test_the_reference_agent_passes_every_task(generated):
    _, domain, folder, _ = generated
    report = run(
        RunSpec(
            agent="reference",
            domains=(domain,),
            tasks=folder / "tasks",
            output=folder / "run",
            baselines=False,
        )
    )
    store = open_existing(folder / "run")
    try:
        rows = list(store.rows())
    finally:
        store.close()
    assert report.complete and len(rows) == report.episodes > 0
    assert [row.task_id for row in rows if not row.verdict["passed"]] == []


def test_hidden_prerequisite_combinations_are_excluded_or_made_on_request_and_marked(tmp_path: Path):
    goals = ("request_room_change",)
    plain = generate(["hotel"], tmp_path / "plain", seed=11, goals=goals)[0].result.report
    assert plain.unrealisable == [] and plain.excluded, (
        "request_room_change variant 0 is refused only for a hidden prerequisite"
    )
    asked = generate(["hotel"], tmp_path / "asked", seed=11, goals=goals, include_hidden_prerequisites=True)[
        0
    ]
    marked = [t for t in asked.result.tasks["request_room_change"] if t.get(HIDDEN_PREREQUISITE_KEY)]
    assert len(marked) == len(plain.excluded) == asked.result.report.hidden_prerequisite_tasks
    assert all(not t["action_should_succeed"] for t in marked)
    assert load_tasks(asked.tasks_file, domain="hotel")  # the loader keeps the extra key
