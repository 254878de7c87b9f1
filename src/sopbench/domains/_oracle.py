"""A task's oracle: the strict system for one task, and the task's reference path.

The reference path is how the published generator verified its tasks: call the *required actions*
(the tools linked to session constraints the task's SOP mentions, such as ``login_user`` and then
``authenticate_admin_password``, each after the required actions of its own SOP) with the user's
known values, stop after one that fails, and otherwise call the goal. On the strict oracle the
goal's outcome must be the task's ``action_should_succeed``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from sopbench.constraints import Expr, singles

from ._derive import DependencyOption, default_dependencies, oracle_dependencies
from ._mechanism import Domain
from ._system import StrictSystem, ToolOutcome


class TaskLike(Protocol):
    """What the oracle needs of a task (``sopbench.tasks.Task`` has it), read only."""

    @property
    def goal(self) -> str: ...
    @property
    def initial_database(self) -> Mapping[str, Any]: ...
    @property
    def constraint_parameters(self) -> Mapping[str, Any]: ...
    @property
    def user_known(self) -> Mapping[str, Any]: ...
    @property
    def constraints(self) -> Expr | None: ...


def task_oracle(
    domain: Domain,
    task: TaskLike,
    *,
    option: DependencyOption = "full",
    quirks: frozenset[str] = frozenset(),
    options: Mapping[str, Any] | None = None,
    database: Mapping[str, Any] | None = None,
    copy: bool = True,
    atomic: bool = True,
) -> StrictSystem:
    """A fresh strict system for ``task``: expanded default SOPs, the task's SOP for its goal.

    ``database``: the database to start from (default: the task's initial one); ``copy=False``
    lets the system work on that object itself (the caller hands over a private copy);
    ``atomic=False`` leaves a failing write's partial changes in place, as the published systems
    did. ``quirks`` may hold ``SESSION_BEFORE_CREDENTIALS``; ``options`` override the domain's.
    """
    dependencies = oracle_dependencies(domain.catalogue, task.goal, task.constraints, option)
    return StrictSystem(
        domain,
        task.initial_database if database is None else database,
        task.constraint_parameters,
        dependencies,
        quirks=quirks,
        copy=copy,
        atomic=atomic,
        options=options,
    )


@dataclass(frozen=True)
class ReferenceCall:
    tool: str
    arguments: dict[str, Any]


def required_actions(domain: Domain, task: TaskLike) -> list[ReferenceCall]:
    """The linked tools the task's SOP needs, in the order they must be called, with known values."""
    catalogue = domain.catalogue
    defaults = default_dependencies(catalogue, "full", expanded=True)
    order: list[ReferenceCall] = []
    seen: set[str] = set()

    def visit(expr: Expr | None, variables: Mapping[str, str]) -> None:
        for single in singles(expr):
            linked = catalogue.linked_call(single)
            if linked is None or linked[0] in seen:
                continue
            tool, params = linked
            # Variables (names in ``user_known``) for each parameter of the linked tool.
            mapping = {p: variables.get(v, v) for p, v in params.items()}
            visit(defaults.get(tool), mapping)  # the linked tool's own SOP comes first
            if tool not in seen:
                seen.add(tool)
                args = {p: task.user_known[v] for p, v in mapping.items() if v in task.user_known}
                order.append(ReferenceCall(tool, args))

    visit(task.constraints, {})
    return order


def goal_arguments(domain: Domain, task: TaskLike) -> dict[str, Any]:
    """The goal's arguments from the user's known values (parameters the user knows only)."""
    spec = domain.tools[task.goal]
    return {p: task.user_known[p] for p in spec.params if p in task.user_known}


@dataclass(frozen=True)
class ReferenceRun:
    calls: tuple[tuple[ReferenceCall, ToolOutcome], ...]
    goal_outcome: ToolOutcome | None  # None: a required action failed, the goal was not called

    @property
    def goal_succeeded(self) -> bool:
        return self.goal_outcome is not None and self.goal_outcome.ok


def run_reference_path(
    domain: Domain,
    task: TaskLike,
    *,
    quirks: frozenset[str] = frozenset(),
    stop_after_failure: bool = True,
    options: Mapping[str, Any] | None = None,
) -> ReferenceRun:
    """Run the required actions and then the goal on the task's strict oracle."""
    oracle = task_oracle(domain, task, quirks=quirks, options=options)
    done: list[tuple[ReferenceCall, ToolOutcome]] = []
    for call in required_actions(domain, task):
        outcome = oracle.execute(call.tool, call.arguments)
        done.append((call, outcome))
        if stop_after_failure and not outcome.ok:
            return ReferenceRun(tuple(done), None)
    goal = ReferenceCall(task.goal, goal_arguments(domain, task))
    outcome = oracle.execute(goal.tool, goal.arguments)
    done.append((goal, outcome))
    return ReferenceRun(tuple(done), outcome)
