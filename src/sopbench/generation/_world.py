"""The world databases the searches start from: each domain's shipped one (or a custom domain's own),
its people renamed from the seeded pools so that every seed's tasks name other people."""

from __future__ import annotations

import random
import re
from importlib import resources
from typing import Any

import orjson

from sopbench.domains import Domain

from ._pools import person


def world_database(domain: Domain, seed: int) -> dict[str, Any]:
    """The domain's world database, its people renamed from the seeded pools."""
    source = resources.files("sopbench.generation").joinpath("worlds", f"{domain.name}.json")
    if not source.is_file():
        raise KeyError(f"no world database for domain {domain.name!r} (expected worlds/{domain.name}.json)")
    return renamed_people(orjson.loads(source.read_bytes()), seed, domain.name)


def renamed_people(world: dict[str, Any], seed: int, domain: str) -> dict[str, Any]:
    return _renamed_people(world, random.Random(f"people:{domain}:{seed}"))


_USERNAME = re.compile(r"^[a-z][a-z_]{1,20}$")
_FULL_NAME = re.compile(r"^[A-Z][a-z]+ [A-Z][a-z]+$")


def _renamed_people(world: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Every user name (keys of top-level collections of records) and full name, renamed consistently."""
    names: dict[str, str] = {}
    used: set[str] = set()

    def new_name(old: str, full: bool) -> str:
        while True:
            first, last = person(rng)
            candidate = f"{first.capitalize()} {last.capitalize()}" if full else f"{first}_{last}"
            if candidate not in used:
                used.add(candidate)
                names[old] = candidate
                return candidate

    for collection in world.values():
        if (
            isinstance(collection, dict)
            and collection
            and all(isinstance(v, dict) for v in collection.values())
        ):
            for key in collection:
                if _USERNAME.match(key) and any(f in collection[key] for f in ("password", "identification")):
                    new_name(key, False)

    def rename(data: Any) -> Any:
        if isinstance(data, dict):
            return {names.get(k, k) if isinstance(k, str) else k: rename(v) for k, v in data.items()}
        if isinstance(data, list):
            return [rename(v) for v in data]
        if isinstance(data, str):
            if data in names:
                return names[data]
            if _FULL_NAME.match(data):
                return names.get(data) or new_name(data, True)
        return data

    renamed: dict[str, Any] = rename(world)
    return renamed
