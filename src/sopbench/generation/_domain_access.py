"""The one place the generator reaches into the domain package's derived SOPs and oracle."""

# adapter: the lead switches this to the public API at merge

from __future__ import annotations

from sopbench.domains._derive import default_dependencies, expand, simplify
from sopbench.domains._graph import action_graph
from sopbench.domains._oracle import goal_arguments, required_actions, run_reference_path

__all__ = [
    "action_graph",
    "default_dependencies",
    "expand",
    "goal_arguments",
    "required_actions",
    "run_reference_path",
    "simplify",
]
