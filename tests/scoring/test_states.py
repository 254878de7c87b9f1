"""goal_constraint_states: each constraint of the goal's SOP at the moment of the goal call."""

from __future__ import annotations

import pytest

from sopbench.constraints import count_singles
from sopbench.generation import generate_domain
from sopbench.runner import RunSpec, read_run, run
from sopbench.scoring import goal_constraint_states


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    folder = tmp_path_factory.mktemp("states")
    tasks = folder / "tasks"
    tasks.mkdir()
    (tasks / "bank_tasks.json").write_bytes(
        generate_domain("bank", seed=0, goals_wanted=["transfer_funds"]).to_json()
    )
    episodes = {}
    for agent in ("reference", "no-verify"):
        run(RunSpec(agent=agent, domains=("bank",), tasks=tasks, output=folder / agent, baselines=False))
        episodes[agent] = [e.record for e in read_run(folder / agent).episodes]
    return episodes


def test_the_reference_agent_verifies_every_constraint_before_a_permitted_goal(played):
    permitted = [r for r in played["reference"] if r.task.action_should_succeed]
    assert permitted
    for record in permitted:
        states = goal_constraint_states(record, 0)
        assert states.goal_step is not None
        assert all(s.verified and s.holds for s in states.states), [
            (s.text, s.holds, s.verified) for s in states.states
        ]


def test_a_refusal_shows_the_false_constraint_it_found(played):
    refused = [r for r in played["reference"] if not r.task.action_should_succeed]
    without_a_try = [states for r in refused if (states := goal_constraint_states(r, 0)).goal_step is None]
    # The reference agent tries the goal only when every constraint of its SOP holds (the call then
    # fails for an innate reason, a negative amount); otherwise it refuses on a false one. Whether
    # that one counts as verified is the procedure judgement's reading: a helper that answers False
    # (a balance check) verifies it, a failed call (a login refused) verifies nothing.
    assert without_a_try
    for states in without_a_try:
        assert any(s.holds is False for s in states.states)
    assert any(s.holds is False and s.verified for states in without_a_try for s in states.states)


def test_calling_the_goal_at_once_verifies_nothing(played):
    for record in played["no-verify"]:
        states = goal_constraint_states(record, 0)
        assert states.goal_step is not None
        assert not any(s.verified for s in states.states)
        assert len(states.states) == count_singles(record.task.constraints_original)
