"""An index of a database's records (dicts holding scalar fields): the search asks it which records
a value names, and which values those records hold for another variable."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ._values import walk


class Records:
    """The records of one database (dicts holding scalar fields), found by a key or a field value.

    Built once per database object: the search asks it for every candidate it follows."""

    def __init__(self, db: Any) -> None:
        self.db = db  # held so that the id this index is cached under stays this database's
        self.keyed: dict[Any, dict[str, Any]] = {}
        self.holding: dict[Any, list[dict[str, Any]]] = {}
        self.counts: dict[tuple[str, Any], int] = {}  # (field, value) -> records holding it there
        self._like: dict[str, list[str]] = {}  # variable -> the fields named like it
        for leaf in walk(db):
            if not isinstance(leaf.value, dict):
                continue
            for key, value in leaf.value.items():
                if isinstance(value, dict) and hashable_scalar(key):
                    self.keyed.setdefault(key, value)
                if leaf.path and hashable_scalar(value):
                    self.counts[(key, value)] = self.counts.get((key, value), 0) + 1
                    bucket = self.holding.setdefault(value, [])
                    if not bucket or bucket[-1] is not leaf.value:
                        bucket.append(leaf.value)

    def held(self, name: str, value: Any) -> int:
        """How many records hold ``value`` in a field named like variable ``name``."""
        if not hashable_scalar(value):
            return 0
        fields = self._like.get(name)
        if fields is None:
            fields = self._like[name] = [name] + [
                f for f in self._fields if len(f) > 3 and f != name and f in name
            ]
        return max(self.counts.get((f, value), 0) for f in fields)

    @property
    def _fields(self) -> set[str]:
        if not hasattr(self, "_field_names"):
            self._field_names = {f for f, _ in self.counts}
        return self._field_names

    def find(self, key: str) -> dict[str, Any] | None:
        """The record keyed by ``key``, else the first record with a field equal to it."""
        if key in self.keyed:
            return self.keyed[key]
        holders = self.holding.get(key)
        return holders[0] if holders else None

    def linked(self, name: str, known: Mapping[str, Any]) -> list[Any]:
        """Values for variable ``name`` read from the records that the other variables' values
        name (the old dates of a guest's reservation once the guest is chosen), records that
        match more of those values first."""
        scores: dict[int, list[Any]] = {}
        for other, value in known.items():
            if other == name or not hashable_scalar(value) or isinstance(value, bool):
                continue
            records = ([self.keyed[value]] if value in self.keyed else []) + self.holding.get(value, [])
            for record in records:
                entry = scores.setdefault(id(record), [0, record])
                entry[0] += 1
        found: list[Any] = []
        for _, record in sorted(scores.values(), key=lambda item: -item[0]):
            source = name if name in record else next((f for f in record if len(f) > 3 and f in name), None)
            if source is None:
                continue
            value = record[source]
            if hashable_scalar(value) and value not in (None, "") and value not in found:
                found.append(value)
        return found


def paths_of(db: Any, value: str) -> Iterator[tuple[Any, ...]]:
    """Paths of records keyed by ``value`` and of containers holding it."""
    for leaf in walk(db):
        if isinstance(leaf.value, dict) and value in leaf.value and leaf.path:
            yield (*leaf.path, value)
            yield leaf.path
        elif isinstance(leaf.value, dict) and value in leaf.value:
            yield (value,)
        elif isinstance(leaf.value, list) and value in leaf.value:
            yield leaf.path


def hashable_scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


_RECORDS: dict[int, Records] = {}
_RECORDS_KEPT = 64


def records_of(db: Any) -> Records:
    """The record index of a database object (a few recent ones are kept)."""
    found = _RECORDS.get(id(db))
    if found is not None and found.db is db:
        return found
    found = Records(db)
    _RECORDS[id(db)] = found
    while len(_RECORDS) > _RECORDS_KEPT:
        del _RECORDS[next(iter(_RECORDS))]
    return found


def find_record(db: Any, key: str) -> dict[str, Any] | None:
    return records_of(db).find(key)


def fewest_first(records: Any, name: str, value: Any) -> int:
    """Sort key: values that more records hold come first."""
    return -int(records.held(name, value))
