"""Candidate values: what a variable, a database field or a constraint parameter may be set to.

Every candidate comes from the domain's own state (keys and fields of the world database, the
parameters' defaults), from shifts of those values (amounts around a threshold, dates around
"now" by the domain's windows), or from the seeded value pools (names, addresses, identifiers)
for things that must not exist yet. Nothing here knows a domain by name.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sopbench.domains import parameter_problem as argument_problem

from ._pools import fresh_strings

# Date layouts the published domains store (ISO dates and times, and the library's human dates).
_DATE_FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d")
_DAY_OFFSETS = (1, 2, 3, 7, 14, 29, 30, 31, 60, 89, 90, 91, 179, 180, 181, 182, 183, 364, 365, 366, 730, 1825)
CANDIDATE_LIMIT = 80  # stored and shifted values tried per variable (fresh pool values come on top)
_YEAR_OFFSETS = (5900, 6600, 11000)  # about 16, 18 and 30 years: ages around the usual minimums


@dataclass(frozen=True)
class Leaf:
    """A place in the database: its path, the name of its field, its value."""

    path: tuple[Any, ...]
    field: str
    value: Any


def walk(data: Any, path: tuple[Any, ...] = (), field: str = "") -> Iterator[Leaf]:
    """Every node of a JSON document (containers too), depth first, in document order."""
    yield Leaf(path, field, data)
    if isinstance(data, dict):
        for key, value in data.items():
            yield from walk(value, (*path, key), str(key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from walk(value, (*path, i), field)


def get_path(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


# ---- dates ------------------------------------------------------------------------------------


def _ordinal(day: int) -> str:
    if 11 <= day % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def parse_date(text: Any) -> tuple[datetime, str] | None:
    """A date or time in one of the stored layouts, with the layout (``human`` for "March 3rd, 2025")."""
    if not isinstance(text, str) or not 8 <= len(text) <= 25:
        return None
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt), fmt
        except ValueError:
            continue
    parts = text.replace(",", "").split()
    if len(parts) == 3 and parts[1][:-2].isdigit() and parts[1][-2:] in ("st", "nd", "rd", "th"):
        try:
            return datetime.strptime(f"{parts[0]} {parts[1][:-2]} {parts[2]}", "%B %d %Y"), "human"
        except ValueError:
            return None
    return None


def format_date(moment: datetime, layout: str) -> str:
    if layout == "human":
        return f"{moment.strftime('%B')} {moment.day}{_ordinal(moment.day)}, {moment.year}"
    return moment.strftime(layout)


def date_shifts(text: str, anchors: list[datetime], windows: list[int]) -> list[str]:
    """Dates near ``text`` and near each anchor ("now"), by the windows the rules use."""
    parsed = parse_date(text)
    if parsed is None:
        return []
    moment, layout = parsed
    offsets = sorted(
        set(_DAY_OFFSETS)
        | set(_YEAR_OFFSETS)
        | {w for w in windows if 0 < w < 4000}
        | {w + 1 for w in windows if 0 < w < 4000}
    )
    out: list[str] = []
    for base in [moment, *anchors]:
        if layout != "%Y-%m-%d" and layout != "human":
            base_time = base
        else:
            base_time = base.replace(hour=0, minute=0, second=0)
        for days in offsets:
            for sign in (1, -1):
                out.append(format_date(base_time + timedelta(days=sign * days), layout))
        out.append(format_date(base_time, layout))
        if layout not in ("%Y-%m-%d", "human"):
            for hours in (1, 3, 12, 47, 49):
                for sign in (1, -1):
                    out.append(format_date(base_time + timedelta(hours=sign * hours), layout))
    return list(dict.fromkeys(o for o in out if o != text))


# ---- numbers ----------------------------------------------------------------------------------


def number_shifts(value: Any, references: list[float]) -> list[Any]:
    """Numbers around ``value`` and around each reference (a threshold, another amount)."""
    as_int = isinstance(value, int) and not isinstance(value, bool)
    candidates: list[float] = [0]
    for ref in [value, *references]:
        if isinstance(ref, bool) or not isinstance(ref, int | float):
            continue
        candidates += [ref, ref + 1, ref - 1, ref * 2, ref / 2, ref + 100, ref * 10, -ref if ref else -5]
    out = []
    for c in candidates:
        c = round(c) if as_int or float(c).is_integer() else round(c, 2)
        if isinstance(value, float) and not as_int:
            c = float(c)
        out.append(c)
    return [c for c in dict.fromkeys(out) if c != value]


# ---- world catalogue ---------------------------------------------------------------------------


class WorldIndex:
    """What a world database offers as values: keys of its collections and values of its fields."""

    def __init__(self, database: Mapping[str, Any]) -> None:
        self.keys: list[Any] = []  # keys of every dict below the top level (entity identifiers)
        self.by_field: dict[str, list[Any]] = {}  # scalar values by the field that holds them
        self.containers: dict[str, list[Any]] = {}  # container values (dicts, lists) by field
        self.scalars: dict[str, list[Any]] = {}  # every scalar by kind
        minor_keys: list[Any] = []  # field names of records: tried after every stored value
        for leaf in walk(database):
            if isinstance(leaf.value, dict):
                if len(leaf.path) >= 1:
                    target = self.keys if _is_collection(leaf.value) else minor_keys
                    target.extend(k for k in leaf.value if k not in target)
                self.containers.setdefault(leaf.field, []).append(leaf.value)
            elif isinstance(leaf.value, list):
                self.containers.setdefault(leaf.field, []).append(leaf.value)
                for item in leaf.value:
                    if not isinstance(item, dict | list):
                        _add(self.by_field, leaf.field, item)
                        _add(self.scalars, json_kind(item), item)
            else:
                _add(self.by_field, leaf.field, leaf.value)
                _add(self.scalars, json_kind(leaf.value), leaf.value)
        self.minor_keys = [k for k in minor_keys if k not in self.keys]
        self.stored = {v for v in self.keys + minor_keys if isinstance(v, str)} | {
            v for v in self.scalars.get("string", []) if isinstance(v, str)
        }
        self.anchors = [p[0] for p in (parse_date(v) for v in database.values() if isinstance(v, str)) if p]

    def for_variable(
        self, name: str, kinds: tuple[str, ...], rng: random.Random, thresholds: list[float] | None = None
    ) -> list[Any]:
        """Candidates for a variable, best guesses first: same-named fields, entity keys, others, fresh.

        Dates come with shifts around "now" by the domain's windows, numbers with values around the
        thresholds (the constraint parameters).
        """
        named = list(self.by_field.get(name, []))
        for field, values in self.by_field.items():
            if field != name and (field in name or name in field) and len(field) > 2:
                named += values
        windows = [int(t) for t in thresholds or () if float(t).is_integer()]
        shifts: list[Any] = []
        if "string" in kinds and ("date" in name or "time" in name or any(parse_date(v) for v in named[:3])):
            stored = [v for v in self.scalars.get("string", []) if parse_date(v)]
            layouts = [v for v in named if parse_date(v)][:1] or [
                format_date(a, "%Y-%m-%d") for a in self.anchors[:1]
            ] + [format_date(a, "%Y-%m-%dT%H:%M:%S") for a in self.anchors[:1]]
            named += stored
            for example in layouts:
                shifts += date_shifts(example, self.anchors, windows)
        if "number" in kinds:
            # A generous and a token amount first (they settle most "enough money" checks either
            # way), then values around the thresholds and multiples of the stored amounts.
            money = any(word in name for word in _MONEY_WORDS)
            # For a sum of money a generous and a token amount come first (they settle most "enough
            # money" checks either way); for a count, small numbers. Then values around the
            # thresholds and multiples of the stored amounts.
            named += ([25000, 1] if money else [1, 2, 3]) + number_shifts(0, list(thresholds or ()))
            stored = [v for v in self.scalars.get("number", []) if isinstance(v, int | float) and v > 0]
            named += [round(v * k, 2) for v in stored[:20] for k in (1, 2, 3, 5, 12)]
        if "string" in kinds:
            # Identifiers that are not on file, shaped like those that are ("CLM-001" -> "CLM-583").
            named += [
                _reshaped(v, rng)
                for v in named[:3]
                if isinstance(v, str) and any(c.isdigit() for c in v) and not parse_date(v)
            ]
        keys = [k for k in self.keys if "string" in kinds]
        rest = [v for kind in kinds for v in self.scalars.get(kind, [])]
        if "string" in kinds:
            rest += self.minor_keys
        fresh: list[Any] = []
        if "string" in kinds:
            fresh = fresh_strings(name, rng, 3, avoid=set(map(str, self.keys)) | {str(v) for v in rest})
        if "number" in kinds or "integer" in kinds:
            fresh += [50, 120.5, 1000, 2500]
        if "boolean" in kinds:
            fresh += [True, False]
        if "object" in kinds and name in self.containers:
            fresh += [c for c in self.containers[name] if isinstance(c, dict)]
        if "array" in kinds:
            fresh += [c for c in self.containers.get(name, []) if isinstance(c, list)]
        # Fresh names come before other collections' keys: a user who must not exist is then a
        # new person, not a currency code.
        words = [v for v in fresh if isinstance(v, str)]
        ordered = [v for v in dict.fromkeys(map(_hashable, named + words + keys + rest + shifts))][
            :CANDIDATE_LIMIT
        ]
        ordered += [
            v for v in map(_hashable, fresh) if v not in ordered
        ]  # an absent value is always on offer
        return [_unhashable(v) for v in ordered if v != ""]  # a user never "knows" an empty value


_MONEY_WORDS = ("amount", "price", "fee", "income", "coverage", "balance", "cash", "assets", "payment")


def _reshaped(value: str, rng: random.Random) -> str:
    """The same shape with other digits: an identifier of the same kind that is not on file."""
    digits = "0123456789"
    return "".join(rng.choice(digits) if c.isdigit() else c for c in value)


def _is_collection(mapping: Mapping[str, Any]) -> bool:
    """A dict keyed by identifiers (users, plates, dates), not a record keyed by field names."""
    values = list(mapping.values())
    if values and (all(isinstance(v, dict) for v in values) or all(isinstance(v, list) for v in values)):
        return True
    return any(isinstance(k, str) and not k.replace("_", "").islower() for k in mapping)


def _add(table: dict[str, list[Any]], key: str, value: Any) -> None:
    bucket = table.setdefault(key, [])
    if value not in bucket or type(value) is not type(bucket[bucket.index(value)]):
        bucket.append(value)


class _Frozen(tuple[bytes]):
    """A dict or list made hashable for de-duplication (never leaves this module)."""


def _hashable(value: Any) -> Any:
    if isinstance(value, dict | list):
        import orjson

        return _Frozen((orjson.dumps(value, option=orjson.OPT_SORT_KEYS),))
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, float):
        return ("float", value)
    return value


def _unhashable(value: Any) -> Any:
    if isinstance(value, _Frozen):
        import orjson

        return orjson.loads(value[0])
    if isinstance(value, tuple) and len(value) == 2 and value[0] in ("bool", "float"):
        return value[1]
    return value


def structured_candidates(
    schema: Mapping[str, Any], index: WorldIndex, parameters: Mapping[str, Any], limit: int = 40
) -> list[Any]:
    """Arrays and objects built from a tool's parameter schema, their fields filled from the world."""
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    listed = [x for v in parameters.values() if isinstance(v, list) for x in v if isinstance(x, str)]
    out: list[Any] = []

    def strings_for(prop: str) -> list[Any]:
        values = (
            [v for v in index.by_field.get(prop, []) if isinstance(v, str)]
            + listed
            + index.keys
            + index.minor_keys
        )
        if "birth" in prop or "date" in prop:
            values = date_shifts(format_date(index.anchors[0], "%Y-%m-%d"), [], []) if index.anchors else []
        return list(dict.fromkeys(values))[: limit * 2]

    def build(properties: Mapping[str, Any]) -> list[dict[str, Any]]:
        fields = list(properties.items())
        if not fields:
            return []
        rows: list[dict[str, Any]] = []
        base = {
            name: (
                1 if (spec if isinstance(spec, str) else spec.get("type")) in ("integer", "number") else None
            )
            for name, spec in fields
        }
        string_fields = [n for n, v in base.items() if v is None]
        if not string_fields:
            return [base]
        first, rest = string_fields[0], string_fields[1:]
        rest_values = {n: strings_for(n) for n in rest}
        for value in strings_for(first):
            row = {**base, first: value}
            for n in rest:
                row[n] = rest_values[n][0] if rest_values[n] else ""
            rows.append(row)
            for n in rest:
                for other in rest_values[n][1:8]:
                    rows.append({**row, n: other})
        return rows[: limit * 4]

    if "array" in kinds:
        items = schema.get("items", {})
        if items.get("type") == "object":
            out += [[row] for row in build(items.get("properties", {}))]
        else:
            elements = list(
                dict.fromkeys(
                    item
                    for containers in index.containers.values()
                    for container in containers
                    if isinstance(container, list)
                    for item in container
                    if isinstance(item, str)
                )
            )
            out += [[v] for v in elements[:limit]] + [
                elements[i : i + 2] for i in range(min(len(elements) - 1, limit))
            ]
    if "object" in kinds:
        for shape in schema.get("object_shapes", ()):
            out += build(shape.get("properties", {}))
    return out


def fits_schema(entry: Mapping[str, Any], value: Any) -> bool:
    """Whether a value can be passed as this tool parameter (its JSON type, enum and item type),
    judged exactly as the scorer judges an agent's arguments."""
    return argument_problem(entry, value) is None
