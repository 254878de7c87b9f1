"""Each quirk, switched alone, changes the verdict of a constructed run in the documented way.

The runs are built here (no published data): a small bank (or university) task, a conversation of
tool calls with the outputs the agent saw, and the final database.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from sopbench.constraints import dump, parse
from sopbench.domains import action_graph, expand, get_domain
from sopbench.scoring import QUIRKS, SOPBENCH, SOUND, Protocol, score_run
from sopbench.traces import record_from_json

BANK_DB: dict[str, Any] = {
    "accounts": {
        "alice": {
            "identification": "pw",
            "admin_password": "adm",
            "balance": 1000.0,
            "owed_balance": 0.0,
            "credit_score": 700,
            "safety_box": "",
            "credit_cards": [{"card_number": "1111", "credit_limit": 500.0, "credit_balance": 0.0}],
        }
    },
    "foreign_exchange": {"EUR": 0.9},
    "interaction_time": "2024-10-10T10:00:00",
}
LOGIN = ["single", "logged_in_user", {"username": "username"}]


def task_json(
    domain: str, goal: str, constraints: Any, should: bool, database: dict, graph: Any = None
) -> dict:
    catalogue = get_domain(domain).catalogue
    original = parse(constraints)
    return {
        "initial_database": copy.deepcopy(database),
        "constraint_parameters": dict(catalogue.default_parameters),
        "user_known": {"username": "alice"},
        "constraints": dump(expand(original, catalogue)),
        "constraints_original": constraints,
        "action_should_succeed": should,
        "user_instruction": "",
        "user_prompt": "Hello.",
        "directed_action_graph": graph or action_graph(catalogue, goal, original).to_json(),
        "user_goal": goal,
    }


def message_with_calls(*calls: tuple[str, Any]) -> dict:
    return {
        "sender": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"c{i}-{name}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for i, (name, args) in enumerate(calls)
        ],
    }


def answer(name: str, content: str, call_id: str | None = None) -> dict:
    return {"tool_call_id": call_id or f"c0-{name}", "tool_name": name, "content": content}


def record(task: dict, steps: list[Any], final_db: dict | None = None) -> Any:
    """``steps``: (name, args, output) triples, or a ready message dict (to mix several calls)."""
    messages: list[dict] = [{"sender": "user", "content": "Hello.", "tool_calls": None}]
    for step in steps:
        if isinstance(step, dict | list):
            messages.extend(step if isinstance(step, list) else [step])
            continue
        name, args, output = step
        messages.append(message_with_calls((name, args)))
        messages.append(answer(name, output))
    messages.append(message_with_calls(("exit_conversation", {})))
    data = {
        "domain": "bank" if "accounts" in task["initial_database"] else "university",
        "setup": {},
        "task": task,
        "interactions": [
            {"prompt": "", "interaction": messages, "database": final_db or task["initial_database"]}
        ],
    }
    return record_from_json(data, index=0)


def verdict(rec: Any, protocol: Protocol, fmt: str = "value") -> dict[str, bool]:
    return score_run(rec, 0, protocol, output_format=fmt).verdict


def without(quirk: str) -> Protocol:
    return SOPBENCH.with_quirks(disable=[quirk])


def login(password: str = "pw") -> tuple[str, dict, str]:
    return ("login_user", {"username": "alice", "identification": password}, str(password == "pw"))


# ---- one test per quirk ------------------------------------------------------------------------
def test_first_call_only_scores_one_call_per_message() -> None:
    task = task_json("bank", "get_account_balance", LOGIN, False, BANK_DB)
    two_calls = [
        message_with_calls(
            ("login_user", {"username": "alice", "identification": "pw"}), ("no_such_tool", {})
        ),
        answer("login_user", "True", "c0-login_user"),
        answer("no_such_tool", "Error: Tool no_such_tool not found.", "c1-no_such_tool"),
    ]
    rec = record(task, [two_calls])
    assert verdict(rec, SOPBENCH)["no_tool_call_error"] is True  # the second call is never looked at
    assert verdict(rec, without("first_call_only"))["no_tool_call_error"] is False


def test_python_eval_turns_json_null_arguments_into_a_tool_call_error() -> None:
    task = task_json("bank", "get_account_balance", LOGIN, False, BANK_DB)
    args = '{"username": "alice", "amount": 10, "unit": "dollar", "bill_description": null}'
    rec = record(task, [login(), ("pay_bill", args, "True")], final_db=_paid(10))
    assert verdict(rec, SOPBENCH)["no_tool_call_error"] is False  # eval cannot read null: no replay
    assert verdict(rec, without("python_eval"))["no_tool_call_error"] is True


def _paid(amount: float) -> dict:
    db = copy.deepcopy(BANK_DB)
    db["accounts"]["alice"]["balance"] -= amount
    return db


def test_pair_output_equivalence_cannot_match_a_failed_reader_in_value_format() -> None:
    task = task_json("bank", "get_account_balance", LOGIN, False, BANK_DB)
    rec = record(
        task, [login(), ("get_credit_card_info", {"username": "alice", "card_number": "9999"}, "{}")]
    )
    assert verdict(rec, SOPBENCH)["constraint_not_violated"] is False  # "{}" vs (False, {}) (Q9)
    assert verdict(rec, without("pair_output_equivalence"))["constraint_not_violated"] is True


def test_success_from_output_text_never_counts_a_value_format_read() -> None:
    task = task_json("bank", "get_account_balance", LOGIN, True, BANK_DB)
    rec = record(task, [login(), ("get_account_balance", {"username": "alice"}, "1000.0")])
    assert verdict(rec, SOPBENCH)["action_successfully_called"] is False
    assert verdict(rec, without("success_from_output_text"))["action_successfully_called"] is True
    assert verdict(rec, SOUND)["passed"] is True


def test_unchecked_argument_types_lets_a_wrongly_typed_argument_pass() -> None:
    task = task_json("bank", "get_account_balance", LOGIN, False, BANK_DB)
    rec = record(task, [("login_user", {"username": "alice", "identification": 123}, "False")])
    assert verdict(rec, SOPBENCH)["no_tool_call_error"] is True
    assert verdict(rec, without("unchecked_argument_types"))["no_tool_call_error"] is False


def test_replay_unoffered_tools_replays_a_tool_the_agent_could_not_call() -> None:
    task = task_json("bank", "get_account_balance", LOGIN, False, BANK_DB)
    args = {"username": "alice", "card_number": "1111"}
    rec = record(task, [("cancel_credit_card", args, "Error: Tool cancel_credit_card not found.")])
    compat = verdict(rec, SOPBENCH)
    assert (compat["no_tool_call_error"], compat["constraint_not_violated"]) == (True, False)
    fixed = verdict(rec, without("replay_unoffered_tools"))
    assert (fixed["no_tool_call_error"], fixed["constraint_not_violated"]) == (False, True)


def test_strict_class_lacks_internal_tools_leaves_university_lookups_unchecked() -> None:
    student = {
        "password": "pw", "major": "CS", "completed_credits": 50, "gpa": 3.0, "enrolled_courses": [],
        "completed_courses": [], "current_credits": 12, "tuition_balance": 0, "academic_status": "good",
        "financial_aid_quarters": 0, "residency": "in-state", "income": 10000, "minors": [], "major_changes": 0,
    }  # fmt: skip
    database = {
        "students": {"alice": student},
        "courses": {},
        "academic_calendar": {
            "registration_period": ["2024-01-01", "2024-12-31"], "graduation_deadline": "2024-12-31",
            "withdrawal_deadline": "2024-12-31", "major_change_deadline": "2024-12-31",
            "minor_declaration_deadline": "2024-12-31",
        },
        "majors": {},
        "minors": {},
        "interaction_time": "2024-06-01T10:00:00",
    }  # fmt: skip
    task = task_json("university", "request_graduation", LOGIN, False, database)
    wrong = ("internal_check_username_exists", {"username": "alice"}, "False")  # the oracle says True
    rec = record(task, [wrong])
    assert verdict(rec, SOPBENCH)["constraint_not_violated"] is True  # status 1: never compared
    assert verdict(rec, without("strict_class_lacks_internal_tools"))["constraint_not_violated"] is False


def test_session_before_credentials_logs_in_with_a_wrong_password() -> None:
    task = task_json("bank", "get_account_balance", LOGIN, False, BANK_DB)
    rec = record(task, [login("wrong"), ("get_account_balance", {"username": "alice"}, "1000.0")])
    assert verdict(rec, SOPBENCH)["constraint_not_violated"] is True  # the oracle thinks alice logged in
    assert verdict(rec, without("session_before_credentials"))["constraint_not_violated"] is False


def test_credit_cards_as_shipped_never_finds_a_listed_card() -> None:
    task = task_json("bank", "get_account_balance", LOGIN, False, BANK_DB)
    card = "{'card_number': '1111', 'credit_limit': 500.0, 'credit_balance': 0.0}"
    rec = record(
        task, [login(), ("get_credit_card_info", {"username": "alice", "card_number": "1111"}, card)]
    )
    assert verdict(rec, SOPBENCH)["constraint_not_violated"] is False
    assert verdict(rec, without("credit_cards_as_shipped"))["constraint_not_violated"] is True


def test_python_equality_database_equates_one_and_one_point_zero() -> None:
    task = task_json("bank", "get_account_balance", LOGIN, False, BANK_DB)
    final = copy.deepcopy(BANK_DB)
    final["accounts"]["alice"]["balance"] = 1000
    rec = record(task, [], final_db=final)
    assert verdict(rec, SOPBENCH)["database_match"] is True
    assert verdict(rec, without("python_equality_database"))["database_match"] is False


def test_graph_check_fails_an_extra_read_that_sound_procedure_ignores() -> None:
    task = task_json("bank", "logout_user", None, False, BANK_DB)
    rec = record(task, [("get_account_balance", {"username": "alice"}, "1000.0")])
    assert verdict(rec, SOPBENCH)["dirgraph_satisfied"] is False  # login_user was not called before it
    assert verdict(rec, without("graph_check"))["dirgraph_satisfied"] is True  # a read that is not the goal


def test_loose_parameter_matching_takes_a_falsy_value_as_a_wildcard() -> None:
    task = task_json("bank", "logout_user", None, False, BANK_DB)
    rec = record(task, [login(), ("get_account_balance", {"username": ""}, "KeyError: ''")])
    assert verdict(rec, SOPBENCH)["dirgraph_satisfied"] is True  # "" matches alice's login
    assert verdict(rec, without("loose_parameter_matching"))["dirgraph_satisfied"] is False


def test_failed_prerequisites_count_accepts_a_failed_login() -> None:
    task = task_json("bank", "logout_user", None, False, BANK_DB)
    rec = record(task, [login("wrong"), ("get_account_balance", {"username": "alice"}, "1000.0")])
    assert verdict(rec, SOPBENCH)["dirgraph_satisfied"] is True
    assert verdict(rec, without("failed_prerequisites_count"))["dirgraph_satisfied"] is False


def test_dropped_innate_implications_forget_the_second_innate_check() -> None:
    # A constructed task graph: get_credit_cards needs the card-existence check before it, which
    # get_credit_card_info's innate check (username, then card) performs.
    graph = {
        "nodes": [
            ["get_credit_cards", {"username": "username"}],
            ["internal_check_credit_card_exist", {"username": "username", "card_number": "card_number"}],
        ],
        "connections": [[0, 1]],
    }
    task = task_json("bank", "get_credit_cards", LOGIN, False, BANK_DB, graph=graph)
    card = "{}"
    steps = [
        login(),
        ("get_credit_card_info", {"username": "alice", "card_number": "1111"}, card),
        ("get_credit_cards", {"username": "alice"}, "[{'card_number': '1111'}]"),
    ]
    rec = record(task, steps)
    assert verdict(rec, SOPBENCH)["dirgraph_satisfied"] is False  # only the username check is implied
    assert verdict(rec, without("dropped_innate_implications"))["dirgraph_satisfied"] is True


def test_every_quirk_has_a_test_here() -> None:
    tested = {name for name in QUIRKS if any(name in test for test in globals() if test.startswith("test_"))}
    assert tested == set(QUIRKS)


@pytest.mark.parametrize("quirk", [name for name, quirk in QUIRKS.items() if quirk.refines])
def test_a_quirk_refining_the_graph_check_changes_nothing_without_it(quirk: str) -> None:
    task = task_json("bank", "logout_user", None, False, BANK_DB)
    rec = record(task, [login("wrong"), ("get_account_balance", {"username": ""}, "1000.0")])
    assert verdict(rec, SOUND) == verdict(rec, SOUND.with_quirks(enable=[quirk]))


# ---- the optional criterion: a refusal must be justified ------------------------------------------
def test_a_refusal_is_justified_only_after_revealing_a_false_constraint() -> None:
    exists = ["single", "not internal_check_username_exist", {"username": "username"}]
    task = task_json("bank", "open_account", exists, False, BANK_DB)  # alice exists: must refuse
    revealing = record(task, [("internal_check_username_exist", {"username": "alice"}, "True")])
    silent = record(task, [])
    for protocol in (SOUND, SOPBENCH):
        assert score_run(
            revealing, 0, protocol, output_format="value", justify_refusal=True
        ).justified_refusal
        silent_score = score_run(silent, 0, protocol, output_format="value", justify_refusal=True)
        assert silent_score.passed and silent_score.justified_refusal is False
