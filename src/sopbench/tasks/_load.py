"""Loading the published task files ``<domain>_tasks.json`` (plain or ``.gz``).

A task file is a JSON object mapping each goal action to a list of tasks. Tasks are numbered in file
order (goal keys, then list order), which is the order the original simulator runs them in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from sopbench._io import (
    FieldError,
    LoadError,
    StrPath,
    at,
    expect,
    expect_flag,
    expect_str_map,
    json_type,
    present,
    read_json,
    required,
)
from sopbench.constraints import ActionGraph, ConstraintError, Expr, GraphNode, ToolNode, parse

from ._model import Task

TASK_FILE_SUFFIXES = ("_tasks.json.gz", "_tasks.json")
GROUP_NODE_KINDS = ("and", "or")
# Every field a published task entry may have; anything else is kept in ``Task.extra``.
TASK_FIELDS = frozenset(
    {
        "initial_database",
        "constraint_parameters",
        "user_known",
        "constraints",
        "constraints_original",
        "action_should_succeed",
        "user_instruction",
        "user_prompt",
        "directed_action_graph",
        "user_goal",
    }
)


def task_file_domain(path: StrPath) -> str:
    """The domain named by a task file: ``bank_tasks.json.gz`` -> ``bank``."""
    name = Path(path).name
    for suffix in TASK_FILE_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    raise LoadError("file name must be <domain>_tasks.json or <domain>_tasks.json.gz", file=path)


def load_tasks(path: StrPath, *, domain: str | None = None) -> list[Task]:
    """Every task of one task file, in file order; ``domain`` defaults to the one in the file name."""
    path = Path(path)
    domain = domain or task_file_domain(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise LoadError(
            f"expected an object mapping goal actions to task lists, got {json_type(data)}", file=path
        )
    tasks: list[Task] = []
    for goal, entries in data.items():
        if not isinstance(entries, list):
            raise LoadError(f"expected a list of tasks, got {json_type(entries)}", file=path, field=goal)
        for position, entry in enumerate(entries):
            index = len(tasks)
            try:
                tasks.append(
                    parse_task_json(entry, domain=domain, goal=goal, index=index, field=f"{goal}[{position}]")
                )
            except FieldError as exc:
                raise exc.located(file=path, record=index, item="task") from None
    return tasks


def task_from_json(data: Any, *, domain: str, goal: str | None = None, index: int | None = None) -> Task:
    """A task from its decoded JSON object (``goal`` defaults to its ``user_goal``)."""
    try:
        return parse_task_json(data, domain=domain, goal=goal, index=index, field="")
    except FieldError as exc:
        raise exc.located(file=None, record=index, item="task") from None


def parse_task_json(data: Any, *, domain: str, goal: str | None, index: int | None, field: str) -> Task:
    """Validate one task object; errors are ``FieldError`` with paths below ``field``.

    With ``goal`` (the enclosing key of a task file) ``user_goal`` may be missing, as in the hotel and
    university files; the original simulator always overwrites it with the key, so a different
    ``user_goal`` means a damaged file.
    """
    obj = expect(data, dict, field or "task")
    recorded_goal = obj.get("user_goal")
    if goal is None:
        goal = required(obj, "user_goal", str, field)
    elif recorded_goal is not None and recorded_goal != goal:
        raise FieldError(at(field, "user_goal"), f"{recorded_goal!r} differs from its goal key {goal!r}")
    constraints_json = present(obj, "constraints", field)
    constraints_original_json = present(obj, "constraints_original", field)
    return Task(
        domain=domain,
        goal=goal,
        index=index,
        initial_database=required(obj, "initial_database", dict, field),
        constraint_parameters=required(obj, "constraint_parameters", dict, field),
        user_known=required(obj, "user_known", dict, field),
        constraints=_parse_constraints(constraints_json, at(field, "constraints")),
        constraints_original=_parse_constraints(constraints_original_json, at(field, "constraints_original")),
        action_should_succeed=expect_flag(
            present(obj, "action_should_succeed", field), at(field, "action_should_succeed")
        ),
        user_instruction=required(obj, "user_instruction", str, field),
        user_prompt=required(obj, "user_prompt", str, field),
        directed_action_graph=_parse_graph(
            present(obj, "directed_action_graph", field), at(field, "directed_action_graph")
        ),
        constraints_json=constraints_json,
        constraints_original_json=constraints_original_json,
        extra={key: value for key, value in obj.items() if key not in TASK_FIELDS},
    )


def _parse_constraints(data: Any, field: str) -> Expr | None:
    try:
        return parse(data, path=field)
    except ConstraintError as exc:
        raise FieldError(exc.path, exc.message) from None


def _parse_graph(data: Any, field: str) -> ActionGraph:
    obj = expect(data, dict, field)
    nodes_field, connections_field = at(field, "nodes"), at(field, "connections")
    nodes = tuple(
        _parse_node(node, at(nodes_field, i)) for i, node in enumerate(required(obj, "nodes", list, field))
    )
    connections = tuple(
        _parse_connection(pair, at(connections_field, i), len(nodes))
        for i, pair in enumerate(required(obj, "connections", list, field))
    )
    return ActionGraph(nodes, connections)


def _parse_node(data: Any, field: str) -> GraphNode:
    if data in GROUP_NODE_KINDS:
        return cast(GraphNode, data)  # "and" / "or"
    if type(data) is list and len(data) == 2 and type(data[0]) is str and type(data[1]) is dict:
        return ToolNode(data[0], expect_str_map(data[1], at(field, 1)))
    if isinstance(data, list) and len(data) == 2:
        expect(data[0], str, at(field, 0))
        expect(data[1], dict, at(field, 1))
    shown = repr(data) if isinstance(data, str) else json_type(data)
    raise FieldError(field, f'expected "and", "or" or [tool, {{param: variable}}], got {shown}')


def _parse_connection(data: Any, field: str, node_count: int) -> tuple[int, int]:
    # Fast path first: graphs are parsed for every record of every trajectory file.
    if type(data) is list and len(data) == 2:
        source, to = data
        if type(source) is int and type(to) is int and 0 <= source < node_count and 0 <= to < node_count:
            return source, to
        for i, end in enumerate(data):
            if expect(end, int, at(field, i)) < 0 or end >= node_count:
                raise FieldError(
                    at(field, i), f"node index {end} out of range (the graph has {node_count} nodes)"
                )
    raise FieldError(field, f"expected a [from, to] pair of node indices, got {json_type(data)}")
