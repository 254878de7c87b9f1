"""Writing a generated task set, and the default task set built once into a cache directory."""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import orjson

from sopbench._io import write_atomically
from sopbench.domains import PUBLISHED_DOMAINS, get_domain
from sopbench.tasks import domain_task_files, load_tasks

from ._compare import Comparison, compare, difficulty
from ._coverage import DomainTasks
from ._generate import generate_domain

DEFAULT_SEED = 0
_COMPLETE = "COMPLETE"  # marker written last: a cache folder without it is not used


@dataclass
class Generated:
    """One domain's written files, report and (with a published file to compare with) comparison."""

    result: DomainTasks
    tasks_file: Path
    coverage_file: Path
    comparison: Comparison | None


def published_file(compare_path: Path, domain: str) -> Path | None:
    """The published task file of ``domain`` at ``compare_path`` (a file, or a folder of them)."""
    if compare_path.is_file():
        return compare_path if compare_path.name.startswith(f"{domain}_tasks.json") else None
    return domain_task_files(compare_path).get(domain)  # both forms of the file: LoadError


def generate(
    domains: Iterable[str],
    output: Path,
    *,
    seed: int = DEFAULT_SEED,
    goals: Iterable[str] | None = None,
    per_assignment: int = 1,
    compare_with: Path | None = None,
    progress: Callable[[str, str], None] | None = None,
    include_hidden_prerequisites: bool = False,
) -> list[Generated]:
    """Generate each domain into ``output``: ``<domain>_tasks.json`` and ``<domain>_coverage.json``.

    With ``include_hidden_prerequisites`` the combinations excluded by design are made too, their
    tasks marked (see ``generate_domain``)."""
    output = Path(output)
    wanted = None if goals is None else list(goals)
    done: list[Generated] = []
    for name in domains:
        domain_goals = None
        if wanted is not None:
            from ._enumerate import goals as goals_of

            domain_goals = [g for g in wanted if g in goals_of(get_domain(name).catalogue)]
        result = generate_domain(
            name,
            seed=seed,
            goals_wanted=domain_goals,
            per_assignment=per_assignment,
            progress=functools.partial(progress, name) if progress else None,
            include_hidden_prerequisites=include_hidden_prerequisites,
        )
        comparison = None
        if compare_with is not None:
            source = published_file(compare_with, name)
            if source is not None:
                published = load_tasks(source, domain=name)
                if domain_goals is not None:
                    published = [t for t in published if t.goal in domain_goals]
                comparison = compare(get_domain(name), result.variants, result.report.combinations, published)
                comparison.difficulty = {
                    "generated": difficulty(result.task_list()),
                    "published": difficulty(published),
                }
        done.append(
            Generated(result, output / f"{name}_tasks.json", output / f"{name}_coverage.json", comparison)
        )
    # Written only once every domain is generated: an interrupted generation leaves the folder as it
    # was, never holding some domains of one seed and some of another.
    for item in done:
        coverage: dict[str, Any] = item.result.report.as_dict()
        if item.comparison is not None:
            coverage["comparison"] = item.comparison.as_dict()
        write_atomically(item.tasks_file, item.result.to_json())
        write_atomically(item.coverage_file, orjson.dumps(coverage, option=orjson.OPT_INDENT_2) + b"\n")
    return done


def _package_version() -> str:
    try:
        return version("sopbench")
    except PackageNotFoundError:
        return "0+unknown"


def default_tasks_dir(seed: int = DEFAULT_SEED, progress: Callable[[str, str], None] | None = None) -> Path:
    """The generated task set of all seven domains, built on first use into the user's cache.

    The folder is ``$XDG_CACHE_HOME/sopbench/tasks/<version>-seed<seed>`` (``~/.cache`` without
    XDG_CACHE_HOME), keyed by package version and seed. It is built in a temporary folder beside
    it and renamed into place, so a reader never sees a half-built set. ``progress(domain, goal)`` is
    called as each goal is generated (only when the set has to be built).
    """
    target = _default_target(seed)
    base = target.parent
    if base.is_dir():
        _remove_abandoned_builds(base)
    if (target / _COMPLETE).is_file():
        return target
    base.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.{os.getpid()}.", dir=base))
    try:
        generate(PUBLISHED_DOMAINS, building, seed=seed, progress=progress)
        (building / _COMPLETE).write_text(f"sopbench {_package_version()} seed {seed}\n")
        try:
            os.replace(building, target)
        except OSError:  # another process finished first (the target exists and is not empty)
            if not (target / _COMPLETE).is_file():
                shutil.rmtree(target, ignore_errors=True)
                os.replace(building, target)
    finally:
        if building.exists():
            shutil.rmtree(building, ignore_errors=True)
    return target


def _remove_abandoned_builds(base: Path) -> None:
    """Remove the hidden build folders of processes that were killed while building (named
    ``.<set>.<pid>.<random>``; a folder whose process still runs is left alone)."""
    for folder in base.glob(".*.*"):
        parts = folder.name.split(".")
        pid = parts[-2] if len(parts) >= 4 else ""
        if not folder.is_dir() or not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:  # another user's live process
            continue


def _default_target(seed: int) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sopbench" / "tasks"
    return base / f"{_package_version()}-seed{seed}"


def default_tasks_ready(seed: int = DEFAULT_SEED) -> bool:
    """True when the default task set for ``seed`` is already built (no generation on next use)."""
    return (_default_target(seed) / _COMPLETE).is_file()


def default_task_file(domain: str, seed: int = DEFAULT_SEED) -> Path:
    """``<domain>_tasks.json`` of the default generated task set (built on first use)."""
    path = default_tasks_dir(seed) / f"{domain}_tasks.json"
    if not path.is_file():
        raise KeyError(f"no generated task file for domain {domain!r}")
    return path
