"""Finding the task file of a domain in a folder of task files."""

from __future__ import annotations

from pathlib import Path

from sopbench._io import LoadError, StrPath

from ._load import TASK_FILE_SUFFIXES


def task_file(tasks_dir: StrPath, domain: str) -> Path:
    """``<tasks_dir>/<domain>_tasks.json.gz`` or ``<domain>_tasks.json`` (the compressed one first).

    Raises ``LoadError`` naming the folder and the names looked for when neither is there.
    """
    folder = Path(tasks_dir)
    if not folder.is_dir():
        raise LoadError("not a folder of task files (give the folder with --tasks-dir)", file=folder)
    for suffix in TASK_FILE_SUFFIXES:
        candidate = folder / f"{domain}{suffix}"
        if candidate.is_file():
            return candidate
    expected = " or ".join(f"{domain}{suffix}" for suffix in TASK_FILE_SUFFIXES)
    raise LoadError(f"no task file for {domain} (expected {expected})", file=folder)
