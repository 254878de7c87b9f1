"""What a runtime guard keeps of the texts it writes: ``value_key``, the one rule for keying a text by
the values it shows, and ``KeptTexts``, the bounded store of texts so keyed.

A refusal's texts are a function of the values they show, and a conversation refuses the same parts
for the same user again and again (an agent retries; other actions share the parts), so the texts
are kept; a guard serves many conversations, so only the latest few hundred per store.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic, TypeVar

Kept = TypeVar("Kept")

_KEYED_TYPES = frozenset({str, int, bool, type(None)})


def value_key(values: Iterable[Any]) -> tuple[Any, ...] | None:
    """A key for what is written from ``values`` alone (equal keys, equal texts), or None: how the
    guard keeps refusal texts by the values they show. Text, whole numbers, booleans and None are
    keyed by type and value (1, 1.0 and True are equal but written apart); floats by their rendering
    (0.0 and -0.0 are equal but written apart); NaN (equal to nothing) and other types (a tuple from
    a list, an object) are not keyed."""
    key: list[Any] = []
    for value in values:
        kind = type(value)
        if kind in _KEYED_TYPES:
            key += (kind, value)
        elif kind is float and value == value:
            key += (kind, repr(value))
        else:
            return None
    return tuple(key)


class KeptTexts(Generic[Kept]):
    """Texts (or what is made with them) by a key built with ``value_key``: the latest ``limit``.

    When full, the oldest is dropped, one for each kept: dropping them all at once would free
    hundreds of texts and their objects within one refusal (about 0.4 ms, for one first refusal in
    every few hundred). A store may be shared by threads (a guard's rules are): one that finds the
    oldest gone, or the store changed, under it looks again."""

    __slots__ = ("_kept", "_limit")

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"a store of kept texts keeps at least one, not {limit}")
        self._kept: dict[tuple[Any, ...], Kept] = {}
        self._limit = limit

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, key: tuple[Any, ...]) -> Kept | None:
        return self._kept.get(key)

    def keep(self, key: tuple[Any, ...], made: Kept) -> Kept:
        """Keep ``made`` under ``key`` (dropping the oldest when full); returns ``made``."""
        kept = self._kept
        while len(kept) >= self._limit and key not in kept:
            try:
                del kept[next(iter(kept))]  # insertion order: the first is the oldest
            except (KeyError, RuntimeError, StopIteration):  # another thread changed it meanwhile
                continue
        kept[key] = made
        return made
