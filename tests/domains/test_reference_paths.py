"""Every published task, run on its strict oracle along its reference path, gives its outcome."""

from collections import Counter

import pytest

from sopbench.domains import (
    PUBLISHED_DOMAINS,
    SESSION_BEFORE_CREDENTIALS,
    get_domain,
    required_actions,
    run_reference_path,
)


@pytest.fixture(scope="module")
def tasks(published_tasks):
    return {d: published_tasks(d) for d in PUBLISHED_DOMAINS}


def _holding(tasks, **kwargs):
    held = Counter()
    for name, domain_tasks in tasks.items():
        domain = get_domain(name)
        for task in domain_tasks:
            run = run_reference_path(domain, task, **kwargs)
            held[name] += run.goal_succeeded == task.action_should_succeed
    return held


def test_all_903_reference_paths_give_the_published_outcome(tasks):
    held = _holding(tasks)
    assert {d: held[d] for d in tasks} == {d: len(t) for d, t in tasks.items()}
    assert sum(held.values()) == 903


def test_running_the_goal_after_a_failed_login_is_also_sound(tasks):
    # The sound oracle logs a user in only with the right credentials, so the goal still fails.
    assert sum(_holding(tasks, stop_after_failure=False).values()) == 903


def test_the_published_login_quirk_flips_95_tasks_when_the_goal_runs_after_a_failed_login(tasks):
    quirk = frozenset({SESSION_BEFORE_CREDENTIALS})
    assert sum(_holding(tasks, quirks=quirk).values()) == 903  # stopping after the failure hides it
    assert sum(_holding(tasks, quirks=quirk, stop_after_failure=False).values()) == 903 - 95


def test_required_actions_include_the_links_of_a_linked_tools_own_sop(tasks):
    bank = get_domain("bank")
    task = next(t for t in tasks["bank"] if t.goal == "set_admin_password")
    assert [call.tool for call in required_actions(bank, task)] == [
        "login_user",
        "authenticate_admin_password",
    ]
    login = required_actions(bank, task)[0]
    assert login.arguments == {
        "username": task.user_known["username"],
        "identification": task.user_known["identification"],
    }
