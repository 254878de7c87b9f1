"""Malformed trajectory records get a clear per-record error or a verdict, never a crash."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sopbench.scoring import SOPBENCH, SOUND, ScoringError, score_run
from sopbench.traces import LoadError, record_from_json

from .test_quirks import BANK_DB, LOGIN, task_json


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "sender": "assistant",
        "content": None,
        "tool_calls": [{"id": f"c-{name}", "type": "function", "function": function}],
    }


def _valid_record() -> dict[str, Any]:
    task = task_json("bank", "get_account_balance", ["and", [LOGIN]], True, BANK_DB)
    task["user_known"]["identification"] = "pw"
    messages = [
        {"sender": "user", "content": "Hello.", "tool_calls": None},
        _call("login_user", {"username": "alice", "identification": "pw"}),
        {"tool_call_id": "c-login_user", "tool_name": "login_user", "content": "True"},
        _call("get_account_balance", {"username": "alice"}),
        {"tool_call_id": "c-get_account_balance", "tool_name": "get_account_balance", "content": "1000.0"},
        _call("exit_conversation", {}),
    ]
    return {
        "domain": "bank",
        "setup": {},
        "task": task,
        "interactions": [{"prompt": "", "interaction": messages, "database": copy.deepcopy(BANK_DB)}],
    }


VALID = _valid_record()
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
garbage_outputs = st.sampled_from(
    [
        "",
        "(",
        "[]",
        "()",
        "{'a': }",
        "2024-10-12",
        "None",
        "[True]",
        "(False, {})",
        "x" * 300,
        "\x00",
        "1e999",
    ]
) | st.text(max_size=30)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*prefix, index)))
    return out


ALL_PATHS = [p for p in _paths(VALID) if p]


@st.composite
def mutated_records(draw: st.DrawFn) -> dict[str, Any]:
    data = copy.deepcopy(VALID)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(ALL_PATHS))
        parent: Any = data
        try:
            for key in path[:-1]:
                parent = parent[key]
            action = draw(st.sampled_from(["delete", "replace", "truncate", "garbage"]))
            last = path[-1]
            if action == "delete":
                del parent[last]
            elif action == "replace":
                parent[last] = draw(json_values)
            elif action == "truncate" and isinstance(parent[last], list):
                parent[last] = parent[last][: draw(st.integers(0, len(parent[last])))]
            elif action == "garbage":
                parent[last] = draw(garbage_outputs)
        except (KeyError, IndexError, TypeError):
            continue
    return data


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_records())
def test_malformed_records_never_crash(data: dict[str, Any]) -> None:
    json.dumps(data)  # still JSON
    try:
        record = record_from_json(data, index=0)
    except LoadError as error:
        assert str(error)
        return
    for protocol in (SOUND, SOPBENCH):
        for run in range(len(record.runs) + 1):
            try:
                score = score_run(record, run, protocol, justify_refusal=True)
            except ScoringError as error:
                assert "record 0" in str(error)
                continue
            assert set(score.verdict) >= {"passed", "database", "permission", "procedure", "success"}
            assert score.verdict["passed"] == score.verdict["success"]
