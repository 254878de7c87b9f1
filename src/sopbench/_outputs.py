"""The one guard every output of sopbench passes (``refuse_output``): no write replaces an input, a
run's store or one of its SQLite companions or its lock, any SQLite database or log, a device, a pipe
or a socket, however the path is spelled (symlinks, ``..``, hard links).

``sopbench._io.atomic_file`` (the one atomic writer) calls it for every file it writes; the command
line calls it with each verb's inputs before anything is written (``sopbench.cli._job``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

STORE_NAME = "results.sqlite"  # a run folder's store
LOCK_NAME = "results.sqlite.lock"  # its one-writer lock
COMPANION_SUFFIXES = ("-wal", "-shm", "-journal")  # the files SQLite keeps beside the store
_STORE_PARTS = {
    STORE_NAME: "a run's store",
    **{f"{STORE_NAME}{suffix}": f"a run's store journal ({suffix[1:]})" for suffix in COMPANION_SUFFIXES},
    LOCK_NAME: "a run's lock",
}
# How an existing file starts when it is an SQLite database or write-ahead log, whatever its name (a
# hard link or a copy of a store): no output of sopbench is one.
_SQLITE_HEADER = b"SQLite format 3\0"
_WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")


class OutputRefused(ValueError):
    """An output path no write may replace; the message is ``<path><reason>``."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}{reason}")
        self.path = path
        self.reason = reason


def store_files(folder: Path) -> list[Path]:
    """A run folder's store, its SQLite companions and its lock: what no output may overwrite."""
    path = folder / STORE_NAME
    return [path, *(Path(f"{path}{suffix}") for suffix in COMPANION_SUFFIXES), folder / LOCK_NAME]


def protected_by(path: Path) -> list[Path]:
    """What reading ``path`` puts out of every output's reach: the path itself; for a folder, the store
    a run keeps in it; for a store (or one of its companions), the rest of its files."""
    if path.name in _STORE_PARTS:
        return [path, *(p for p in store_files(path.parent) if p != path)]
    if path.is_dir():
        return [path, *store_files(path)]
    return [path]


def same_file(a: Path, b: Path) -> bool:
    """True when two spellings name one file (symlinks, ``..``, hard links: same device and inode)."""
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def path_kind(path: Path) -> str:
    """What an existing path is, for messages: a file, a folder, a device, a named pipe, a socket."""
    mode = path.stat().st_mode
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISREG, "a file"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def refuse_output(path: Path, inputs: Iterable[tuple[Path, str]] = ()) -> None:
    """Raise ``OutputRefused`` unless a file may be written at ``path``. It must not be (nor resolve
    to) one of ``inputs`` (each a path and how it was given), a run's store or one of its journals or
    its lock, any other SQLite database or log, a device, a pipe or a socket. A folder is left to the
    caller (it names a file inside, or refuses it)."""
    refuse_inputs(path, inputs)  # first: the message names how the input was given
    resolved = path.resolve()
    part = _STORE_PARTS.get(path.name) or _STORE_PARTS.get(resolved.name)
    if part is None and resolved.is_file():
        part = _sqlite_kind(resolved)
    if part is not None:
        raise OutputRefused(
            path, f": is {part}; writing it could destroy stored episodes: choose another name"
        )
    if path.exists() and not path.is_file() and not path.is_dir():
        raise OutputRefused(path, f": is {path_kind(path)}, not a file; name a regular file")


def refuse_inputs(path: Path, inputs: Iterable[tuple[Path, str]]) -> None:
    """Raise ``OutputRefused`` when ``path`` is (or resolves to) one of ``inputs`` (path, how given)."""
    for input_path, given_as in inputs:
        if same_file(path, input_path):
            raise OutputRefused(
                path,
                f" is also an input ({given_as}); writing it would destroy the input: choose another output name",
            )


def _sqlite_kind(path: Path) -> str | None:
    try:
        with open(path, "rb") as file:
            head = file.read(len(_SQLITE_HEADER))
    except OSError:
        return None
    if head == _SQLITE_HEADER:
        return "an SQLite database"
    if head[:4] in _WAL_MAGIC:
        return "an SQLite write-ahead log"
    return None
