"""The verdict cache: the verdicts of each trajectory file, and the floors of each task set, kept on
disk by what decides them, so that a verb that reads results scores only what changed.

A file's entry is keyed by the sha256 of its bytes, the scoring fingerprint (sopbench's version and
the source of every package that decides a verdict: a changed rule is a new key, never a stale
verdict) and the options that change a verdict (protocol and quirks, runs, the bank card reading,
justified refusals). Its value is everything scoring the file gives: the verdict rows (what the
verbs use, not the transcripts), the counts, the records without runs and the problems met, so that
a hit gives exactly what scoring gives. A file that changes while it is read (its size, time or
inode differ before and after) is scored as usual and not kept.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import orjson

from sopbench._io import LoadError
from sopbench.scoring import ComparedRun, Protocol, RunScore, ScoringReport, compared_runs, score_paths
from sopbench.tasks import Task

from ._entries import CacheInfo, EntryStore, cache_dir, cache_info, clear_cache
from ._rows import row_digest, score_from_row, score_to_row

__all__ = ["CacheStats", "FileVerdicts", "VerdictCache", "scoring_fingerprint"]

Found = TypeVar("Found")

# The packages whose code decides a verdict or a floor (the floors: the runner plays the agents).
_DECIDING = ("scoring", "evaluation", "constraints", "domains", "traces", "tasks", "runner", "agents")
_ROOT_FILES = ("__init__.py", "_io.py", "_json.py")
_fingerprint: str | None = None


def scoring_fingerprint() -> str:
    """sha256 of sopbench's version and the source of every package that decides a verdict (read
    once per process: a few milliseconds)."""
    global _fingerprint
    if _fingerprint is None:
        package = Path(__file__).resolve().parent.parent
        digest = hashlib.sha256()
        files = [package / name for name in _ROOT_FILES]
        for name in _DECIDING:
            files += sorted(p for p in (package / name).rglob("*") if p.is_file() and p.suffix != ".pyc")
        for path in files:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
        _fingerprint = digest.hexdigest()
    return _fingerprint


@dataclass
class CacheStats:
    """What this cache object did: entries read (``hits``), sources scored because they had none
    (``misses``), entries found damaged (then scored again and rewritten), sources that changed
    while they were read (scored, not kept), and entries written."""

    hits: int = 0
    misses: int = 0
    damaged: int = 0
    unstable: int = 0
    stored: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class FileVerdicts:
    """One trajectory file's scores, and its problems as ``str(error)`` (the viewer's wording)."""

    scores: list[RunScore]
    problems: list[str]


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns, stat.st_ino


def _key(*parts: Any) -> str:
    return hashlib.sha256(orjson.dumps([scoring_fingerprint(), *parts])).hexdigest()


def protocol_key(protocol: Protocol) -> list[Any]:
    return [protocol.name, sorted(protocol.quirks)]


@dataclass
class VerdictCache:
    """The verdict cache under ``root`` (``VerdictCache.default()``: ``cache_dir()``)."""

    root: Path
    stats: CacheStats = field(default_factory=CacheStats)

    @classmethod
    def default(cls) -> VerdictCache:
        return cls(cache_dir())

    def __post_init__(self) -> None:
        self._verdicts = EntryStore(self.root, "verdicts")
        self._floors = EntryStore(self.root, "floors")
        self._figures = EntryStore(self.root, "figures")
        self._comparisons = EntryStore(self.root, "comparisons")
        self._tasks: dict[str, Task] = {}

    def info(self) -> CacheInfo:
        return cache_info(self.root)

    def clear(self) -> int:
        """Remove every entry; how many there were."""
        return clear_cache(self.root)

    def _read_back(self, store: EntryStore, key: str, read: Callable[[Any], Found | None]) -> Found | None:
        """What ``read`` makes of the entry kept under ``key`` (a hit), else None (a miss: no entry,
        or a damaged one, which ``read`` can make nothing of, is computed again and rewritten)."""
        value, damaged = store.get(key)
        self.stats.damaged += damaged
        if value is not None:
            found = read(value)
            if found is not None:
                self.stats.hits += 1
                return found
            self.stats.damaged += 1
        self.stats.misses += 1
        return None

    # ---- trajectory files -----------------------------------------------------------------------
    def score_file(
        self,
        path: Path,
        protocol: Protocol,
        report: ScoringReport,
        *,
        runs: str = "all",
        credit_cards: Callable[[Path], str | None] | None = None,
        justify_refusal: bool = False,
    ) -> FileVerdicts:
        """What ``score_paths([path], ...)`` gives (its scores, and its counts and problems added to
        ``report``), from the cache when the file's bytes were scored so before."""
        before, content = _read(path)
        if content is None:  # unreadable: scoring says why, nothing to keep
            return _scored(path, protocol, report, runs, credit_cards, justify_refusal)[0]
        cards = credit_cards(path) if credit_cards is not None else None
        key = _key(
            "file", hashlib.sha256(content).hexdigest(), protocol_key(protocol), runs, cards, justify_refusal
        )
        found = self._read_back(self._verdicts, key, lambda value: _from_entry(value, str(path), report))
        if found is not None:
            return found
        fresh = ScoringReport()
        verdicts, errors = _scored(path, protocol, fresh, runs, lambda _: cards, justify_refusal)
        _merge(report, fresh)
        if _identity(path) != before:
            self.stats.unstable += 1
            return verdicts
        rows = [score_to_row(score) for score in verdicts.scores]
        entry = {
            "source": str(path),
            "files": fresh.files,
            "records": fresh.records,
            "runs": fresh.runs,
            "scored": fresh.scored,
            "without_runs": [index for _source, index in fresh.records_without_runs],
            "errors": errors,
            "scores": rows,
        }
        self.stats.stored += self._verdicts.put(key, entry)
        # The scores handed on are those a later reading gives (the same figures, a tenth of the
        # memory: no verdict objects, one task object per distinct task, kept for the floors).
        verdicts.scores = [
            score_from_row(row, score.source, task=self._task(row_digest(row), score.task))
            for score, row in zip(verdicts.scores, rows, strict=True)
        ]
        return verdicts

    def _task(self, digest: str, task: Task | None) -> Task | None:
        """One task object per digest (a task is in every file of its domain)."""
        if task is None:
            return None
        return self._tasks.setdefault(digest, task)

    # ---- protocols compared -------------------------------------------------------------------
    def compared_file(
        self, path: Path, cards: str | None, first_run_only: bool, quirks: Sequence[str] | None = None
    ) -> list[ComparedRun | str]:
        """What ``sopbench.scoring.compared_runs([path], ...)`` gives (the file's runs under both
        protocols and each quirk toggled alone, and its problems), from the cache when the file's
        bytes were compared so before."""
        before, content = _read(path)

        def compare() -> list[ComparedRun | str]:
            return list(
                compared_runs(
                    [path], quirks=quirks, credit_cards=lambda _: cards, first_run_only=first_run_only
                )
            )

        if content is None:  # unreadable: comparing says why, nothing to keep
            return compare()
        key = _key("compared", hashlib.sha256(content).hexdigest(), cards, first_run_only, quirks)
        found = self._read_back(self._comparisons, key, lambda value: _compared_from_entry(value, str(path)))
        if found is not None:
            return found
        compared = compare()
        if _identity(path) != before:
            self.stats.unstable += 1
            return compared
        entry = {
            "source": str(path),
            "runs": [
                item
                if isinstance(item, str)
                else [
                    score_to_row(item.sound),
                    score_to_row(item.compat),
                    {q: list(f) for q, f in item.flips.items()},
                ]
                for item in compared
            ],
        }
        self.stats.stored += self._comparisons.put(key, entry)
        return compared

    # ---- the floors -----------------------------------------------------------------------------
    def floor_scores(
        self,
        tasks: Sequence[tuple[str, str]],
        name: str,
        protocol: Protocol,
        justify_refusal: bool,
        play: Callable[[], list[RunScore]],
    ) -> list[RunScore]:
        """The scores of the floor ``name`` on the tasks named by ``tasks`` ((task id, digest), in
        order): from the cache, else ``play()`` (then kept)."""
        key = _key("floor", name, protocol_key(protocol), justify_refusal, [list(t) for t in tasks])
        found = self._read_back(self._floors, key, lambda value: _floor_from_entry(value, name))
        if found is not None:
            return found
        scores = play()
        self.stats.stored += self._floors.put(key, [score_to_row(score) for score in scores])
        return scores

    # ---- figures --------------------------------------------------------------------------------
    def drawn(self, key: str, draw: Callable[[], str]) -> str:
        """A figure (its SVG text) drawn for ``key`` (the caller's digest of what decides it): read
        back, else ``draw()`` (then kept)."""
        found = self._read_back(self._figures, key, lambda value: value if isinstance(value, str) else None)
        if found is not None:
            return found
        text = draw()
        self.stats.stored += self._figures.put(key, text)
        return text


def _scored(
    path: Path,
    protocol: Protocol,
    report: ScoringReport,
    runs: str,
    credit_cards: Callable[[Path], str | None] | None,
    justify_refusal: bool,
) -> tuple[FileVerdicts, list[list[str]]]:
    """Score ``path`` as ``score_paths`` does; each problem as [the report's line, ``str(error)``]."""
    errors: list[list[str]] = []

    def heard(error: Exception) -> None:
        text = error.describe(full_path=True) if isinstance(error, LoadError) else str(error)
        errors.append([text, str(error)])

    scores = list(
        score_paths(
            [path],
            protocol,
            report=report,
            on_error=heard,
            credit_cards=credit_cards,
            justify_refusal=justify_refusal,
            runs=runs,
        )
    )
    return FileVerdicts(scores, [short for _text, short in errors]), errors


def _read(path: Path) -> tuple[tuple[int, int, int] | None, bytes | None]:
    """The file's identity (size, time, inode) and bytes before it is scored; no bytes when it
    cannot be read (then nothing of it is kept)."""
    before = _identity(path)
    try:
        return before, path.read_bytes() if before is not None else None
    except OSError:
        return before, None


def _floor_from_entry(value: Any, name: str) -> list[RunScore] | None:
    try:
        return [score_from_row(row, name) for row in value]
    except (TypeError, ValueError):
        return None


def _compared_from_entry(value: Any, source: str) -> list[ComparedRun | str] | None:
    """The entry's comparisons read for ``source``; None for an entry that does not hold what it
    should, or whose problems name the file where it was then in a way that cannot be moved."""
    try:
        old = value["source"]
        items = value["runs"]
        texts = _moved([item for item in items if isinstance(item, str)], old, source)
        if texts is None:
            return None
        moved = iter(texts)
        found: list[ComparedRun | str] = []
        for item in items:
            if isinstance(item, str):
                found.append(next(moved))
                continue
            sound, compat, flips = item
            found.append(
                ComparedRun(
                    score_from_row(sound, source),
                    score_from_row(compat, source),
                    {str(q): (bool(f[0]), bool(f[1]), bool(f[2]), bool(f[3])) for q, f in flips.items()},
                )
            )
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return None
    return found


def _merge(report: ScoringReport, part: ScoringReport) -> None:
    report.files += part.files
    report.records += part.records
    report.runs += part.runs
    report.scored += part.scored
    report.records_without_runs += part.records_without_runs
    report.errors += part.errors


def _moved(texts: Iterable[str], old: str, new: str) -> list[str] | None:
    """Problem lines written for the file at ``old``, as they read for it at ``new`` (None when, the
    file having moved, one does not start with its path or names it again further on: a line that
    names it otherwise, by its folder and name, is then written anew by scoring the file again)."""
    out = []
    for text in texts:
        rest = text[len(old) :] if text.startswith(old) else text
        if old != new and (old in rest or not text.startswith(old)):
            return None
        out.append(new + rest if text.startswith(old) else text)
    return out


def _from_entry(value: Any, source: str, report: ScoringReport) -> FileVerdicts | None:
    """The entry's verdicts read for ``source`` (its counts and problems added to ``report``); None
    for an entry that does not hold what it should."""
    try:
        old = value["source"]
        errors = value["errors"]
        texts = _moved([text for text, _short in errors], old, source)
        shorts = _moved([short for _text, short in errors], old, source)
        if texts is None or shorts is None:
            return None
        scores = [score_from_row(row, source) for row in value["scores"]]
        counts = [int(value[name]) for name in ("files", "records", "runs", "scored")]
        without = [(source, int(index)) for index in value["without_runs"]]
    except (KeyError, TypeError, ValueError):
        return None
    report.files += counts[0]
    report.records += counts[1]
    report.runs += counts[2]
    report.scored += counts[3]
    report.records_without_runs += without
    report.errors += texts
    return FileVerdicts(scores, shorts)
