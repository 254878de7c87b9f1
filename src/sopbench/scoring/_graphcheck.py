"""The published directed-action-graph check (spec §7.4), with its three defects as switches.

For every scored call of a tool (not only the goal), the sub-graph under the tool's node must be
satisfied by the calls recorded so far: ``and`` = every child, ``or`` = one child, a function node =
that tool was recorded with argument values consistent with the current call. A call that passes
is recorded, and so are the tools its innate check implies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from sopbench.constraints import ActionGraph, ToolNode, clip
from sopbench.domains import Implication
from sopbench.evaluation import UnverifiedConstraint

from ._calls import PublishedCrash, ScoredCall
from ._oracle_replay import STATUS_ERROR, STATUS_NOT_REPLAYED
from ._tables import DomainTables
from ._values import as_tuples

_WILDCARD = object()


@dataclass
class GraphCheck:
    """Switches: ``loose`` (Q6), ``failed_count`` (Q7), ``dropped_implications`` (Q5)."""

    tables: DomainTables
    task_graph: ActionGraph
    loose: bool
    failed_count: bool
    dropped_implications: bool
    called: dict[str, tuple[tuple[str, ...], set[tuple[Any, ...]]]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    unverified: list[UnverifiedConstraint] = field(default_factory=list)  # one per problem

    def run(self, calls: Sequence[ScoredCall], statuses: Sequence[int], succeeded: Sequence[bool]) -> bool:
        satisfied = True
        params = self.tables.graph_params
        for index, (call, status) in enumerate(zip(calls, statuses, strict=True)):
            if status == STATUS_ERROR or (status == STATUS_NOT_REPLAYED and not self.failed_count):
                continue
            if call.name not in params:
                continue
            graph, node = self._node_of(call.name)
            node_map = cast(ToolNode, graph.nodes[node]).params  # _node_of finds tool nodes only
            bindings = self._bindings(call.arguments, node_map)
            children = graph.child_indexes[node]
            if children and not self._holds(graph, children[0], bindings):
                satisfied = False
                self.problems.append(self._explain(call, graph, children[0], bindings))
                self.unverified.append(self._unverified(graph, children[0], bindings, 0))
                continue
            if not self.failed_count and not succeeded[index]:
                continue  # a call that failed in the agent's environment verifies nothing
            self._record(call, node_map)
        return satisfied

    def _node_of(self, tool: str) -> tuple[ActionGraph, int]:
        index = self.task_graph.first_tool_node.get(tool)
        if index is not None:
            return self.task_graph, index
        return self.tables.default_graphs[tool], 0

    def _bindings(self, arguments: Any, node_map: Mapping[str, str]) -> dict[str, Any]:
        if self.loose:
            return {var: published_get(arguments, param) for param, var in node_map.items()}
        if not isinstance(arguments, dict):
            return {}
        return {var: arguments[param] for param, var in node_map.items() if param in arguments}

    # ---- satisfaction ------------------------------------------------------------------------------
    def _holds(self, graph: ActionGraph, index: int, bindings: Mapping[str, Any]) -> bool:
        label = graph.nodes[index]
        if isinstance(label, str):
            is_and = label == "and"
            for child in graph.child_indexes[index]:
                if self._holds(graph, child, bindings) != is_and:
                    return not is_and
            return is_and
        tool, param_map = label
        recorded = self.called.get(tool)
        if recorded is None:
            return False
        keys, seen = recorded
        if self.loose:
            return _loose_match(keys, seen, param_map, bindings)
        expected = tuple(
            as_tuples(bindings[param_map[k]]) if k in param_map and param_map[k] in bindings else _WILDCARD
            for k in keys
        )
        return any(all(e is _WILDCARD or e == r for e, r in zip(expected, row, strict=False)) for row in seen)

    def _unverified(
        self, graph: ActionGraph, index: int, bindings: Mapping[str, Any], depth: int
    ) -> UnverifiedConstraint:
        """The innermost node that does not hold: a tool, an "or" none of whose branches holds,
        or what fails inside the first failing child of an "and" (the graph has no chains)."""
        label = graph.nodes[index]
        if not isinstance(label, str):
            return UnverifiedConstraint("Single", depth)
        if label == "and":
            for child in graph.child_indexes[index]:
                if not self._holds(graph, child, bindings):
                    return self._unverified(graph, child, bindings, depth + 1)
        return UnverifiedConstraint("Or" if label == "or" else label, depth)

    # ---- recording ---------------------------------------------------------------------------------
    def _record(self, call: ScoredCall, node_map: Mapping[str, str]) -> None:
        arguments = call.arguments
        if call.name not in self.called:
            self.called[call.name] = (tuple(sorted(node_map)), set())
        keys, seen = self.called[call.name]
        row = tuple(as_tuples(published_get(arguments, k)) for k in keys)
        _add(seen, row)
        if self.dropped_implications:
            self._imply_published(call.name, arguments)
        else:
            self._imply_sound(call.name, arguments)

    def _imply_published(self, tool: str, arguments: Any) -> None:
        implications = self.tables.published_implications.get(tool, ())
        if not implications:
            return
        if not isinstance(arguments, dict):
            raise PublishedCrash(f"{tool}: arguments are not a dict when its innate implications are read")
        for implication in implications:
            if not set(implication.keys) <= arguments.keys():
                continue  # published: implications whose parameter names the call lacks are dropped
            try:
                rows = {tuple(arguments[v] for v in variables) for variables in implication.variables}
            except KeyError as exc:
                raise PublishedCrash(f"{tool}: innate implication needs argument {exc}") from None
            except TypeError as exc:
                raise PublishedCrash(f"{tool}: innate implication values are unhashable ({exc})") from None
            self._merge(implication, rows)

    def _imply_sound(self, tool: str, arguments: Any) -> None:
        if not isinstance(arguments, dict):
            return
        for implication in self.tables.sound_implications.get(tool, ()):
            rows = {
                tuple(as_tuples(arguments[v]) for v in variables)
                for variables in implication.variables
                if all(v in arguments for v in variables)
            }
            existing = self.called.get(implication.tool)
            if rows and (existing is None or existing[0] == implication.keys):
                self._merge(implication, rows)

    def _merge(self, implication: Implication, rows: set[tuple[Any, ...]]) -> None:
        existing = self.called.get(implication.tool)
        if existing is None:
            self.called[implication.tool] = (implication.keys, rows)
        else:
            for row in rows:
                _add(existing[1], row)

    # ---- explanations ------------------------------------------------------------------------------
    def _explain(self, call: ScoredCall, graph: ActionGraph, index: int, bindings: Mapping[str, Any]) -> str:
        missing = self._unmet(graph, index, bindings)
        return (
            f"{call.describe()} at step {call.step}: its action graph needs {missing} before it; "
            f"call {'it' if ' or ' not in missing else 'one of them'} first"
        )

    def _unmet(self, graph: ActionGraph, index: int, bindings: Mapping[str, Any]) -> str:
        label = graph.nodes[index]
        if isinstance(label, str):
            failing = [c for c in graph.child_indexes[index] if not self._safe_holds(graph, c, bindings)]
            parts = [self._unmet(graph, c, bindings) for c in (failing or graph.child_indexes[index])]
            if label == "and":
                return parts[0] if parts else "nothing"
            return " or ".join(dict.fromkeys(parts))
        tool, param_map = label
        args = ", ".join(
            f"{param}={bindings[var]!r}" if var in bindings and bindings[var] is not None else f"{param}=?"
            for param, var in param_map.items()
        )
        return f"{tool}({args})"

    def _safe_holds(self, graph: ActionGraph, index: int, bindings: Mapping[str, Any]) -> bool:
        try:
            return self._holds(graph, index, bindings)
        except PublishedCrash:
            return False


def published_get(arguments: Any, key: str) -> Any:
    """``arguments[key] if key in arguments else None``, failing where the published code raised."""
    if isinstance(arguments, dict):
        return arguments.get(key)
    try:
        if key in arguments:
            return arguments[key]
    except TypeError as exc:
        raise PublishedCrash(f"arguments {clip(str(arguments), 40)!r} cannot be looked up ({exc})") from None
    return None


def _add(seen: set[tuple[Any, ...]], row: tuple[Any, ...]) -> None:
    try:
        seen.add(row)
    except TypeError as exc:
        raise PublishedCrash(f"recorded argument values are unhashable ({exc})") from None


def _loose_match(
    keys: tuple[str, ...],
    seen: set[tuple[Any, ...]],
    param_map: Mapping[str, str],
    bindings: Mapping[str, Any],
) -> bool:
    """Published matching (Q6): looks the *parameter name* up among the caller's variables, and a
    falsy expected value matches anything."""
    try:
        expected = tuple(as_tuples(bindings[param_map[k]]) if k in bindings else None for k in keys)
    except KeyError as exc:
        raise PublishedCrash(f"graph node lacks parameter {exc} that the caller binds") from None
    except TypeError as exc:
        raise PublishedCrash(f"argument values cannot be compared ({exc})") from None
    try:
        if expected in seen:
            return True
    except TypeError as exc:
        raise PublishedCrash(f"argument values are unhashable ({exc})") from None
    for row in seen:
        mismatch = False
        for i in range(len(row)):
            if mismatch:
                break
            if i >= len(expected):
                raise PublishedCrash("recorded values are longer than the expected ones (IndexError)")
            if expected[i] and expected[i] != row[i]:
                mismatch = True
        if not mismatch:
            return True
    return False
