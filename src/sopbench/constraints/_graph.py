"""Directed action graphs: which tool calls must precede a call.

A graph has tool nodes ``(tool, {param: variable})`` and ``"and"``/``"or"`` nodes; node 0 is the
action the graph is about. To call a tool node's tool correctly, the sub-graph under it must
already be satisfied: ``and`` = every child, ``or`` = at least one, a tool node = that tool was
called earlier. "The node of tool f" means the lowest-index node naming f.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeAlias, cast

GroupNodeKind: TypeAlias = Literal["and", "or"]


class ToolNode(NamedTuple):
    """A graph node that asks for a tool call; ``params`` maps the tool's parameter to a variable."""

    tool: str
    params: dict[str, str]


GraphNode: TypeAlias = GroupNodeKind | ToolNode


def _group_kind(node: str) -> GroupNodeKind:
    if node not in ("and", "or"):
        raise ValueError(f'a graph node is a tool or "and"/"or", not {node!r}')
    return cast(GroupNodeKind, node)


@dataclass(frozen=True, slots=True)
class ActionGraph:
    """Nodes and ``(from, to)`` index pairs, in the published encoding's order.

    Derived once, for checking calls against the graph: ``child_indexes[i]`` (the distinct nodes
    ``i`` points to, in index order) and ``first_tool_node`` (tool -> its lowest node index).
    """

    nodes: tuple[GraphNode, ...]
    connections: tuple[tuple[int, int], ...]
    child_indexes: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)
    first_tool_node: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        kids: list[set[int]] = [set() for _ in self.nodes]
        for source, target in self.connections:
            kids[source].add(target)
        first: dict[str, int] = {}
        for index, node in enumerate(self.nodes):
            if not isinstance(node, str):
                first.setdefault(node.tool, index)
        object.__setattr__(self, "child_indexes", tuple(tuple(sorted(k)) for k in kids))
        object.__setattr__(self, "first_tool_node", first)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ActionGraph:
        """From the published encoding, trusted (the task loader validates it with paths)."""
        nodes: list[GraphNode] = [
            _group_kind(node) if isinstance(node, str) else ToolNode(node[0], dict(node[1] or {}))
            for node in data.get("nodes", [])
        ]
        return cls(tuple(nodes), tuple((int(a), int(b)) for a, b in data.get("connections", [])))

    def children(self, index: int) -> list[int]:
        """Indices of the nodes that ``index`` points to, in file order."""
        return [to for source, to in self.connections if source == index]

    def tool_node_index(self, tool: str) -> int | None:
        """The lowest index of a node naming ``tool``."""
        return self.first_tool_node.get(tool)

    def function_names(self) -> set[str]:
        """The tools the graph names (the published ``oracle`` tool list of a task)."""
        return {node.tool for node in self.nodes if isinstance(node, ToolNode)}

    def to_json(self) -> dict[str, Any]:
        """The published encoding (``{"nodes": [...], "connections": [[a, b], ...]}``)."""
        return {
            "nodes": [
                node if isinstance(node, str) else [node.tool, dict(node.params)] for node in self.nodes
            ],
            "connections": [[source, to] for source, to in self.connections],
        }

    def canonical(self, root: int = 0) -> Hashable:
        """A numbering-independent form: equal for graphs with the same structure and labels."""
        children: list[list[int]] = [[] for _ in self.nodes]
        for source, to in self.connections:
            children[source].append(to)
        memo: dict[int, Hashable] = {}

        def canon(index: int) -> Hashable:
            if index not in memo:
                node = self.nodes[index]
                below = frozenset(canon(c) for c in children[index])
                memo[index] = (
                    (node, below)
                    if isinstance(node, str)
                    else (node.tool, tuple(sorted(node.params.items())), below)
                )
            return memo[index]

        return canon(root)
