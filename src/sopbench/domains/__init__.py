"""Domains: executable environments with a database, tools, an SOP catalogue and a strict oracle.

Every domain, the seven published ones included, is a ``Domain`` built with the same public API::

    from sopbench.domains import Domain, READ, WRITE, register_domain

See docs/custom-domain.md for a worked example.
"""

from ._catalogue import Catalogue, ToolSignature
from ._mechanism import (
    READ,
    WRITE,
    ConstraintWording,
    Context,
    Domain,
    ToolKind,
    ToolSpec,
    canonical_json,
    parameters_schema,
    parse_time,
)
from ._registry import domain_names, get_domain, register_domain
from ._system import (
    SESSION_BEFORE_CREDENTIALS,
    LenientSystem,
    OutputFormat,
    StrictSystem,
    ToolOutcome,
    parse_arguments,
    succeeded,
    tool_not_found,
)

PUBLISHED_DOMAINS = ("bank", "dmv", "healthcare", "online_market", "university", "library", "hotel")

__all__ = [
    "PUBLISHED_DOMAINS",
    "READ",
    "SESSION_BEFORE_CREDENTIALS",
    "WRITE",
    "Catalogue",
    "ConstraintWording",
    "Context",
    "Domain",
    "LenientSystem",
    "OutputFormat",
    "StrictSystem",
    "ToolKind",
    "ToolOutcome",
    "ToolSignature",
    "ToolSpec",
    "canonical_json",
    "domain_names",
    "get_domain",
    "parameters_schema",
    "parse_arguments",
    "parse_time",
    "register_domain",
    "succeeded",
    "tool_not_found",
]
