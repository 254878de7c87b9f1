"""A goal's SOP drawn as its constraint graph, in SVG, with a layout of our own (no system package).

The graph reads left to right: the goal, then the operators (ALL of, ANY of, IN ORDER, FIRST of),
then the constraints, one per row. Each constraint is marked with its state at the moment of the
goal call: verified (it holds and the agent checked it), not verified, or false (it does not hold).
Every text is escaped here: the SVG is markup the templates insert as is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from sopbench.constraints import And, Chain, Expr, Gate, Or, Single, clip
from sopbench.scoring import ConstraintState

__all__ = ["STATE_LABELS", "constraint_graph_svg", "constraint_state_name"]

STATE_LABELS = {
    "verified": "verified",
    "unverified": "not verified",
    "false": "false",
    "false-verified": "false (and checked)",
    "unknown": "cannot be evaluated",
}
_OPERATORS = {And: "ALL of", Or: "ANY of", Chain: "IN ORDER", Gate: "FIRST of"}

_ROW = 34  # height of one constraint row
_NODE_H = 24
_CHAR = 6.6  # width of one character at the font size used
_OP_W = 78
_GAP = 36  # between columns
_PAD = 10


def constraint_state_name(state: ConstraintState | None) -> str:
    """The marking of one constraint: verified, unverified, false, false-verified or unknown."""
    if state is None or state.holds is None:
        return "unknown"
    if not state.holds:
        return "false-verified" if state.verified else "false"
    return "verified" if state.verified else "unverified"


@dataclass
class _Node:
    label: str
    title: str
    kind: str  # goal, operator, or a state name
    depth: int
    children: list[_Node] = field(default_factory=list)
    y: float = 0.0
    x: float = 0.0
    width: float = 0.0


def _build(expr: Expr, depth: int, states: Sequence[ConstraintState], position: list[int]) -> _Node:
    if isinstance(expr, Single):
        state = states[position[0]] if position[0] < len(states) else None
        position[0] += 1
        text = state.text if state is not None else ("NOT " if expr.negated else "") + expr.name
        kind = constraint_state_name(state)
        return _Node(clip(text, 56), f"{text}: {STATE_LABELS[kind]}", kind, depth)
    node = _Node(_OPERATORS[type(expr)], _OPERATORS[type(expr)], "operator", depth)
    node.children = [_build(child, depth + 1, states, position) for child in expr.children]
    return node


def _place_rows(node: _Node, row: list[int]) -> None:
    if not node.children:
        node.y = _PAD + row[0] * _ROW + _ROW / 2
        row[0] += 1
        return
    for child in node.children:
        _place_rows(child, row)
    node.y = (node.children[0].y + node.children[-1].y) / 2


def _walk(node: _Node) -> list[_Node]:
    out = [node]
    for child in node.children:
        out.extend(_walk(child))
    return out


def constraint_graph_svg(goal: str, expr: Expr | None, states: Sequence[ConstraintState]) -> Markup:
    """The SVG drawing of ``goal``'s SOP ``expr``; ``states`` are its leaves' states, left to right."""
    root = _Node(clip(goal, 40), f"the goal: {goal}", "goal", 0)
    if expr is not None:
        root.children = [_build(expr, 1, states, [0])]
    rows = [0]
    _place_rows(root, rows)
    nodes = _walk(root)
    for node in nodes:
        node.width = _OP_W if node.kind == "operator" else len(node.label) * _CHAR + 16
    columns: dict[int, float] = {}
    for node in nodes:
        columns[node.depth] = max(columns.get(node.depth, 0.0), node.width)
    left: float = _PAD
    starts = {}
    for depth in sorted(columns):
        starts[depth] = left
        left += columns[depth] + _GAP
    for node in nodes:
        node.x = starts[node.depth]
    width = left - _GAP + _PAD
    height = max(rows[0], 1) * _ROW + 2 * _PAD
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sop-graph" role="img" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" aria-label="constraint graph of {escape(goal)}">'
    ]
    for node in nodes:  # edges first, under the nodes
        for child in node.children:
            x1, y1, x2, y2 = node.x + node.width, node.y, child.x, child.y
            middle = (x1 + x2) / 2
            parts.append(
                f'<path class="edge" d="M{x1:.1f},{y1:.1f} C{middle:.1f},{y1:.1f} {middle:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"/>'
            )
        if node.label == "IN ORDER":  # a chain's order, numbered on its edges
            for number, child in enumerate(node.children, start=1):
                parts.append(
                    f'<text class="order" x="{child.x - 12:.1f}" y="{child.y - 6:.1f}">{number}</text>'
                )
    for node in nodes:
        top = node.y - _NODE_H / 2
        shape = 'rx="12"' if node.kind == "operator" else 'rx="4"'
        parts.append(
            f'<g class="node {node.kind}"><title>{escape(node.title)}</title>'
            f'<rect x="{node.x:.1f}" y="{top:.1f}" width="{node.width:.1f}" height="{_NODE_H}" {shape}/>'
            f'<text x="{node.x + 8:.1f}" y="{node.y + 4:.1f}">{escape(node.label)}</text></g>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
