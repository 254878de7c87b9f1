"""Stable episode addresses: ``/episode/<source-digest>/<domain>/<task>/<run>``.

The digest names a source by what it holds, not where it lies or in which order it was given: a
run folder by its manifest's creation time and settings (fixed for the run's whole life, resumed or
extended to more tasks, so that an episode's address does not change while the run goes on), an
Inspect log by its eval id, a trajectory file by its bytes. The same episode has the same address in every viewer, in the
report's links and after the source is copied elsewhere.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, quote_plus

from sopbench.evaluation import canonical_json
from sopbench.scoring import RunScore

if TYPE_CHECKING:
    from sopbench.runner import StoredRun

__all__ = [
    "DIGEST_LENGTH",
    "compare_address",
    "episode_address",
    "score_address",
    "source_digest",
    "task_part",
]

DIGEST_LENGTH = 12  # hex digits: 48 bits, no collision among any plausible set of sources


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=DIGEST_LENGTH // 2).hexdigest()


@lru_cache(maxsize=4096)
def _digest_of(source: str) -> str:
    return source_digest(source)


def score_address(score: RunScore) -> str:
    """The viewer's address of the episode a verdict row is about: a score of a run folder, an Inspect
    log or a trajectory file as ``sopbench.report`` reads them (its ``source``, ``task_id`` and
    ``run``); each source's digest is computed once. ``OSError`` / ``StoreError`` as ``source_digest``."""
    return episode_address(_digest_of(score.source), score.domain, score.task_id, score.run)


def source_digest(source: Path | str) -> str:
    """The digest of a source: a run folder, an Inspect log or a trajectory file (``OSError`` when
    it cannot be read; a run folder's store errors as ``sopbench.runner.StoreError``)."""
    path = Path(source)
    from sopbench.runner.store import STORE_NAME

    if path.is_dir() and (path / STORE_NAME).is_file():
        return run_folder_digest(path)
    from sopbench.inspect_eval import inspect_log_digest, is_inspect_log

    if is_inspect_log(path):
        return _digest(inspect_log_digest(path).encode())
    return _digest(path.read_bytes())


def run_folder_digest(folder: Path, run: StoredRun | None = None) -> str:
    """A run folder's digest from its manifest (``run``, read when not given): its creation time and
    the settings that decide its results (the rest, such as the task count, grows as the run is
    extended); a schema-1 store, which has no manifest, by its folder name and configuration."""
    if run is None:
        from sopbench.runner import read_run

        run = read_run(folder, header_only=True)
    if run.manifest is not None:
        fixed = {"created_at": run.manifest.created_at, "config": run.manifest.config, "legacy": None}
    else:
        fixed = {"created_at": None, "config": run.config, "legacy": folder.name}
    return _digest(canonical_json(fixed))


def task_part(domain: str, task_id: str) -> str:
    """The task's part of an address: its id without the domain it starts with."""
    return task_id.removeprefix(f"{domain}/")


def episode_address(digest: str, domain: str, task_id: str, run: int) -> str:
    """The viewer's path of one episode (append it to the viewer's URL without its final slash):
    run ``run`` (from 0) of task ``task_id`` (``<domain>/<goal>[<i>]``) in the source ``digest``."""
    return f"/episode/{_segment(digest)}/{_segment(domain)}/{_segment(task_part(domain, task_id))}/{run}"


@lru_cache(maxsize=65536)
def _segment(text: str) -> str:
    """One path segment, percent-encoded (a few thousand distinct ones: each is encoded once)."""
    return quote(text, safe="")


def compare_address(a: str, b: str, task_id: str) -> str:
    """The viewer's side-by-side page of task ``task_id`` under configurations ``a`` and ``b`` (as
    the viewer names them: ``configuration_name``); append it to the viewer's URL without its slash."""
    # What urlencode writes, each value encoded once: a report links every task of every pair of
    # configurations here (tens of thousands of links over a few hundred distinct values).
    return f"/compare?a={_query_value(a)}&b={_query_value(b)}&task={_query_value(task_id)}"


@lru_cache(maxsize=65536)
def _query_value(text: str) -> str:
    """One value of a query string, percent-encoded as ``urlencode`` does (spaces as ``+``)."""
    return quote_plus(text, safe="")
