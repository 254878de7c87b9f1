"""Inspect eval logs of the ``sopbench`` task as a source of verdicts for the report verbs.

The scorer keeps, in each score's metadata, the columns a run folder stores for an episode; reading
a log turns each scored sample into the same ``RunScore`` a run folder row becomes (``row_score``),
so an Inspect run and a ``sopbench run`` sit in one table. Only this module's reader imports
``inspect_ai``, and only when a log is read.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sopbench._io import LoadError, check_zip_archive
from sopbench._json import MAX_FILE_BYTES, size_text
from sopbench.constraints import clip
from sopbench.runner.episode import row_of_score, row_score
from sopbench.scoring import RunScore

SCORER_NAME = "sopbench_scorer"  # the key of our score in a sample's scores
LOG_SUFFIXES = (".eval", ".json")


class InspectLogError(Exception):
    """An Inspect log that cannot be read (named, with the reason)."""


def is_inspect_log(path: Path) -> bool:
    """An ``.eval`` archive, or a ``.json`` file that starts as an Inspect log (not a trajectory file)."""
    if not path.is_file():
        return False
    if path.suffix == ".eval":
        return zipfile.is_zipfile(path)
    if path.suffix != ".json":
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(512)
    except OSError:
        return False
    # An Inspect JSON log opens with its format version and the eval spec; a trajectory file never does.
    return head.lstrip().startswith(b"{") and b'"version"' in head and b'"eval"' in head


def inspect_log_api(path: Path) -> Any:
    """``inspect_ai.log`` to read ``path`` with, once ``path`` is within the bounds on a file
    sopbench reads; ``InspectLogError`` naming ``path`` when it is not, or the extra is absent."""
    try:
        import inspect_ai.log
    except ImportError:
        raise InspectLogError(
            f"{path}: reading an Inspect log needs the inspect extra: pip install 'sopbench[inspect]'"
        ) from None
    _check_bounds(path)
    return inspect_ai.log


def inspect_log_scores(
    path: Path, protocol: str = "sound", on_problem: Callable[[str], None] | None = None
) -> Iterator[RunScore]:
    """Each scored sample of the Inspect log ``path`` (one per epoch) as a ``RunScore`` under ``protocol``
    (``sound`` or ``sopbench``, the two verdicts the scorer keeps). A sample that ended in an error or
    holds no sopbench score is named to ``on_problem`` and not counted; ``InspectLogError`` when the
    file cannot be read as a log."""
    log_api = inspect_log_api(path)
    read_eval_log_sample_summaries = log_api.read_eval_log_sample_summaries
    read_eval_log_samples_by_id = log_api.read_eval_log_samples_by_id
    try:
        # The summaries hold each sample's scores without its transcript (fast); a score whose
        # metadata the summary shortened (long explanations) is read again from the full sample.
        summaries = read_eval_log_sample_summaries(str(path))
        metadata = {(s.id, s.epoch): _metadata(s.scores) for s in summaries if s.error is None}
        shortened = [key for key, meta in metadata.items() if meta is not None and _thinned(meta)]
        if shortened:
            for sample in read_eval_log_samples_by_id(str(path), shortened, exclude_fields={"events"}):
                metadata[(sample.id, sample.epoch)] = _metadata(sample.scores)
    except Exception as exc:  # noqa: BLE001 - any reader failure is this file's problem, named
        raise InspectLogError(
            f"{path}: cannot read the Inspect log ({type(exc).__name__}: {_one_line(exc)})"
        ) from None
    source = path.as_posix()
    for summary in summaries:
        where = f"{path}: sample {summary.id} epoch {summary.epoch}"
        if summary.error is not None:
            if on_problem is not None:
                on_problem(f"{where}: {summary.error} (error, not counted)")
            continue
        meta = metadata[(summary.id, summary.epoch)]
        if meta is None:
            if on_problem is not None:
                on_problem(f"{where}: no sopbench score (not counted)")
            continue
        yield row_score(row_of_score(meta, summary.epoch - 1), protocol, source, calls_kept=False)


def _check_bounds(path: Path) -> None:
    """The bounds on a file sopbench reads, before Inspect's reader inflates or decodes anything:
    an ``.eval`` archive's members (size and ratio), a ``.json`` log's size."""
    try:
        if path.suffix == ".eval":
            check_zip_archive(path)
        elif path.stat().st_size > MAX_FILE_BYTES:
            raise LoadError(f"larger than {size_text(MAX_FILE_BYTES)}, the bound on a file sopbench reads")
    except LoadError as exc:
        raise InspectLogError(f"{path}: {exc.message}") from None
    except OSError as exc:
        raise InspectLogError(f"{path}: cannot read the Inspect log ({exc.strerror or exc})") from None


def _one_line(exc: BaseException) -> str:
    """A reader's message on one line: its first three lines (pydantic's count of errors and the
    first of them), and how many more there were."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    more = f" (+{len(lines) - 3} more lines)" if len(lines) > 3 else ""
    return clip(": ".join(lines[:3]), 300) + more


def _metadata(scores: dict[str, Any] | None) -> dict[str, Any] | None:
    score = (scores or {}).get(SCORER_NAME)
    metadata = None if score is None else score.metadata
    return metadata if metadata and "verdict" in metadata else None


def _thinned(metadata: dict[str, Any]) -> bool:
    """A summary replaces a long value by a note (text where a list or an object was)."""
    return any(
        isinstance(metadata.get(key), str)
        for key in ("verdict", "compat", "explanations", "usage", "user_usage")
    )
