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

from ._pools import fresh_strings

# Date layouts the published domains store (ISO dates and times, and the library's human dates).
_DATE_FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d")
_DAY_OFFSETS = (1, 2, 3, 7, 14, 29, 30, 31, 60, 89, 90, 91, 179, 180, 181, 182, 183, 364, 365, 366, 730, 1825)


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
    offsets = sorted(set(_DAY_OFFSETS) | {w for w in windows if 0 < w < 4000} | {w + 1 for w in windows if 0 < w < 4000})
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
        for leaf in walk(database):
            if isinstance(leaf.value, dict):
                if len(leaf.path) >= 1:
                    self.keys.extend(k for k in leaf.value if k not in self.keys)
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
        self.anchors = [p[0] for p in (parse_date(v) for v in database.values() if isinstance(v, str)) if p]

    def for_variable(self, name: str, kinds: tuple[str, ...], rng: random.Random) -> list[Any]:
        """Candidates for a variable, best guesses first: same-named fields, entity keys, others, fresh."""
        named = list(self.by_field.get(name, []))
        for field, values in self.by_field.items():
            if field != name and (field in name or name in field) and len(field) > 2:
                named += values
        keys = [k for k in self.keys if "string" in kinds]
        rest = [v for kind in kinds for v in self.scalars.get(kind, [])]
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
        ordered = [v for v in dict.fromkeys(map(_hashable, named + keys + rest + fresh))]
        return [_unhashable(v) for v in ordered]


def _add(table: dict[str, list[Any]], key: str, value: Any) -> None:
    bucket = table.setdefault(key, [])
    if value not in bucket or type(value) is not type(bucket[bucket.index(value)]):
        bucket.append(value)


class _Frozen(tuple):
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
