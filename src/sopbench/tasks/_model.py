"""Typed tasks: one published test case (database, SOP, user knowledge, expected outcome)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeAlias

from sopbench.constraints import Expr

GroupNodeKind: TypeAlias = Literal["and", "or"]


class ToolNode(NamedTuple):
    """A graph node that asks for a tool call; ``params`` maps the tool's parameter to a task variable."""

    tool: str
    params: dict[str, str]


GraphNode: TypeAlias = GroupNodeKind | ToolNode


@dataclass(frozen=True, slots=True)
class ActionGraph:
    """Which tools must have been called before the goal: nodes and ``(from, to)`` index pairs.

    Node 0 is the goal action. "The node of tool f" means the lowest-index node named f.
    """

    nodes: tuple[GraphNode, ...]
    connections: tuple[tuple[int, int], ...]

    def children(self, index: int) -> list[int]:
        """Indices of the nodes that ``index`` points to, in file order."""
        return [to for source, to in self.connections if source == index]

    def tool_node_index(self, tool: str) -> int | None:
        """The lowest index of a node naming ``tool``."""
        for index, node in enumerate(self.nodes):
            if isinstance(node, ToolNode) and node.tool == tool:
                return index
        return None

    def to_json(self) -> dict[str, Any]:
        """The published encoding (``{"nodes": [...], "connections": [[a, b], ...]}``)."""
        return {
            "nodes": [
                node if isinstance(node, str) else [node.tool, dict(node.params)] for node in self.nodes
            ],
            "connections": [[source, to] for source, to in self.connections],
        }


@dataclass(frozen=True, slots=True)
class Task:
    """One test case of a domain.

    The dictionaries are the decoded JSON itself, shared, not copied: treat them as read-only and
    deep-copy ``initial_database`` before running a system on it.
    """

    domain: str
    goal: str
    # Position in the domain's task file (goal keys, then list order); None for a task embedded in a
    # trajectory record, whose position is not recorded (records can be misaligned, spec quirk Q15).
    index: int | None
    initial_database: dict[str, Any]
    constraint_parameters: dict[str, Any]
    user_known: dict[str, Any]
    constraints: Expr | None
    constraints_original: Expr | None
    action_should_succeed: bool
    user_instruction: str
    user_prompt: str
    directed_action_graph: ActionGraph
    # The published encodings, kept so that writing a task back is byte-exact.
    constraints_json: Any = field(default=None, repr=False, compare=False)
    constraints_original_json: Any = field(default=None, repr=False, compare=False)
    # Fields this model does not know (e.g. ``assistant_prompt`` in some trajectory files).
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
