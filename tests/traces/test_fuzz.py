"""Malformed trajectory input gives a clean record or one clear LoadError, never another exception."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sopbench.traces import LoadError, Record, detect_output_format, iter_records, record_from_json

FILE = Path("output/bank/fuzz.json")

_json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
_json_values = st.recursive(
    _json_leaves,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
# Text that looks like what models and systems produce, broken in the usual ways.
_garbage_text = st.text(max_size=40) | st.sampled_from(
    [
        "N/A",
        "None",
        "",
        "{",
        '{"username": "alice"}\n```\nAction: login_user',
        "[1, 2]",
        "null",
        "NaN",
        '{"a": NaN}',
        '{"a": true}',
        "(True, ",
        "(False, {})",
        "KeyError: 'bob'",
        "\ud800",
        "\x00",
    ]
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (sequence of keys/indices) inside a JSON value, the root included."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_paths(item, (*prefix, index)))
    return found


def _parent_and_key(root: Any, path: tuple) -> tuple[Any, Any]:
    parent = root
    for key in path[:-1]:
        parent = parent[key]
    return parent, path[-1]


def _mutate(data: st.DataObject, record: dict) -> dict:
    """Apply 1-4 random damages: delete a key or item, replace a value, truncate a list."""
    root: Any = record
    for _ in range(data.draw(st.integers(1, 4), label="damages")):
        path = data.draw(st.sampled_from(_paths(root)), label="path")
        action = data.draw(st.sampled_from(["delete", "replace", "truncate"]), label="action")
        if not path:  # the whole record
            root = data.draw(_json_values, label="record") if action == "replace" else root
            continue
        parent, key = _parent_and_key(root, path)
        if action == "delete":
            del parent[key]
        elif action == "truncate" and isinstance(parent[key], list):
            del parent[key][data.draw(st.integers(0, len(parent[key])), label="cut") :]
        else:
            parent[key] = data.draw(_json_values | _garbage_text, label="value")
    return root


def _check_outcome(data: Any, index: int = 0) -> Record | LoadError:
    """Load one record; assert the outcome is a usable record or a well-formed error."""
    try:
        record = record_from_json(data, file=FILE, index=index)
    except LoadError as error:
        _check_error(error, record_index=index)
        return error
    _exercise(record)
    return record


def _check_error(error: LoadError, *, record_index: int | None) -> None:
    text = str(error)
    assert "\n" not in text and error.message
    assert text.startswith(
        f"bank/fuzz.json: record {record_index}: " if record_index is not None else "bank/"
    )
    assert error.file is not None and error.record == record_index
    if error.field:
        assert f'field "{error.field}": ' in text


def _exercise(record: Record) -> None:
    """Whatever an evaluator would touch first must work on any record that loaded."""
    detect_output_format([record])
    for run in record.runs:
        for step in run.tool_steps():
            call = step.call
            assert (call.arguments is None) == (call.arguments_error is not None)
            assert isinstance(call.arguments_text, str)
    for problem in record.problems:
        _check_error(problem, record_index=record.index)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_damaged_records_load_cleanly_or_fail_clearly(make_record, data: st.DataObject) -> None:
    outcome = _check_outcome(_mutate(data, make_record()))
    event("record" if isinstance(outcome, Record) else "load error")


@settings(max_examples=200, deadline=None)
@given(arguments=_garbage_text, output=_garbage_text)
def test_garbage_arguments_and_outputs_still_load(make_record, arguments: str, output: str) -> None:
    raw = make_record()
    messages = raw["interactions"][0]["interaction"]
    messages[1]["tool_calls"][0]["function"]["arguments"] = arguments
    messages[2]["content"] = output
    record = _check_outcome(raw)
    assert isinstance(record, Record)  # garbage in these two places is data to score, not a load error
    first = record.runs[0].tool_steps()[0]
    assert (first.call.arguments_text, first.output_text) == (arguments, output)


@settings(max_examples=100, deadline=None)
@given(cut=st.integers(0, 8), extra_cut=st.integers(0, 3))
def test_truncated_conversations_still_load(make_record, cut: int, extra_cut: int) -> None:
    raw = make_record()
    run = raw["interactions"][0]
    del run["interaction"][cut:]
    for message in run["interaction"]:  # also lose some tool-call lists' tails
        if message.get("tool_calls"):
            del message["tool_calls"][len(message["tool_calls"]) - min(extra_cut, 1) :]
    record = _check_outcome(raw)
    assert isinstance(record, Record)
    assert len(record.runs[0].messages) == min(cut, 8)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_damaged_file_bytes_fail_clearly(make_record, data: st.DataObject) -> None:
    content = gzip.compress(orjson.dumps([make_record(), make_record()]))
    damage = data.draw(st.sampled_from(["truncate", "flip", "plain-truncate"]))
    if damage == "truncate":
        content = content[: data.draw(st.integers(0, len(content) - 1))]
    elif damage == "flip":
        position = data.draw(st.integers(0, len(content) - 1))
        content = content[:position] + bytes([content[position] ^ 0xFF]) + content[position + 1 :]
    else:
        plain = orjson.dumps([make_record()])
        content = plain[: data.draw(st.integers(0, len(plain) - 1))]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bank" / "fuzz.json.gz"
        path.parent.mkdir()
        path.write_bytes(content)
        errors: list[LoadError] = []
        records = list(iter_records(path, keep_going=True, on_error=errors.append))
    for error in errors:
        _check_error(error, record_index=error.record)
        assert error.file == path
    for record in records:
        _exercise(record)
