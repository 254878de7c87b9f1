"""Directed action graphs: which tool calls must precede a call, derived from the catalogue.

The graph model is ``sopbench.constraints.ActionGraph``; this module derives graphs. Built from a goal's
*original* SOP: a linked constraint (``logged_in_user``) becomes its linking tool, any other
constraint becomes its verification process, and every tool node pulls in that tool's own default
SOP, recursively. Identical nodes are shared, so the result is a DAG.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from sopbench.constraints import ActionGraph, And, Chain, Expr, GraphNode, Single, ToolNode, rename

from ._catalogue import Catalogue
from ._derive import default_dependencies

FunctionNode: TypeAlias = tuple[str, tuple[tuple[str, str], ...]]
Node: TypeAlias = str | FunctionNode


class _Builder:
    """Accumulates nodes, sharing identical function nodes and identical groups."""

    def __init__(self, catalogue: Catalogue, defaults: Mapping[str, Expr | None]) -> None:
        self.catalogue = catalogue
        self.defaults = defaults
        self.nodes: list[Node] = []
        self.children: list[list[int]] = []
        self.index: dict[Any, int] = {}
        self.in_progress: set[FunctionNode] = set()

    def _add(self, key: Any, node: Node, children: Sequence[int]) -> int:
        if key in self.index:
            existing = self.index[key]
            for c in children:
                if c not in self.children[existing]:
                    self.children[existing].append(c)
            return existing
        self.nodes.append(node)
        self.children.append(list(children))
        self.index[key] = len(self.nodes) - 1
        return self.index[key]

    def tool(self, name: str, params: Mapping[str, str]) -> int:
        node: FunctionNode = (name, tuple(params.items()))
        key = ("fn", name, tuple(sorted(params.items())))
        if key in self.index:
            return self.index[key]
        index = self._add(key, node, [])
        if node in self.in_progress:
            return index
        self.in_progress.add(node)
        own = self.defaults.get(name)
        if own is not None:
            child = self.dependency(rename(own, dict(params)))
            if child is not None and child not in self.children[index]:
                self.children[index].append(child)
        self.in_progress.discard(node)
        return index

    def group(self, kind: str, children: list[int]) -> int:
        unique = list(dict.fromkeys(children))
        key = ("group", kind, frozenset(unique))
        return self._add(key, kind, unique)

    def dependency(self, expr: Expr | None) -> int | None:
        """The sub-graph that satisfies a constraint expression (None: nothing to call)."""
        if expr is None:
            return None
        if isinstance(expr, Single):
            return self._constraint(expr)
        kind = "and" if isinstance(expr, And | Chain) else "or"
        roots: list[int] = []
        for child in expr.children:
            root = self.dependency(child)
            if root is None or root in roots:
                continue
            # When a later child's sub-graph already holds a group equal to the siblings gathered so
            # far, that group stands for them (as the published graphs share it).
            existing = self.index.get(("group", kind, frozenset(roots))) if len(roots) > 1 else None
            if existing is not None and existing != root:
                roots = [existing]
            roots.append(root)
        if not roots:
            return None
        if len(roots) == 1:
            return roots[0]
        return self.group(kind, roots)

    def _constraint(self, single: Single) -> int | None:
        linked = self.catalogue.linked_call(single)
        if linked is not None:
            return self.tool(*linked)
        process = self.catalogue.processes.get(single.name)
        return self.process(rename(process, single.param_map))

    def process(self, expr: Expr | None) -> int | None:
        if expr is None:
            return None
        if isinstance(expr, Single):
            return self.tool(expr.name, expr.param_map)
        kind = "and" if isinstance(expr, And | Chain) else "or"
        return self.group(kind, [r for r in (self.process(c) for c in expr.children) if r is not None])

    def finish(self, root: int) -> ActionGraph:
        order = _breadth_first(root, self.children, self.nodes)
        position = {old: new for new, old in enumerate(order)}
        nodes = tuple(_as_graph_node(self.nodes[old]) for old in order)
        edges = tuple(
            (position[old], position[child])
            for old in order
            for child in sorted(self.children[old], key=position.__getitem__)
        )
        return ActionGraph(nodes, edges)


def _as_graph_node(node: Node) -> GraphNode:
    return node if isinstance(node, str) else ToolNode(node[0], dict(node[1]))  # type: ignore[return-value]


def _breadth_first(root: int, children: list[list[int]], nodes: Sequence[Node]) -> list[int]:
    """Number nodes breadth-first from the root along every path, function nodes before groups.

    A node reached by several paths takes the position of its last arrival, so that it comes after
    every node that leads to it.
    """
    last_seen: dict[int, int] = {}
    counter = 0
    queue: deque[tuple[int, frozenset[int]]] = deque([(root, frozenset())])
    while queue:
        current, path = queue.popleft()
        if current in path:
            continue
        path = path | {current}
        kids = sorted(children[current], key=lambda c: (isinstance(nodes[c], str), c))
        queue.extend((child, path) for child in kids)
        last_seen[current] = counter
        counter += 1
    return sorted(last_seen, key=last_seen.__getitem__)


def action_graph(
    catalogue: Catalogue,
    goal: str,
    constraints_original: Expr | None,
    defaults: Mapping[str, Expr | None] | None = None,
) -> ActionGraph:
    """The directed action graph of a goal with its (original, unexpanded) SOP."""
    defaults = defaults if defaults is not None else default_dependencies(catalogue, "full", expanded=False)
    builder = _Builder(catalogue, defaults)
    params = {p: p for p in catalogue.graph_params(goal)}
    root = builder._add(("goal",), (goal, tuple(params.items())), [])
    child = builder.dependency(constraints_original)
    if child is not None:
        builder.children[root].append(child)
    return builder.finish(root)


def default_action_graphs(catalogue: Catalogue) -> dict[str, ActionGraph]:
    """For every tool, the graph of its default SOP (used for calls outside a task's graph)."""
    defaults = default_dependencies(catalogue, "full", expanded=False)
    return {tool: action_graph(catalogue, tool, defaults.get(tool), defaults) for tool in catalogue.tools}
