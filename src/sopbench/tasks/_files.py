"""Finding task files in a folder: one per domain, plain or gzip-compressed, never both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from sopbench._io import LoadError, StrPath

from ._load import TASK_FILE_SUFFIXES, load_tasks, task_file_domain
from ._model import Task


def domain_task_files(tasks_dir: StrPath) -> dict[str, Path]:
    """Domain -> its ``<domain>_tasks.json[.gz]`` in ``tasks_dir``, sorted by domain.

    A folder holding both forms of a domain's file (``bank_tasks.json`` beside ``bank_tasks.json.gz``,
    say after generating into a folder of published files) raises ``LoadError``: which one is meant
    cannot be told, and reading either silently could play old tasks.
    """
    folder = Path(tasks_dir)
    if not folder.is_dir():
        raise LoadError("not a folder of task files (give the folder with --tasks-dir)", file=folder)
    found: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if not path.name.endswith(TASK_FILE_SUFFIXES) or not path.is_file():
            continue
        domain = task_file_domain(path)
        if domain in found:
            raise LoadError(
                f"holds both {found[domain].name} and {path.name}: remove one (which to read cannot be told)",
                file=folder,
            )
        found[domain] = path
    return dict(sorted(found.items()))


def task_file(tasks_dir: StrPath, domain: str) -> Path:
    """``<tasks_dir>/<domain>_tasks.json.gz`` or ``<domain>_tasks.json`` (see ``domain_task_files``).

    Raises ``LoadError`` naming the folder and the names looked for when neither is there.
    """
    found = domain_task_files(tasks_dir).get(domain)
    if found is None:
        expected = " or ".join(f"{domain}{suffix}" for suffix in TASK_FILE_SUFFIXES)
        raise LoadError(f"no task file for {domain} (expected {expected})", file=Path(tasks_dir))
    return found


def iter_all_tasks(tasks_dir: StrPath) -> Iterator[Task]:
    """The tasks of every ``<domain>_tasks.json[.gz]`` in ``tasks_dir``, domain by domain (sorted)."""
    for domain, path in domain_task_files(tasks_dir).items():
        yield from load_tasks(path, domain=domain)
