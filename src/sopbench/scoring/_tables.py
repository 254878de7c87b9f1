"""Per-domain tables the scorer needs, derived once per domain (never per trajectory).

The published evaluator rebuilt its default dependency tables and action graphs for every call of
every trajectory; that was most of its running time. Here each table is derived from the domain's
catalogue the first time a domain is scored and kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from sopbench.constraints import ActionGraph, And, Chain, Expr, Gate, Not, Rule, Single, rename, singles
from sopbench.domains import Domain, default_action_graphs, default_dependencies, get_domain, simplify

_REQUIRED = object()

# The published university strict class delegates only its login/logout and service tools; the
# ``internal_*`` look-ups exist on the lenient system alone (spec §3.1), so the published evaluator
# gave their calls status 1 (not replayed, not compared).
DOMAINS_WHOSE_STRICT_CLASS_LACKS_INTERNAL_TOOLS = frozenset({"university"})

# The published strict classes give a few methods an explicit signature (all others take
# ``**kwargs`` and go straight to the SOP check): arguments that do not fit raise TypeError before
# any check, and a missing login credential defaults to None. Parameter names -> defaults.
_LOGIN_AND_LOGOUT = {"logout_user": {"username": _REQUIRED}}
_ADMIN = {"authenticate_admin_password": {"username": _REQUIRED, "admin_password": _REQUIRED}}
PUBLISHED_STRICT_SIGNATURES: dict[str, dict[str, dict[str, Any]]] = {
    "bank": {"login_user": {"username": _REQUIRED, "identification": None}, **_LOGIN_AND_LOGOUT, **_ADMIN},
    "dmv": {"login_user": {"username": _REQUIRED, "identification": None}, **_LOGIN_AND_LOGOUT, **_ADMIN},
    "healthcare": {"login_user": {"username": _REQUIRED, "identification": None}, **_LOGIN_AND_LOGOUT},
    "library": {"login_user": {"username": _REQUIRED, "password": None}, **_LOGIN_AND_LOGOUT},
    "online_market": {"login_user": {"username": _REQUIRED, "password": None}, **_LOGIN_AND_LOGOUT},
    "university": {
        "login_user": {"username": _REQUIRED, "password": _REQUIRED},
        **_LOGIN_AND_LOGOUT,
        **{
            service: dict.fromkeys(params, _REQUIRED)
            for service, params in {
                "enroll_course": ("username", "course_code"),
                "drop_course": ("username", "course_code"),
                "request_graduation": ("username",),
                "apply_financial_aid": ("username",),
                "change_major": ("username", "new_major"),
                "declare_minor": ("username", "minor"),
            }.items()
        },
    },
}


def bind_strict_arguments(
    domain: str, tool: str, arguments: Mapping[str, Any], *, copy: bool = True
) -> dict[str, Any]:
    """The arguments as the published strict method received them; raises ``TypeError`` as it did.

    ``copy=False`` hands back ``arguments`` itself when it is a dict that needs no binding (the
    caller made it fresh for this call).
    """
    signature = PUBLISHED_STRICT_SIGNATURES.get(domain, {}).get(tool)
    if signature is None:
        return arguments if not copy and type(arguments) is dict else dict(arguments)
    unexpected = [name for name in arguments if name not in signature]
    if unexpected:
        raise TypeError(f"{tool}() got an unexpected keyword argument '{unexpected[0]}'")
    bound = {}
    for name, default in signature.items():
        if name in arguments:
            bound[name] = arguments[name]
        elif default is _REQUIRED:
            raise TypeError(f"{tool}() missing 1 required positional argument: '{name}'")
        else:
            bound[name] = default
    return bound


@dataclass(frozen=True, slots=True)
class Graph:
    """An action graph ready for checking: node labels, child lists, first node of each tool."""

    labels: tuple[Any, ...]  # "and" / "or" / (tool, {param: variable})
    children: tuple[tuple[int, ...], ...]
    first_node: Mapping[str, int]

    @classmethod
    def build(cls, labels: Sequence[Any], edges: Sequence[tuple[int, int]]) -> Graph:
        kids: list[list[int]] = [[] for _ in labels]
        for source, target in edges:
            if target not in kids[source]:
                kids[source].append(target)
        first: dict[str, int] = {}
        for index, label in enumerate(labels):
            if not isinstance(label, str):
                first.setdefault(label[0], index)
        return cls(tuple(labels), tuple(tuple(sorted(k)) for k in kids), first)


@dataclass(frozen=True, slots=True)
class Implication:
    """A tool recorded as called when a call passes: its key names and the caller variables per key."""

    tool: str
    keys: tuple[str, ...]  # the implied tool's parameter names, sorted
    variables: tuple[tuple[str, ...], ...]  # per recorded tuple: the caller's variable for each key


@dataclass(frozen=True)
class DomainTables:
    """Everything the scorer derives from one domain's catalogue (with one credit-card reading)."""

    domain: Domain
    options: Mapping[str, Any]
    graph_params: Mapping[str, tuple[str, ...]]  # tool -> parameters its graph node binds (sorted)
    default_graphs: Mapping[str, Graph]
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


@cache
def domain_tables(name: str, credit_cards: str | None = None) -> DomainTables:
    """The tables of domain ``name``; ``credit_cards`` overrides the bank option ("list"/"dict")."""
    domain = get_domain(name)
    options = dict(domain.options)
    if credit_cards is not None and "credit_cards" in options:
        options["credit_cards"] = credit_cards
    catalogue = domain.catalogue
    graph_params = {tool: tuple(sorted(catalogue.graph_params(tool))) for tool in domain.tools}
    graphs = {tool: task_graph(graph) for tool, graph in default_action_graphs(catalogue).items()}
    expanded_defaults = default_dependencies(catalogue, "full", expanded=True)
    original_defaults = default_dependencies(catalogue, "full", expanded=False)
    expanded_innate = {
        tool: simplify(_expand_innate(expr, domain, expanded_defaults, depth=0))
        for tool, expr in catalogue.innate.items()
        if expr is not None
    }
    offered = frozenset(t for t, spec in domain.tools.items() if spec.offered)
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
    if name in DOMAINS_WHOSE_STRICT_CLASS_LACKS_INTERNAL_TOOLS:
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
        published_implications={
            tool: _published_implications(expr, domain, graph_params)
            for tool, expr in expanded_innate.items()
        },
        sound_implications={
            tool: _sound_implications(expr, graph_params) for tool, expr in expanded_innate.items()
        },
        rules=rules,
        verifiers=verifiers,
        offered=offered,
        strict_class_tools=strict_tools,
        schemas=schemas,
        required_params=required,
    )


_GRAPHS: dict[int, tuple[ActionGraph, Graph]] = {}


def task_graph(directed_action_graph: ActionGraph) -> Graph:
    """An action graph (a task's published one, or a derived default) ready for checking.

    Kept for the graph object while it lives (the runs of one record share their task's graph).
    """
    cached = _GRAPHS.get(id(directed_action_graph))
    if cached is not None and cached[0] is directed_action_graph:
        return cached[1]
    graph = _build_graph(directed_action_graph)
    if len(_GRAPHS) > 4096:
        _GRAPHS.clear()
    _GRAPHS[id(directed_action_graph)] = (directed_action_graph, graph)
    return graph


def _build_graph(directed_action_graph: ActionGraph) -> Graph:
    labels = [
        node if isinstance(node, str) else (node.tool, node.params) for node in directed_action_graph.nodes
    ]
    return Graph.build(labels, directed_action_graph.connections)


# ---- innate implications -------------------------------------------------------------------------
def expanded_innate(domain: Domain, tool: str) -> Expr | None:
    """A tool's innate dependency with links, innate checks, defaults and prerequisites inserted."""
    expr = domain.catalogue.innate.get(tool)
    if expr is None:
        return None
    defaults = default_dependencies(domain.catalogue, "full", expanded=True)
    return simplify(_expand_innate(expr, domain, defaults, depth=0))


def _expand_innate(
    expr: Expr | None, domain: Domain, defaults: Mapping[str, Expr | None], depth: int
) -> Expr | None:
    """Put in front of every single what must hold before it: its link's tool, or the single's own
    innate check, default SOP and constraint prerequisites (in that order), as the published
    evaluator did before reading innate implications (spec §7.4)."""
    if expr is None or depth > 16:
        return expr
    catalogue = domain.catalogue
    if not isinstance(expr, Single):
        return type(expr)(_expand_innate(child, domain, defaults, depth + 1) for child in expr.children)
    link = catalogue.links.get(expr.name)
    if link is not None:
        caller = expr.param_map
        params = {p: caller.get(v, v) for p, v in link.params or ()}
        for p in catalogue.graph_params(link.name):
            params.setdefault(p, p)
        return _expand_innate(
            Single(link.name, tuple(params.items()), expr.negated), domain, defaults, depth + 1
        )
    parts: list[Expr] = []
    for table in (catalogue.innate, defaults, catalogue.constraint_dependencies):
        before = table.get(expr.name)
        if before is None:
            continue
        before = _expand_innate(rename(before, expr.param_map), domain, defaults, depth + 1)
        if before is not None:
            parts.append(Not(before) if expr.negated else before)  # type: ignore[arg-type]
    if not parts:
        return expr
    return (Gate if expr.negated else Chain)([*parts, expr])


def _first_leaf(expr: Expr) -> Single:
    while not isinstance(expr, Single):
        expr = expr.children[0]
    return expr


def _published_implications(
    expr: Expr, domain: Domain, graph_params: Mapping[str, tuple[str, ...]]
) -> tuple[Implication, ...]:
    """Published reading (Q5): only the first leaf of the expanded innate dependency is looked at."""
    leaf = _first_leaf(expr)
    mapping = leaf.param_map
    if leaf.name in graph_params:
        keys = tuple(sorted(mapping))
        return (Implication(leaf.name, keys, (tuple(mapping[k] for k in keys),)),)
    if leaf.name not in domain.catalogue.processes:
        return ()
    grouped: dict[str, tuple[tuple[str, ...], list[tuple[str, ...]]]] = {}
    for single in {s.positive for s in singles(domain.catalogue.processes[leaf.name])}:
        renamed = {p: mapping.get(v, v) for p, v in single.params or ()}
        if single.name not in grouped:
            grouped[single.name] = (tuple(sorted(renamed)), [])
        keys, values = grouped[single.name]
        values.append(tuple(renamed[k] for k in keys))
    return tuple(Implication(tool, keys, tuple(values)) for tool, (keys, values) in grouped.items())


def _sound_implications(expr: Expr, graph_params: Mapping[str, tuple[str, ...]]) -> tuple[Implication, ...]:
    """Every tool-named single of the innate dependency, bound through the caller's variables."""
    found: dict[str, tuple[tuple[str, ...], list[tuple[str, ...]]]] = {}
    for single in singles(expr):
        if single.name not in graph_params:
            continue
        mapping = single.param_map
        keys = tuple(sorted(mapping))
        entry = found.setdefault(single.name, (keys, []))
        if entry[0] == keys and tuple(mapping[k] for k in keys) not in entry[1]:
            entry[1].append(tuple(mapping[k] for k in keys))
    return tuple(Implication(tool, keys, tuple(values)) for tool, (keys, values) in found.items())


__all__ = [
    "DOMAINS_WHOSE_STRICT_CLASS_LACKS_INTERNAL_TOOLS",
    "DomainTables",
    "Graph",
    "Implication",
    "bind_strict_arguments",
    "domain_tables",
    "expanded_innate",
    "task_graph",
]
