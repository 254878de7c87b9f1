"""A domain's SOP catalogue: the dependency tables that define its procedures.

The tables are data (``sop.json`` beside each domain's code): which checks every tool performs itself
(innate), the fixed and optional parts of each tool's SOP, how state constraints are made true by
calling a tool (links), which prerequisites a constraint needs before it can be evaluated, and which
helper calls let an agent verify a constraint (processes). Everything else (default SOPs, expanded
forms, action graphs) is derived from these tables in ``_derive``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from sopbench.constraints import ConstraintError, Expr, Single, clip, parse


def _parse_present(data: Any, path: str) -> Expr:
    expr = parse(data, path)
    if expr is None:
        raise ConstraintError(path, "an optional dependency cannot be null")
    return expr


@dataclass(frozen=True)
class ToolSignature:
    """A tool's parameters as the published schema gives them (types, required) plus defaults."""

    name: str
    params: tuple[str, ...]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    schema_params: tuple[Mapping[str, Any], ...] | None = None  # None: no schema is offered
    required: tuple[str, ...] = ()
    schema_strict: bool = False
    offered: bool = True


@dataclass(frozen=True)
class Catalogue:
    domain: str
    default_parameters: Mapping[str, Any]
    tools: Mapping[str, ToolSignature]
    innate: Mapping[str, Expr | None]
    required: Mapping[str, Expr | None]  # key order is the published prompt order
    customizable: Mapping[str, tuple[Expr, ...]]  # each element an independently optional constraint
    links: Mapping[str, Single]  # state constraint -> the tool call that makes it true
    constraint_dependencies: Mapping[str, Expr | None]
    processes: Mapping[str, Expr | None]
    params_user_not_needed: Mapping[str, tuple[str, ...]]
    # parameter name -> what it means, in the domain's own words (shown in every tool schema)
    parameter_descriptions: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_file(cls, path: str | Path) -> Catalogue:
        path = Path(path)
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            raise ConstraintError(str(path), f"cannot read SOP catalogue: {exc}") from exc
        return cls.from_dict(data, source=path.name)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "sop") -> Catalogue:
        def table(key: str) -> dict[str, Expr | None]:
            return {
                name: parse(expr, f"{source}:{key}[{name!r}]") for name, expr in data.get(key, {}).items()
            }

        customizable: dict[str, tuple[Expr, ...]] = {}
        for name, pool in data.get("customizable_dependencies", {}).items():
            where = f"{source}:customizable_dependencies[{name!r}]"
            if pool is None:
                customizable[name] = ()
            elif pool and isinstance(pool[0], list):  # a list of independent optional expressions
                customizable[name] = tuple(
                    _parse_present(item, f"{where}[{i}]") for i, item in enumerate(pool)
                )
            else:
                customizable[name] = (_parse_present(pool, where),)
        links = {
            constraint: Single.of(tool, mapping)
            for constraint, (tool, mapping) in data.get("constraint_links", {}).items()
        }
        descriptions = {str(k): str(v) for k, v in data.get("parameter_descriptions", {}).items()}
        tools = {}
        for entry in data.get("tools", []):
            params = entry.get("params")
            if params is not None:
                params = [_described(param, descriptions) for param in params]
            tools[entry["name"]] = ToolSignature(
                name=entry["name"],
                params=tuple(entry.get("signature", ())),
                defaults=dict(entry.get("defaults", {})),
                schema_params=None if params is None else tuple(params),
                required=tuple(entry.get("required", ())),
                schema_strict=bool(entry.get("schema_strict", False)),
                offered=bool(entry.get("offered", True)),
            )
        return cls(
            domain=data["domain"],
            default_parameters=dict(data.get("default_constraint_parameters", {})),
            tools=tools,
            innate=table("innate_dependencies"),
            required=table("required_dependencies"),
            customizable=customizable,
            links=links,
            constraint_dependencies=table("constraint_dependencies"),
            processes=table("constraint_processes"),
            params_user_not_needed={k: tuple(v) for k, v in data.get("params_user_not_needed", {}).items()},
            parameter_descriptions=descriptions,
        )

    def linked_call(self, single: Single) -> tuple[str, dict[str, str]] | None:
        """The tool call that makes constraint ``single`` true, or None when it has no link.

        Its parameters map to variables of ``single``'s namespace: the link's own mapping read
        through ``single``'s parameters, and every other graph parameter of the tool under its own
        name. (The one place the link-to-tool parameter mapping is written.)
        """
        link = self.links.get(single.name)
        if link is None:
            return None
        caller = single.param_map
        params = {p: caller.get(v, v) for p, v in link.params or ()}
        for p in self.graph_params(link.name):
            params.setdefault(p, p)
        return link.name, params

    def graph_params(self, tool: str) -> tuple[str, ...]:
        """The parameters a tool's graph node binds: its signature minus those users need not know."""
        skip = set(self.params_user_not_needed.get(tool, ()))
        return tuple(p for p in self.tools[tool].params if p not in skip)


def _described(param: Mapping[str, Any], descriptions: Mapping[str, str]) -> dict[str, Any]:
    """A schema parameter with its description: its own when the data gives one, else the domain's
    table entry for its name; the properties of its object shapes and array items likewise."""
    described = dict(param)
    if "description" not in described and param.get("name") in descriptions:
        described["description"] = descriptions[param["name"]]
    shapes = param.get("object_shapes")
    if shapes:
        described["property_descriptions"] = {
            name: descriptions[name]
            for shape in shapes
            for name in shape.get("properties", {})
            if name in descriptions
        }
    items = param.get("items")
    if isinstance(items, Mapping) and isinstance(items.get("properties"), Mapping):
        properties = {
            name: {
                **spec,
                **(
                    {"description": descriptions[name]}
                    if name in descriptions and "description" not in spec
                    else {}
                ),
            }
            for name, spec in items["properties"].items()
        }
        described["items"] = {**items, "properties": properties}
    return described


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def parameter_problem(param: Mapping[str, Any], value: Any) -> str | None:
    """Why ``value`` cannot be passed as a tool parameter described by ``param`` (a published schema
    entry: JSON type, enum, item type), or None. The scorer judges an agent's arguments with it and
    the task generator its own, so the two cannot disagree."""
    wanted = param.get("type", "string")
    kinds = [wanted] if isinstance(wanted, str) else list(wanted)
    if not any(_is_json_type(value, kind) for kind in kinds):
        shown = repr(value)
        shown = shown if shown.startswith(("'", '"')) else repr(shown)  # always quoted
        return f"must be {' or '.join(kinds)}, got {type(value).__name__} {clip(shown, 60)}"
    enum = param.get("enum")
    if enum is not None and value not in enum:
        return f"must be one of {', '.join(map(str, enum))}, got {value!r}"
    items = param.get("items")
    if isinstance(value, list) and isinstance(items, Mapping) and "type" in items:
        for item in value:
            if not _is_json_type(item, items["type"]):
                return f"must hold {items['type']} items, got {type(item).__name__}"
    return None


def _is_json_type(value: object, kind: object) -> bool:
    types = _JSON_TYPES.get(kind) if isinstance(kind, str) else None
    if types is None:
        return True
    if isinstance(value, bool) and kind in ("number", "integer"):
        return False
    return isinstance(value, types)
