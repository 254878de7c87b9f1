"""The one mechanism every domain is built on.

A domain is a ``Domain`` object: its SOP catalogue (data, ``sop.json``), plus rules written as small
decorated Python functions:

- ``@domain.tool(kind, description)`` implements one tool on the database. The function takes a
  ``Context`` first and then exactly the tool's parameters (with the published defaults). It returns
  what the published system returns: ``(True, value)`` for a successful read, ``True`` for a write,
  a failure value otherwise. The innate check of the catalogue runs *before* the body, so the body
  may assume the check passed.
- ``@domain.check(positive, negative)`` computes the truth of one constraint kind.
- ``@domain.session_effect("login_user")`` says how a tool changes the session state (logged-in
  user, admin flag) in the strict oracle.
- ``domain.describe(name, positive, negative)`` gives the wording of a constraint that is a tool.

Users define their own SOP domains through exactly this API (see docs/custom-domain.md).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

import orjson

from sopbench.constraints import Expr, Single

from ._catalogue import Catalogue, ToolSignature


class ToolKind(StrEnum):
    READ = "read"
    WRITE = "write"


READ = ToolKind.READ
WRITE = ToolKind.WRITE


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its implementation, kind, description and parameters."""

    name: str
    kind: ToolKind
    description: str
    returns: str
    impl: Callable[..., Any]
    signature: inspect.Signature
    failure: Any
    offered: bool
    schema: ToolSignature | None

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(self.signature.parameters)

    def openai_schema(self) -> dict[str, Any]:
        """The OpenAI function-calling entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": f"{self.description} {self.returns}".strip(),
                "strict": bool(self.schema and self.schema.schema_strict),
                "parameters": parameters_schema(self.schema),
            },
        }


def parameters_schema(signature: ToolSignature | None) -> dict[str, Any]:
    """A JSON schema object for a tool's parameters from the published type information."""
    properties: dict[str, Any] = {}
    for param in (signature.schema_params or ()) if signature else ():
        properties[param["name"]] = _param_schema(param)
    return {
        "type": "object",
        "properties": properties,
        "required": list(signature.required) if signature else [],
        "additionalProperties": False,
    }


def _param_schema(param: Mapping[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": param.get("type", "string")}
    for key in ("enum", "items", "description"):
        if key in param:
            schema[key] = param[key]
    shapes = param.get("object_shapes")
    if shapes:
        notes = param.get("property_descriptions", {})
        schema["properties"] = {
            k: {"type": v, **({"description": notes[k]} if k in notes else {})}
            for k, v in shapes[0].get("properties", {}).items()
        }
        schema["required"] = list(shapes[0].get("required", []))
    return schema


@dataclass(frozen=True)
class ConstraintWording:
    positive: str
    negative: str


@dataclass
class Context:
    """What a tool body or a constraint check sees: the database, the parameters, the session.

    ``call`` runs another tool of the same system (with its innate check), as a constraint check
    that reads the database through the tools would.
    """

    db: dict[str, Any]
    params: Mapping[str, Any]
    session: dict[str, Any]
    call: Callable[..., Any]
    options: Mapping[str, Any] = field(default_factory=dict)


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


# A parameter without a default in a published strict signature (see ``Domain``).
REQUIRED: Any = _Required()


class Domain:
    """A domain: catalogue data plus tool, check and session-effect rules.

    Two declarations matter only for reproducing the published evaluator (the ``sopbench``
    protocol): ``published_strict_signatures`` gives the methods of the published strict class
    that had an explicit signature (tool -> parameter -> default, ``REQUIRED`` for none; arguments
    that do not fit raised ``TypeError`` before any check), and
    ``published_strict_lacks_internal_tools`` says that class had no ``internal_*`` tools (their
    calls were neither replayed nor compared).
    """

    def __init__(
        self,
        name: str,
        catalogue: Catalogue,
        *,
        system_name: str | None = None,
        new_session: Callable[[], dict[str, Any]] = dict,
        database_model: type | None = None,
        description: str = "",
        options: Mapping[str, Any] | None = None,
        published_strict_signatures: Mapping[str, Mapping[str, Any]] | None = None,
        published_strict_lacks_internal_tools: bool = False,
    ) -> None:
        self.name = name
        self.published_strict_signatures: dict[str, dict[str, Any]] = {
            tool: dict(params) for tool, params in (published_strict_signatures or {}).items()
        }
        self.published_strict_lacks_internal_tools = published_strict_lacks_internal_tools
        self.catalogue = catalogue
        self.system_name = system_name or "".join(part.title() for part in name.split("_"))
        self.new_session = new_session
        self.database_model = database_model
        self.description = description
        # Behaviour switches of the domain itself (e.g. bank credit cards as stored vs as the
        # published code read them); systems may override them per instance.
        self.options: dict[str, Any] = dict(options or {})
        self.tools: dict[str, ToolSpec] = {}
        self.checks: dict[str, Callable[..., bool]] = {}
        self.wordings: dict[str, ConstraintWording] = {}
        self.effects: dict[str, Callable[..., None]] = {}
        self._derived: dict[str, Any] = {}

    @classmethod
    def from_sop_file(cls, name: str, path: str | Path, **kwargs: Any) -> Domain:
        return cls(name, Catalogue.from_file(path), **kwargs)

    # ---- rule registration -------------------------------------------------------------------
    def tool(
        self,
        kind: ToolKind,
        description: str,
        *,
        returns: str = "",
        failure: Any = False,
        name: str | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a tool implementation; ``failure`` is returned when the innate check fails."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            tool_name = name or fn.__name__
            if tool_name in self.tools:
                raise ValueError(f"{self.name}: tool {tool_name!r} registered twice")
            sig = inspect.signature(fn)
            params = list(sig.parameters.values())[1:]  # drop the Context parameter
            # Argument errors read like the published system's, e.g.
            # "Bank.login_user() missing 1 required positional argument: 'identification'".
            fn.__qualname__ = f"{self.system_name}.{tool_name}"
            published = self.catalogue.tools.get(tool_name)
            self.tools[tool_name] = ToolSpec(
                name=tool_name,
                kind=ToolKind(kind),
                description=description,
                returns=returns,
                impl=fn,
                signature=sig.replace(parameters=params),
                failure=failure,
                offered=published.offered if published else True,
                schema=published,
            )
            return fn

        return register

    def check(
        self, positive: str, negative: str, *, name: str | None = None
    ) -> Callable[[Callable[..., bool]], Callable[..., bool]]:
        """Register the truth function of a constraint kind with its wording."""

        def register(fn: Callable[..., bool]) -> Callable[..., bool]:
            check_name = name or fn.__name__
            if check_name in self.checks:
                raise ValueError(f"{self.name}: check {check_name!r} registered twice")
            self.checks[check_name] = fn
            self.wordings[check_name] = ConstraintWording(positive, negative)
            return fn

        return register

    def describe(self, name: str, positive: str, negative: str) -> None:
        """Wording for a constraint that is not a check (a tool-named or linked constraint)."""
        self.wordings[name] = ConstraintWording(positive, negative)

    def session_effect(self, tool: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
        """Register how ``tool`` changes the session state in the strict oracle."""

        def register(fn: Callable[..., None]) -> Callable[..., None]:
            self.effects[tool] = fn
            return fn

        return register

    # ---- queries -----------------------------------------------------------------------------
    def is_read_only(self, tool: str) -> bool:
        spec = self.tools.get(tool)
        return spec is not None and spec.kind is ToolKind.READ

    def describe_single(self, single: Single, parameters: Mapping[str, Any] | None = None) -> str:
        """The natural-language wording of one constraint, filled with variable names and parameters."""
        wording = self.wordings.get(single.name)
        if wording is None:
            from sopbench.constraints import format_single

            return format_single(single)
        template = wording.negative if single.negated else wording.positive
        values: dict[str, Any] = dict(
            parameters if parameters is not None else self.catalogue.default_parameters
        )
        values.update({param: var for param, var in single.params or ()})
        try:
            return template.format_map(_Missing(values))
        except (ValueError, IndexError):
            return template

    def validate(self) -> list[str]:
        """Problems that make the domain unusable: tools without code, constraints without a rule."""
        problems = []
        for tool in self.catalogue.tools:
            if tool not in self.tools:
                problems.append(f"{self.name}: tool {tool!r} has no implementation")
        known = set(self.tools) | set(self.checks) | set(self.catalogue.links)
        for table_name, table in (
            ("innate", self.catalogue.innate),
            ("required", self.catalogue.required),
            ("constraint_dependencies", self.catalogue.constraint_dependencies),
        ):
            for owner, expr in table.items():
                for name in _names(expr):
                    if name not in known:
                        problems.append(f"{self.name}: {table_name}[{owner!r}] names unknown {name!r}")
        for owner, pool in self.catalogue.customizable.items():
            for expr in pool:
                for name in _names(expr):
                    if name not in known:
                        problems.append(f"{self.name}: customizable[{owner!r}] names unknown {name!r}")
        return problems

    def copy_database(self, database: Mapping[str, Any]) -> dict[str, Any]:
        """A deterministic deep copy (a JSON round trip: the database is JSON data)."""
        try:
            return cast(dict[str, Any], orjson.loads(orjson.dumps(database)))
        except TypeError:  # not JSON any more (a published quirk left a non-string key)
            import copy

            return copy.deepcopy(dict(database))

    def __repr__(self) -> str:
        return f"Domain({self.name!r}, tools={len(self.tools)}, checks={len(self.checks)})"


def parse_time(text: Any, fmt: str) -> datetime:
    """``datetime.strptime(text, fmt)``, memoised for text: scoring reads the same dates thousands of times.

    Anything that is not a string goes to ``strptime`` itself, so the error (the text an agent sees
    for a bad argument) is the interpreter's own; failures are never memoised.
    """
    if type(text) is str:
        return _parse_time_text(text, fmt)
    return datetime.strptime(text, fmt)


@lru_cache(maxsize=8192)
def _parse_time_text(text: str, fmt: str) -> datetime:
    return datetime.strptime(text, fmt)  # datetimes are immutable: one object can serve every caller


def _names(expr: Expr | None) -> list[str]:
    from sopbench.constraints import singles

    return [s.name for s in singles(expr)]


class _Missing(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"
