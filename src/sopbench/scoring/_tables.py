"""Per-domain tables the scorer needs, derived once per domain (never per trajectory).

The published evaluator rebuilt its default dependency tables and action graphs for every call of
every trajectory; that was most of its running time. Here each table is derived from the domain's
catalogue the first time a domain is scored and kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sopbench.constraints import ActionGraph, And, Chain, Expr, Rule, Single
from sopbench.domains import (
    REQUIRED,
    Domain,
    Implication,
    default_action_graphs,
    default_dependencies,
    get_domain,
    innate_implications,
    published_offer,
)


def bind_strict_arguments(
    domain: Domain, tool: str, arguments: Mapping[str, Any], *, copy: bool = True
) -> dict[str, Any]:
    """The arguments as the published strict method received them; raises ``TypeError`` as it did.

    The signatures are the domain's ``published_strict_signatures``. ``copy=False`` hands back
    ``arguments`` itself when it is a dict that needs no binding (the caller made it fresh).
    """
    signature = domain.published_strict_signatures.get(tool)
    if signature is None:
        return arguments if not copy and type(arguments) is dict else dict(arguments)
    unexpected = [name for name in arguments if name not in signature]
    if unexpected:
        raise TypeError(f"{tool}() got an unexpected keyword argument '{unexpected[0]}'")
    bound = {}
    for name, default in signature.items():
        if name in arguments:
            bound[name] = arguments[name]
        elif default is REQUIRED:
            raise TypeError(f"{tool}() missing 1 required positional argument: '{name}'")
        else:
            bound[name] = default
    return bound


@dataclass(frozen=True)
class DomainTables:
    """Everything the scorer derives from one domain's catalogue (with one credit-card reading)."""

    domain: Domain
    options: Mapping[str, Any]
    graph_params: Mapping[str, tuple[str, ...]]  # tool -> parameters its graph node binds (sorted)
    default_graphs: Mapping[str, ActionGraph]
    published_implications: Mapping[str, tuple[Implication, ...]]
    sound_implications: Mapping[str, tuple[Implication, ...]]
    rules: Mapping[str, Rule]  # every tool's default original SOP
    verifiers: Mapping[str, Expr | None]
    offered: frozenset[str]
    strict_class_tools: frozenset[str]  # tools the published strict class has
    schemas: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    required_params: Mapping[str, frozenset[str]] = field(default_factory=dict)


def _has_offered_way(process: Expr, offered: frozenset[str]) -> bool:
    """Whether an agent given the ``offered`` tools can complete the verification process."""
    if isinstance(process, Single):
        return process.name in offered
    if isinstance(process, And | Chain):
        return all(_has_offered_way(child, offered) for child in process.children)
    return any(_has_offered_way(child, offered) for child in process.children)


_TABLES: dict[tuple[str, str | None], DomainTables] = {}


def domain_tables(name: str, credit_cards: str | None = None) -> DomainTables:
    """The tables of domain ``name`` (kept); ``credit_cards`` overrides the bank option ("list"/"dict")."""
    key = (name, credit_cards)
    tables = _TABLES.get(key)
    if tables is None:
        tables = _TABLES[key] = _derive_tables(name, credit_cards)
    return tables


def _derive_tables(name: str, credit_cards: str | None) -> DomainTables:
    domain = get_domain(name)
    options = dict(domain.options)
    if credit_cards is not None and "credit_cards" in options:
        options["credit_cards"] = credit_cards
    catalogue = domain.catalogue
    graph_params = {tool: tuple(sorted(catalogue.graph_params(tool))) for tool in domain.tools}
    graphs = default_action_graphs(catalogue)
    original_defaults = default_dependencies(catalogue, "full", expanded=False)
    offered = frozenset(published_offer(domain))
    # A constraint that only a tool no agent is offered could verify (call_get_database through
    # internal_get_database) demands no helper: the sound procedure never asks the impossible.
    verifiers: dict[str, Expr | None] = {
        name: process if process is None or _has_offered_way(process, offered) else None
        for name, process in catalogue.processes.items()
    }
    verifiers.update(catalogue.links)
    rules = {
        tool: Rule(tool, original_defaults.get(tool), domain.tools[tool].params, domain.is_read_only(tool))
        for tool in domain.tools
    }
    strict_tools = frozenset(domain.tools)
    if domain.published_strict_lacks_internal_tools:
        strict_tools = frozenset(t for t in domain.tools if not t.startswith("internal_"))
    schemas: dict[str, dict[str, Mapping[str, Any]]] = {}
    required: dict[str, frozenset[str]] = {}
    for tool, signature in catalogue.tools.items():
        if signature.schema_params is not None:
            schemas[tool] = {param["name"]: param for param in signature.schema_params}
            required[tool] = frozenset(signature.required)
    return DomainTables(
        domain=domain,
        options=options,
        graph_params=graph_params,
        default_graphs=graphs,
        published_implications=innate_implications(catalogue, published=True),
        sound_implications=innate_implications(catalogue),
        rules=rules,
        verifiers=verifiers,
        offered=offered,
        strict_class_tools=strict_tools,
        schemas=schemas,
        required_params=required,
    )


__all__ = ["DomainTables", "bind_strict_arguments", "domain_tables", "kept_tables"]


def kept_tables() -> tuple[dict[Any, Any], ...]:
    """The tables kept across runs (per domain), for benchmarks that time a cold start."""
    return (_TABLES,)
