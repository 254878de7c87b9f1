"""The manifest of a run folder: what was run, on which tasks, with which result-determining
settings, and the check that a resumed run is the same run (docs/runner.md, "The manifest")."""

from __future__ import annotations

import functools
import hashlib
import platform
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict

import sopbench
from sopbench import __version__
from sopbench.evaluation import canonical_json
from sopbench.tasks import Task, task_digest

DIGEST_SHOWN = 12  # hex digits of a digest in messages and the run summary


def task_set_digest(digests: Mapping[str, str]) -> str:
    """``task_set.sha256``: sha256 of the canonical JSON of ``{task id: task digest}`` over the tasks
    played, so that it follows from the stored per-task digests alone."""
    return hashlib.sha256(canonical_json(dict(digests))).hexdigest()


@dataclass(frozen=True, slots=True)
class TaskSet:
    """The tasks of an invocation: where they came from and each one's digest."""

    path: Path  # absolute
    generated_seed: int | None  # the generated default set (None: files the user named)
    digests: dict[str, str]  # task id -> digest, in play order

    @classmethod
    def of(cls, path: Path, generated_seed: int | None, tasks: Iterable[tuple[Task, str]]) -> TaskSet:
        return cls(path.absolute(), generated_seed, {task_id: task_digest(task) for task, task_id in tasks})

    @property
    def sha256(self) -> str:
        return task_set_digest(self.digests)

    def describe(self) -> str:
        """The run summary's first words: ``tasks: <path> | generated, seed S; N tasks; sha256 <prefix>``."""
        where = (
            f"generated, seed {self.generated_seed}" if self.generated_seed is not None else str(self.path)
        )
        return f"tasks: {where}; {len(self.digests)} tasks; sha256 {self.sha256[:DIGEST_SHOWN]}"


class TaskSetProvenance(BaseModel):
    """Where the tasks a run folder played came from (``manifest.task_set``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str  # absolute, as the run named it
    generated_seed: int | None  # the generated default set (None: files the user named)
    tasks: int  # tasks played in the folder
    sha256: str  # ``task_set_digest`` of the played tasks' digests


class Manifest(BaseModel):
    """What a run folder is (``meta.manifest``, docs/runner.md "The manifest"): the sopbench that
    wrote it, the tasks it played, the run's identity (its result-determining settings) and when it
    was made. Store schema 2 wrote the same document without ``sopbench_revision``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sopbench_version: str
    # The git commit of the sopbench that last wrote the folder, when it ran from a git checkout
    # (None otherwise, and in a schema-2 manifest).
    sopbench_revision: str | None = None
    python_version: str
    created_at: str  # UTC, ISO 8601: when a run first claimed the folder
    task_set: TaskSetProvenance
    # The run's identity, as ``RunSpec.identity()`` gives it (a resumed run must match it).
    config: dict[str, Any]

    def document(self) -> dict[str, Any]:
        """The manifest as the store keeps it (JSON-ready, fields in declaration order)."""
        return self.model_dump(mode="json")


@functools.cache
def sopbench_revision() -> str | None:
    """The commit of the git checkout sopbench is imported from (None when it is not imported from
    one, or git cannot say: never an error)."""
    package = Path(sopbench.__file__).resolve().parent
    try:
        # Only a checkout that tracks this very file: an installed copy inside some other
        # repository (a virtual environment in a checkout) has no revision.
        tracked = subprocess.run(
            ["git", "ls-files", "--error-unmatch", "__init__.py"],
            cwd=package,
            capture_output=True,
            timeout=5,
            check=False,
        )
        if tracked.returncode != 0:
            return None
        head = subprocess.run(
            ["git", "rev-parse", "--verify", "HEAD"], cwd=package, capture_output=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    revision = head.stdout.decode(errors="replace").strip()
    return revision if head.returncode == 0 and revision else None


def build_manifest(
    task_set: TaskSet,
    identity: Mapping[str, Any],
    played: Mapping[str, str],
    created_at: str | None = None,
) -> Manifest:
    """The manifest (``meta.manifest``): ``played`` is every task id -> digest the folder holds
    episodes (or will) of."""
    return Manifest(
        sopbench_version=__version__,
        sopbench_revision=sopbench_revision(),
        python_version=platform.python_version(),
        created_at=created_at or datetime.now(UTC).isoformat(timespec="seconds"),
        task_set=TaskSetProvenance(
            path=str(task_set.path),
            generated_seed=task_set.generated_seed,
            tasks=len(played),
            sha256=task_set_digest(played),
        ),
        config=dict(identity),
    )


def differences(stored: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """``field: stored -> now`` for each identity field that differs."""
    return [
        f"{key}: {_show(stored.get(key))} stored, {_show(current.get(key))} now"
        for key in _ordered_keys(stored, current)
        if stored.get(key) != current.get(key)
    ]


def task_differences(stored: Mapping[str, str], task_set: TaskSet) -> str | None:
    """How the tasks of this invocation differ from those the stored episodes were played on, over
    the task ids both hold (None when they agree). The digests shown are those printed elsewhere:
    the stored manifest's ``task_set.sha256`` (over every task played in the folder), this
    invocation's (the run summary's first line), and the first differing task's own (the store's
    ``tasks`` table)."""
    shared = [task_id for task_id in task_set.digests if task_id in stored]
    changed = [task_id for task_id in shared if stored[task_id] != task_set.digests[task_id]]
    if not changed:
        return None
    first = changed[0]
    return (
        f"task_set.sha256: {task_set_digest(stored)[:DIGEST_SHOWN]} stored, {task_set.sha256[:DIGEST_SHOWN]} now "
        f"({len(changed)} of {len(shared)} tasks played before differ, first {first}: sha256 "
        f"{stored[first][:DIGEST_SHOWN]} stored, {task_set.digests[first][:DIGEST_SHOWN]} now; tasks from {task_set.path})"
    )


def _ordered_keys(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    keys = list(a)
    keys.extend(k for k in b if k not in a)
    return keys


def _show(value: object) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
