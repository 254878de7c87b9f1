"""Domains: executable environments with a database, tools, an SOP catalogue and a strict oracle.

Every domain, the seven published ones included, is a ``Domain`` built with the same public API::

    from sopbench.domains import Domain, READ, WRITE, register_domain

See docs/custom-domain.md for a worked example.
"""

from collections.abc import Iterable

from sopbench.evaluation import canonical_json

from ._catalogue import Catalogue, ToolSignature, parameter_problem
from ._derive import (
    DependencyOption,
    Implication,
    cold_derivations,
    default_dependencies,
    default_dependency,
    expand,
    expanded_innate,
    innate_implications,
    oracle_dependencies,
    simplify,
)
from ._graph import action_graph, default_action_graphs
from ._mechanism import (
    READ,
    REQUIRED,
    WRITE,
    ConstraintWording,
    Context,
    Domain,
    ToolKind,
    ToolSpec,
    parameters_schema,
    parse_time,
)
from ._oracle import (
    ReferenceCall,
    ReferenceRun,
    TaskLike,
    goal_arguments,
    required_actions,
    run_reference_path,
    task_oracle,
)
from ._registry import UnknownDomain, domain_names, get_domain, register_domain
from ._simulator import (
    EXIT_TOOL,
    MAX_CALLS,
    MAX_MESSAGES,
    NEVER_OFFERED,
    NO_ACTION_NAMES,
    PLACEHOLDER_NAMES,
    TOOL_LISTS,
    ToolList,
    full_offer,
    graph_tools,
    is_no_action,
    is_placeholder,
    published_offer,
    sopbench_offer,
)
from ._system import (
    SESSION_BEFORE_CREDENTIALS,
    LenientSystem,
    OutputFormat,
    StrictSystem,
    ToolOutcome,
    parse_arguments,
    replay_calls,
    succeeded,
    tool_not_found,
    tool_not_found_text,
)

PUBLISHED_DOMAINS = ("bank", "dmv", "healthcare", "online_market", "university", "library", "hotel")


def ordered_domains(names: Iterable[str]) -> list[str]:
    """``names`` once each in the order every table and run uses: the published domains in their
    published order, then any other (custom) domain by name."""
    present = set(names)
    return [d for d in PUBLISHED_DOMAINS if d in present] + sorted(present - set(PUBLISHED_DOMAINS))

__all__ = [
    "EXIT_TOOL",
    "MAX_CALLS",
    "MAX_MESSAGES",
    "NEVER_OFFERED",
    "NO_ACTION_NAMES",
    "PLACEHOLDER_NAMES",
    "TOOL_LISTS",
    "ToolList",
    "full_offer",
    "graph_tools",
    "is_no_action",
    "is_placeholder",
    "published_offer",
    "sopbench_offer",
    "PUBLISHED_DOMAINS",
    "ordered_domains",
    "READ",
    "REQUIRED",
    "SESSION_BEFORE_CREDENTIALS",
    "UnknownDomain",
    "WRITE",
    "Catalogue",
    "ConstraintWording",
    "Context",
    "DependencyOption",
    "Domain",
    "Implication",
    "LenientSystem",
    "OutputFormat",
    "ReferenceCall",
    "ReferenceRun",
    "StrictSystem",
    "TaskLike",
    "ToolKind",
    "ToolOutcome",
    "ToolSignature",
    "ToolSpec",
    "action_graph",
    "canonical_json",
    "cold_derivations",
    "default_action_graphs",
    "default_dependencies",
    "default_dependency",
    "domain_names",
    "expand",
    "expanded_innate",
    "get_domain",
    "goal_arguments",
    "innate_implications",
    "oracle_dependencies",
    "parameter_problem",
    "parameters_schema",
    "parse_arguments",
    "parse_time",
    "register_domain",
    "replay_calls",
    "required_actions",
    "run_reference_path",
    "simplify",
    "succeeded",
    "task_oracle",
    "tool_not_found",
    "tool_not_found_text",
]
