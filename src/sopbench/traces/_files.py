"""Trajectory files: finding them under folders, and the run configuration in their names."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from os import PathLike
from pathlib import Path

from sopbench._io import (
    LoadError,
    StrPath,
    walk_files,
)

from ._model import (
    TrajectoryFile,
)

TRAJECTORY_SUFFIXES = (".json.gz", ".json")
# The model name is greedy so that dashes and dots inside it never end it early; every later part is
# anchored on its own "-<key>_" marker.
_FILE_NAME = re.compile(
    r"^(?:usr_(?P<user>.+?)-)?ast_(?P<model>.+)-mode_(?P<mode>.+?)-dep_(?P<dep>.+?)-fmt_(?P<fmt>.+?)"
    r"-tool_(?P<tool>.+?)-shuffle_(?P<shuffle>True|False)$"
)
# Older simulators stored the whole (success, value) tuple a tool returned, as Python text.
# Older simulators called the oracle tool list "test".
OLD_TOOL_LIST_NAMES = {"test": "oracle"}


def iter_trajectory_files(paths: StrPath | Iterable[StrPath]) -> Iterator[Path]:
    """Trajectory files named by ``paths``: files as given, folders searched recursively (sorted).

    A folder yields its ``*.json`` and ``*.json.gz`` files, e.g. ``output/`` with ``<domain>/``
    subfolders. A file reached twice (named and inside a named folder) is yielded once, so that no run
    is counted twice. Paths that do not exist are passed on: reading them reports the problem.
    """
    seen: set[Path] = set()
    for path in _as_paths(paths):
        found = _files_in(path) if path.is_dir() else [path]
        for file in found:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                yield file


def _files_in(folder: Path) -> list[Path]:
    """The trajectory files below ``folder``; a folder that cannot be listed is listed itself, so
    that reading it reports the problem (never skipped without a word)."""
    found, unreadable = walk_files(folder, lambda name: name.endswith(TRAJECTORY_SUFFIXES))
    return sorted(found + unreadable)


def parse_trajectory_file_name(path: StrPath) -> TrajectoryFile:
    """The run configuration in a file name such as ``bank/ast_gpt-4o-mode_fc-...-shuffle_False.json``."""
    path = Path(path)
    stem = _strip_suffix(path.name)
    match = _FILE_NAME.match(stem)
    if match is None:
        raise LoadError(
            "file name does not follow [usr_<user>-]ast_<model>-mode_<mode>-dep_<option>-fmt_<format>"
            "-tool_<list>-shuffle_<bool>",
            file=path,
        )
    tool_list = match["tool"]
    return TrajectoryFile(
        path=path,
        domain=path.parent.name or None,
        assistant_model=match["model"],
        tool_call_mode=match["mode"],
        user_model=match["user"],
        default_constraint_option=match["dep"],
        constraint_descr_format=match["fmt"],
        tool_list=OLD_TOOL_LIST_NAMES.get(tool_list, tool_list),
        shuffle=match["shuffle"] == "True",
    )


def _as_paths(paths: StrPath | Iterable[StrPath]) -> list[Path]:
    if isinstance(paths, str | PathLike):
        return [Path(paths)]
    return [Path(p) for p in paths]


def _strip_suffix(name: str) -> str:
    for suffix in TRAJECTORY_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name
