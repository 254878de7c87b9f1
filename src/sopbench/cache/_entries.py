"""The cache's entries on disk: where they live, their checked format, and how they are written.

Each entry is one file named by its key (a sha256 hex digest) under a folder of its kind
(``verdicts/``, ``floors/``, ``figures/``, ``comparisons/``), two levels deep (``ab/abcdef….json``). A file is a header line,
``sopbench-cache 1 <length> <sha256 of the body>``, then the body (JSON): an entry whose header,
length or checksum does not hold (a torn copy, a disk error, a hand edit) is damaged, never read,
and written again by the next reader that computes it. Writes go to a temporary file beside the
entry, then a rename: two processes writing the same entry at once each rename a whole file, and a
reader sees the old entry or a new one, never a mix.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from sopbench._io import write_atomically

__all__ = ["CACHE_ENV", "KINDS", "CacheInfo", "EntryStore", "cache_dir"]

CACHE_ENV = "SOPBENCH_CACHE_DIR"
# the cache's folders: what ``sopbench cache info`` counts and ``clear`` removes
KINDS = ("verdicts", "floors", "figures", "comparisons")
_MAGIC = b"sopbench-cache 1 "
_SUFFIX = ".json"


def cache_dir() -> Path:
    """Where the cache lives: ``$SOPBENCH_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/sopbench``,
    else ``~/.cache/sopbench``."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen:
        return Path(chosen).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "sopbench"


def encode_entry(value: Any) -> bytes:
    body = orjson.dumps(value)
    return _MAGIC + f"{len(body)} {hashlib.sha256(body).hexdigest()}\n".encode() + body


def decode_entry(data: bytes) -> Any:
    """The value of an entry file's bytes; ``ValueError`` when they are not a whole, intact entry."""
    if not data.startswith(_MAGIC):
        raise ValueError("not a cache entry")
    header, newline, body = data[len(_MAGIC) :].partition(b"\n")
    length, _, checksum = header.partition(b" ")
    if not newline or not length.isdigit() or int(length) != len(body):
        raise ValueError("truncated entry")
    if hashlib.sha256(body).hexdigest().encode() != checksum:
        raise ValueError("checksum mismatch")
    return orjson.loads(body)


@dataclass
class EntryStore:
    """The entries of one kind under ``root``."""

    root: Path
    kind: str

    @property
    def folder(self) -> Path:
        return self.root / self.kind

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}{_SUFFIX}"

    def get(self, key: str) -> tuple[Any, bool]:
        """(the value, False), or (None, True) when the entry is there but damaged, or (None, False)
        when there is none."""
        try:
            data = self.path(key).read_bytes()
        except OSError:
            return None, False
        try:
            return decode_entry(data), False
        except ValueError:
            return None, True

    def put(self, key: str, value: Any) -> bool:
        """Write the entry (atomically); False when it cannot be written (the cache is best effort:
        a read-only or full disk costs speed, never a result)."""
        target = self.path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, encode_entry(value))
        except (OSError, ValueError):
            return False
        return True

    def entries(self) -> Iterator[Path]:
        if not self.folder.is_dir():
            return
        for sub in sorted(self.folder.iterdir()):
            if sub.is_dir():
                yield from sorted(p for p in sub.iterdir() if p.name.endswith(_SUFFIX))


@dataclass(frozen=True)
class CacheInfo:
    """What ``sopbench cache info`` shows: where the cache is, and per kind its entries and bytes."""

    location: Path
    entries: dict[str, int]
    bytes: dict[str, int]

    @property
    def total_entries(self) -> int:
        return sum(self.entries.values())

    @property
    def total_bytes(self) -> int:
        return sum(self.bytes.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "location": str(self.location),
            "entries": self.total_entries,
            "bytes": self.total_bytes,
            "kinds": {kind: {"entries": self.entries[kind], "bytes": self.bytes[kind]} for kind in KINDS},
        }


def cache_info(root: Path) -> CacheInfo:
    entries: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for kind in KINDS:
        count = size = 0
        for path in EntryStore(root, kind).entries():
            try:
                size += path.stat().st_size
            except OSError:
                continue
            count += 1
        entries[kind], sizes[kind] = count, size
    return CacheInfo(root, entries, sizes)


def clear_cache(root: Path) -> int:
    """Remove every entry (the folders of ``KINDS`` only: nothing else under ``root``); how many."""
    removed = cache_info(root).total_entries
    for kind in KINDS:
        shutil.rmtree(root / kind, ignore_errors=True)
    return removed
