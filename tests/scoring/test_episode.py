"""``score_episode``: a live episode is scored without a trajectory record, exactly as a recorded one."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from sopbench.constraints import dump, parse
from sopbench.domains import LenientSystem, action_graph, expand, get_domain
from sopbench.evaluation import Verdict
from sopbench.scoring import (
    PUBLISHED_CHECKS,
    SOPBENCH,
    SOUND,
    VERDICT_KEYS,
    EpisodeCall,
    Protocol,
    episode_calls,
    score_episode,
    score_run,
)
from sopbench.tasks import task_from_json
from sopbench.traces import record_from_json

# Only what logging in and reading a balance touch.
DATABASE: dict[str, Any] = {
    "accounts": {"alice": {"identification": "pw", "balance": 1000.0, "credit_cards": []}},
    "interaction_time": "2024-10-10T10:00:00",
}
LOGIN = ["single", "logged_in_user", {"username": "username"}]


def bank_task(should_succeed: bool = True) -> Any:
    catalogue = get_domain("bank").catalogue
    original = parse(LOGIN)
    data = {
        "initial_database": copy.deepcopy(DATABASE),
        "constraint_parameters": dict(catalogue.default_parameters),
        "user_known": {"username": "alice", "identification": "pw"},
        "constraints": dump(expand(original, catalogue)),
        "constraints_original": LOGIN,
        "action_should_succeed": should_succeed,
        "user_instruction": "",
        "user_prompt": "What is my balance?",
        "directed_action_graph": action_graph(catalogue, "get_account_balance", original).to_json(),
        "user_goal": "get_account_balance",
    }
    return task_from_json(data, domain="bank")


def live_episode(task: Any, calls: list[tuple[str, str]]) -> tuple[list[EpisodeCall], dict[str, Any]]:
    """Play ``calls`` (name, raw argument text) on the lenient system an agent talks to."""
    system = LenientSystem(get_domain("bank"), task.initial_database, task.constraint_parameters)
    episode = []
    for position, (name, arguments) in enumerate(calls):
        output = system.execute(name, arguments).content("value")
        episode.append(EpisodeCall(name, arguments, output, step=2 * position + 2))
    return episode, system.db


LOGIN_CALL = ("login_user", '{"username": "alice", "identification": "pw"}')
BALANCE_CALL = ("get_account_balance", '{"username": "alice"}')


# Under the published reading (quirk success_from_output_text) a read shown as a bare value never
# counts as executed, so the compat protocol is taken without that quirk here.
@pytest.mark.parametrize("protocol", [SOUND, SOPBENCH.with_quirks(disable=["success_from_output_text"])])
def test_a_correct_live_episode_passes_with_every_published_check(protocol: Protocol) -> None:
    task = bank_task()
    calls, database = live_episode(task, [LOGIN_CALL, BALANCE_CALL])
    score = score_episode(task, calls, database, protocol)
    assert isinstance(score.verdict, Verdict)
    assert score.passed and score.explanations == ()
    assert tuple(score.checks) == PUBLISHED_CHECKS and all(score.checks.values())
    assert tuple(score.verdict_fields()) == VERDICT_KEYS


def test_the_published_reading_does_not_count_a_read_shown_as_a_value() -> None:
    task = bank_task()
    calls, database = live_episode(task, [LOGIN_CALL, BALANCE_CALL])
    score = score_episode(task, calls, database, SOPBENCH)
    assert score.checks["action_successfully_called"] is False
    assert "does not count as executed" in score.verdict.permission.explanations[0]


def test_skipping_the_login_fails_the_procedure_naming_the_step_the_runner_gave() -> None:
    task = bank_task()
    calls, database = live_episode(task, [BALANCE_CALL])
    score = score_episode(task, calls, database, SOUND)
    assert not score.passed and not score.verdict.procedure.passed
    assert score.checks["dirgraph_satisfied"] is False
    assert any("at step 2:" in text and "logged_in_user" in text for text in score.explanations)


def test_malformed_argument_text_is_one_invalid_call_quoting_the_raw_text() -> None:
    task = bank_task()
    broken = '{"username": "alice", "identification": '
    calls, database = live_episode(task, [("login_user", broken), LOGIN_CALL, BALANCE_CALL])
    score = score_episode(task, calls, database, SOUND)
    assert score.checks["no_tool_call_error"] is False
    invalid = [text for text in score.explanations if "<arguments" in text]
    assert len(invalid) == 1
    assert '{"username": "alice", "identification": ' in invalid[0] and "at step 2" in invalid[0]
    assert "more invalid call" not in invalid[0]  # counted once


def test_arguments_may_be_given_as_a_mapping() -> None:
    task = bank_task()
    calls, database = live_episode(task, [LOGIN_CALL, BALANCE_CALL])
    as_mappings = [EpisodeCall(c.name, json.loads(c.arguments), c.output, c.step) for c in calls]  # type: ignore[arg-type]
    assert (
        score_episode(task, as_mappings, database).verdict_fields()
        == score_episode(task, calls, database).verdict_fields()
    )


@pytest.mark.parametrize("protocol", [SOUND, SOPBENCH])
@pytest.mark.parametrize("skip_login", [False, True])
def test_a_recorded_run_scores_as_the_same_live_episode(protocol: Protocol, skip_login: bool) -> None:
    task = bank_task()
    played = [BALANCE_CALL] if skip_login else [LOGIN_CALL, BALANCE_CALL]
    calls, database = live_episode(task, played)
    messages: list[dict[str, Any]] = [{"sender": "user", "content": "Hi", "tool_calls": None}]
    for index, call in enumerate(calls):
        function = {"name": call.name, "arguments": call.arguments}
        messages.append(
            {
                "sender": "assistant",
                "content": None,
                "tool_calls": [{"id": f"c{index}", "function": function}],
            }
        )
        messages.append({"tool_call_id": f"c{index}", "tool_name": call.name, "content": call.output})
    data = {
        "domain": "bank",
        "setup": {},
        "task": _task_json(task),
        "interactions": [{"prompt": "", "interaction": messages, "database": database}],
    }
    record = record_from_json(data)
    recorded = score_run(record, 0, protocol, output_format="value")
    scored, _executed = episode_calls(record.runs[0], protocol)
    assert [c.step for c in scored] == [c.step for c in calls]
    live = score_episode(task, calls, database, protocol)
    assert recorded.verdict == live.verdict_fields()
    assert recorded.explanations == live.explanations
    assert recorded.episode is not None and recorded.episode.verdict == live.verdict


def _task_json(task: Any) -> dict[str, Any]:
    catalogue = get_domain("bank").catalogue
    original = parse(LOGIN)
    return {
        "initial_database": copy.deepcopy(DATABASE),
        "constraint_parameters": dict(catalogue.default_parameters),
        "user_known": dict(task.user_known),
        "constraints": dump(expand(original, catalogue)),
        "constraints_original": LOGIN,
        "action_should_succeed": task.action_should_succeed,
        "user_instruction": "",
        "user_prompt": task.user_prompt,
        "directed_action_graph": task.directed_action_graph.to_json(),
        "user_goal": task.goal,
    }


def test_a_misspelt_quirk_is_an_error_never_silently_off() -> None:
    with pytest.raises(ValueError, match="graph_chek"):
        Protocol("mine", frozenset({"graph_chek"}))
    with pytest.raises(ValueError, match="graph_chek"):
        SOPBENCH.has("graph_chek")
    with pytest.raises(AttributeError):
        SOPBENCH.switches.graph_chek  # type: ignore[attr-defined]  # noqa: B018
    assert SOPBENCH.switches.graph_check and not SOUND.switches.graph_check


def test_an_unknown_domain_is_a_key_error_naming_the_known_ones() -> None:
    task = bank_task()
    with pytest.raises(KeyError, match="known: .*bank"):
        score_episode(task, [], DATABASE, domain="no_such_domain")


def test_steps_need_not_be_unique_for_a_live_episode() -> None:
    # Each call is judged by its own outcome even when a runner labels two calls alike.
    task = bank_task()
    calls, database = live_episode(task, [LOGIN_CALL, BALANCE_CALL])
    same_step = [call._replace(step=5) for call in calls]
    assert score_episode(task, same_step, database).passed
