"""Task files: the published ones load completely and exactly; broken ones give one located error."""

from __future__ import annotations

import collections
import dataclasses
import gzip
import json
import string
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sopbench.constraints import And, Single, dump, parse
from sopbench.tasks import (
    ActionGraph,
    LoadError,
    Task,
    ToolNode,
    iter_all_tasks,
    load_tasks,
    task_digest,
    task_file_domain,
    task_from_json,
)


def write_task_file(folder: Path, name: str, content: object, *, compress: bool = False) -> Path:
    path = folder / name
    data = orjson.dumps(content)
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


# -- the published files -------------------------------------------------------------------------------


def read_json(path: Path) -> dict:
    """A task file's JSON as the standard library reads it (the loader's own reader is not under test)."""
    return json.loads(gzip.decompress(path.read_bytes()))


@pytest.fixture(scope="module")
def published_tasks(published_tasks_dir: Path) -> list[Task]:
    return list(iter_all_tasks(published_tasks_dir))


@pytest.fixture(scope="module")
def published_raw_tasks(published_tasks_dir: Path) -> list[dict]:
    """The decoded JSON of every task, in the loader's order (domains sorted, then file order)."""
    raw = []
    for path in sorted(published_tasks_dir.glob("*_tasks.json.gz")):
        for entries in read_json(path).values():
            raw.extend(entries)
    return raw


def test_every_published_task_loads(
    published_tasks: list[Task], published_task_counts: dict[str, int]
) -> None:
    counts = collections.Counter(task.domain for task in published_tasks)
    assert dict(counts) == published_task_counts
    assert len(published_tasks) == 903
    assert sum(task.action_should_succeed for task in published_tasks) == 321


def test_tasks_are_numbered_in_file_order_with_goal_from_key(published_tasks_dir: Path) -> None:
    for path in sorted(published_tasks_dir.glob("*_tasks.json.gz")):
        raw = read_json(path)
        tasks = load_tasks(path)
        expected_goals = [goal for goal, entries in raw.items() for _ in entries]
        assert [task.goal for task in tasks] == expected_goals
        assert [task.index for task in tasks] == list(range(len(tasks)))
        assert {task.domain for task in tasks} == {task_file_domain(path)}


def test_goal_comes_from_the_key_where_user_goal_is_missing(published_tasks_dir: Path) -> None:
    # hotel and university task files carry no user_goal (spec section 1)
    for domain in ("hotel", "university"):
        path = published_tasks_dir / f"{domain}_tasks.json.gz"
        assert all("user_goal" not in entry for entries in read_json(path).values() for entry in entries)
        assert all(task.goal for task in load_tasks(path))


def test_published_fields_are_kept_exactly(
    published_tasks: list[Task], published_raw_tasks: list[dict]
) -> None:
    assert len(published_tasks) == len(published_raw_tasks)
    for task, raw in zip(published_tasks, published_raw_tasks, strict=True):
        assert task.initial_database == raw["initial_database"]
        assert task.user_known == raw["user_known"]
        assert task.constraint_parameters == raw["constraint_parameters"]
        assert task.user_prompt == raw["user_prompt"]
        assert json.dumps(task.directed_action_graph.to_json()) == json.dumps(raw["directed_action_graph"])
        assert json.dumps(task.constraints_json) == json.dumps(raw["constraints"])
        assert json.dumps(task.constraints_original_json) == json.dumps(raw["constraints_original"])
        assert task.extra == {}


def test_parse_dump_is_identity_on_published_constraints(published_raw_tasks: list[dict]) -> None:
    for raw in published_raw_tasks:
        for key in ("constraints", "constraints_original"):
            assert json.dumps(dump(parse(raw[key]))) == json.dumps(raw[key])


def test_published_graphs_start_at_the_goal(published_tasks: list[Task]) -> None:
    for task in published_tasks:
        root = task.directed_action_graph.nodes[0]
        assert isinstance(root, ToolNode) and root.tool == task.goal
        assert task.directed_action_graph.tool_node_index(task.goal) == 0


# -- generated expressions -----------------------------------------------------------------------------

_names = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12)
_params = st.none() | st.dictionaries(_names, _names | _names.map("value {}".format), max_size=3)
_singles = st.builds(
    lambda negated, name, params: ["single", "not " + name if negated else name, params],
    st.booleans(),
    _names,
    _params,
)
_expressions = st.none() | st.recursive(
    _singles,
    lambda children: st.tuples(
        st.sampled_from(["and", "or", "chain", "gate"]), st.lists(children, min_size=1, max_size=4)
    ).map(list),
    max_leaves=25,
)


@given(_expressions)
def test_parse_dump_is_identity_on_generated_expressions(encoded: object) -> None:
    assert json.dumps(dump(parse(encoded))) == json.dumps(encoded)


@given(_expressions)
def test_task_keeps_generated_constraints_byte_exact(encoded: object) -> None:
    raw = {
        "initial_database": {},
        "constraint_parameters": {},
        "user_known": {},
        "constraints": encoded,
        "constraints_original": encoded,
        "action_should_succeed": False,
        "user_instruction": "",
        "user_prompt": "",
        "directed_action_graph": {"nodes": [["goal", {}]], "connections": []},
    }
    task = task_from_json(raw, domain="d", goal="goal")
    assert json.dumps(task.constraints_json) == json.dumps(encoded)
    assert json.dumps(dump(task.constraints)) == json.dumps(encoded)


# -- synthetic files -----------------------------------------------------------------------------------


def test_loads_plain_and_gzip_files_with_typed_fields(tmp_path: Path, make_task) -> None:
    raw = make_task()
    raw["action_should_succeed"] = 0  # old files store flags as 0/1
    raw["assistant_prompt"] = "You are a bank assistant."
    plain = write_task_file(tmp_path, "bank_tasks.json", {"get_account_balance": [raw, make_task()]})
    packed = write_task_file(
        tmp_path, "other_tasks.json.gz", {"get_account_balance": [make_task()]}, compress=True
    )

    first, second = load_tasks(plain)
    assert (first.domain, first.goal, first.index, second.index) == ("bank", "get_account_balance", 0, 1)
    assert first.action_should_succeed is False and second.action_should_succeed is True
    assert first.extra == {"assistant_prompt": "You are a bank assistant."}
    assert isinstance(first.constraints, And)
    assert first.constraints_original == And(
        [Single.of("login_user", {"username": "username", "identification": "identification"})]
    )
    assert first.directed_action_graph == ActionGraph(
        nodes=(
            ToolNode("get_account_balance", {"username": "username"}),
            "and",
            ToolNode("login_user", {"username": "username"}),
        ),
        connections=((0, 1), (1, 2)),
    )
    assert first.directed_action_graph.children(1) == [2]
    assert [task.domain for task in load_tasks(packed)] == ["other"]
    assert [task.domain for task in iter_all_tasks(tmp_path)] == ["bank", "bank", "other"]


def test_goal_key_fills_missing_user_goal(tmp_path: Path, make_task) -> None:
    raw = make_task()
    del raw["user_goal"]
    (task,) = load_tasks(write_task_file(tmp_path, "hotel_tasks.json", {"book_room": [raw]}))
    assert task.goal == "book_room"


def _error_for(tmp_path: Path, content: object, name: str = "bank_tasks.json") -> LoadError:
    with pytest.raises(LoadError) as caught:
        load_tasks(write_task_file(tmp_path, name, content))
    return caught.value


def _broken(make_task, **changes: object) -> dict:
    raw = make_task()
    for key, value in changes.items():
        if value is ...:
            del raw[key]
        else:
            raw[key] = value
    return raw


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"user_prompt": ...}, "get_account_balance[1].user_prompt", "missing"),
        ({"user_known": []}, "get_account_balance[1].user_known", "expected an object, got a list"),
        (
            {"action_should_succeed": 2},
            "get_account_balance[1].action_should_succeed",
            "expected a boolean (or 0/1), got 2",
        ),
        (
            {"constraints": ["and", [["single", "x", None], ["xor", []]]]},
            "get_account_balance[1].constraints[1][1]",
            'unknown operator "xor" (expected one of single, and, or, chain, gate)',
        ),
        (
            {"user_goal": "transfer"},
            "get_account_balance[1].user_goal",
            "'transfer' differs from its goal key 'get_account_balance'",
        ),
        (
            {"directed_action_graph": {"nodes": [["get_account_balance", {}]], "connections": [[0, 3]]}},
            "get_account_balance[1].directed_action_graph.connections[0][1]",
            "node index 3 out of range (the graph has 1 nodes)",
        ),
        (
            {"directed_action_graph": {"nodes": ["xor"], "connections": []}},
            "get_account_balance[1].directed_action_graph.nodes[0]",
            'expected "and", "or" or [tool, {param: variable}], got \'xor\'',
        ),
        (
            {
                "directed_action_graph": {
                    "nodes": [["get_account_balance", {"username": 1}]],
                    "connections": [],
                }
            },
            "get_account_balance[1].directed_action_graph.nodes[0][1].username",
            "expected a string, got an integer",
        ),
    ],
)
def test_a_broken_task_gives_one_located_error(
    tmp_path: Path, make_task, changes: dict, field: str, message: str
) -> None:
    error = _error_for(tmp_path, {"get_account_balance": [make_task(), _broken(make_task, **changes)]})
    assert (error.record, error.field, error.message) == (1, field, message)
    assert str(error) == f'{tmp_path.name}/bank_tasks.json: task 1: field "{field}": {message}'


def test_file_level_errors(tmp_path: Path) -> None:
    assert (
        _error_for(tmp_path, [1, 2]).message
        == "expected an object mapping goal actions to task lists, got a list"
    )
    assert str(_error_for(tmp_path, {"get_account_balance": {}})).endswith(
        'field "get_account_balance": expected a list of tasks, got an object'
    )

    truncated = tmp_path / "dmv_tasks.json.gz"
    truncated.write_bytes(gzip.compress(b'{"renew_dl": []}')[:-6])
    with pytest.raises(LoadError, match=r"dmv_tasks.json.gz: truncated or corrupt gzip data"):
        load_tasks(truncated)

    with pytest.raises(LoadError, match=r"file name must be <domain>_tasks.json"):
        load_tasks(write_task_file(tmp_path, "tasks.json", {}))
    with pytest.raises(LoadError, match=r"cannot read file"):
        load_tasks(tmp_path / "missing_tasks.json")


def test_iter_all_tasks_refuses_a_domain_twice(tmp_path: Path) -> None:
    write_task_file(tmp_path, "bank_tasks.json", {})
    write_task_file(tmp_path, "bank_tasks.json.gz", {}, compress=True)
    with pytest.raises(LoadError, match="holds both bank_tasks.json and bank_tasks.json.gz: remove one"):
        list(iter_all_tasks(tmp_path))


def test_task_from_json_without_a_file(make_task) -> None:
    raw = make_task()
    task = task_from_json(raw, domain="bank")
    assert task.initial_database is raw["initial_database"]  # shared, not copied
    assert (task.goal, task.index) == ("get_account_balance", None)
    raw = make_task()
    del raw["user_goal"]
    with pytest.raises(LoadError) as caught:
        task_from_json(raw, domain="bank")
    assert str(caught.value) == 'field "user_goal": missing'


def test_a_task_digest_is_computed_once_and_not_carried_to_a_changed_copy(make_task) -> None:
    task = task_from_json(make_task(), domain="bank", goal="get_account_balance")
    digest = task_digest(task)
    assert task_digest(task) == digest == task_digest(dataclasses.replace(task))
    changed = dataclasses.replace(task, user_instruction=task.user_instruction + " (changed)")
    assert task_digest(changed) != digest
    assert changed == dataclasses.replace(changed)  # the remembered digest is not part of equality
