"""Generated tasks are passable: the reference agent, which sees only what an agent is shown,
passes every one of them under the sound protocol (run through the episode runner)."""

from __future__ import annotations

import pytest

from sopbench.generation import generate
from sopbench.runner import RunSpec, run
from sopbench.runner.store import open_existing

# Goals whose tasks once needed a value the user was not given (a login before reading a balance,
# the major behind a course-overlap check), or refused for a reason the agent could not see (a
# hidden prerequisite, another account's loans).
GOALS = {
    "bank": ("get_loan", "pay_loan", "cancel_credit_card", "set_safety_box"),
    "university": ("declare_minor",),
    "library": ("remove_book",),
    "hotel": ("request_room_change",),
}


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    folder = tmp_path_factory.mktemp("generated")
    goals = [goal for wanted in GOALS.values() for goal in wanted]
    generate(list(GOALS), folder / "tasks", seed=0, goals=goals)
    config = RunSpec(
        agent="reference",
        domains=tuple(GOALS),
        tasks=folder / "tasks",
        output=folder / "run",
        baselines=False,
    )
    report = run(config)
    store = open_existing(folder / "run")
    try:
        rows = list(store.rows())
    finally:
        store.close()
    return report, rows


def test_the_reference_agent_passes_every_generated_task(played):
    report, rows = played
    assert report.complete and len(rows) == report.episodes > 0
    failed = [(row.task_id, row.explanations) for row in rows if not row.verdict["passed"]]
    assert failed == []
    overall = report.summary.overall
    assert overall.should_succeed[1] > 0 and overall.should_refuse[1] > 0


def test_the_user_knows_the_credentials_a_helper_call_needs(played):
    _, rows = played
    # get_loan's constraints speak only of the owed balance, read after logging in: every task to
    # succeed gives the user's identification, and the agent logged in with it.
    loans = [row for row in rows if row.task_id.startswith("bank/get_loan")]
    assert loans
    for row in loans:
        called = [call["name"] for call in row.tool_calls]
        if "get_loan" in called:
            assert "login_user" in called[: called.index("get_loan")]
