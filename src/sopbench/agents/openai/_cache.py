"""Recorded model replies: every request to a model endpoint keyed by what decides its reply, so that a
run can be repeated exactly, without the network (``--cache PATH``, ``--cache-mode``).

The key is the sha256 of the canonical JSON (sorted keys) of the request's fields: the endpoint's
model name, the messages, the tools, ``tool_choice`` and every sampling parameter sent (temperature,
max_tokens, seed); when the sampling is not deterministic (a temperature other than 0), also the
episode's seed and the request's index in the episode (per side: the agent's and the user's
requests are counted apart), since the same request may then get another reply. Where the request
went (the base URL, its replicas), the key and the headers are not part of it and never stored.

The cache is one SQLite file (WAL, created when missing):

* ``meta(key, value)``: ``format`` (``CACHE_FORMAT``) and ``written_by`` (the sopbench version);
* ``entries(key, model, request, reply, checksum, recorded_at)``: ``request`` the keyed fields as
  canonical JSON (kept to explain a miss), ``reply`` the reply as sopbench read it (already scrubbed
  of the endpoint's secrets, as everything the server sent back) or the context-length refusal,
  ``checksum`` the sha256 of key, request and reply (a damaged entry is told, never used);
* ``uses(episode, side, step, key)``: which entry answered request ``step`` of the ``side``
  (``agent``/``user``) of episode ``<task id>#<run>``. An episode is handed the entries recorded
  for it before it starts (``ReplyCache.session``), so that a worker elsewhere (Ray) needs no file.

Only the run's driver writes the file (``ReplyCache.save``, one short ``BEGIN IMMEDIATE``
transaction per episode, after the episode ends): several runs may share one cache.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ._recorded import CACHE_FORMAT, DAMAGED, CacheMode, CacheSession, Entry

# How long a write waits for another run that writes the same cache before it gives up (one line).
BUSY_TIMEOUT_S = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    reply TEXT NOT NULL,
    checksum TEXT NOT NULL,
    recorded_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS uses (
    episode TEXT NOT NULL,
    side TEXT NOT NULL,
    step INTEGER NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (episode, side, step, key)
);
"""


class CacheError(Exception):
    """A cache file that cannot be used (a folder, a foreign or damaged file, a newer format), or a
    write that failed: the message is one line naming the file."""


# ---- the file ------------------------------------------------------------------------------------------------
def _reason(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("sopbench")
    except Exception:  # noqa: BLE001 - a source checkout that is not installed
        return "unknown"


class ReplyCache:
    """An open cache file (``ReplyCache.open``). Only the process that runs the episodes (the driver)
    holds one; ``problems`` collects what went wrong while writing (one line each)."""

    busy_timeout_s = BUSY_TIMEOUT_S  # how long a write waits for another run writing the file

    def __init__(self, path: Path, db: sqlite3.Connection, mode: CacheMode) -> None:
        self.path = path
        self.db = db
        self.mode = mode
        self.problems: list[str] = []
        self.damaged_seen: set[str] = set()
        self.saved = 0  # entries recorded by this process

    @classmethod
    def open(cls, path: Path, mode: CacheMode = "read-write") -> ReplyCache:
        """The cache at ``path``, created when missing in ``read-write``; ``CacheError`` (one line)
        for a folder, a file that is no sopbench cache, one of a newer format, or ``replay`` of a
        file that does not exist."""
        where = f"--cache {path}"
        if path.is_dir():
            raise CacheError(f"{where}: is a folder; name a file (it is created when missing)")
        if not path.exists() and mode == "replay":
            raise CacheError(f"{where}: no such file; replay needs a recorded cache")
        if path.exists():
            with open(path, "rb") as handle:
                head = handle.read(16)
            if head and head != b"SQLite format 3\0":
                raise CacheError(f"{where}: not a sopbench cache (not an SQLite file)")
        try:
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                path, isolation_level=None, timeout=cls.busy_timeout_s, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise CacheError(f"{where}: cannot open it ({_reason(exc)})") from None
        try:
            cls._prepare(db, where, mode)
        except BaseException:
            db.close()
            raise
        return cls(path, db, mode)

    @staticmethod
    def _prepare(db: sqlite3.Connection, where: str, mode: CacheMode) -> None:
        try:
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables and mode != "replay":
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(_SCHEMA)  # IF NOT EXISTS: two runs creating it at once agree
                db.executemany(
                    "INSERT OR IGNORE INTO meta VALUES (?, ?)",
                    [("format", str(CACHE_FORMAT)), ("written_by", _version())],
                )
                tables = {"meta", "entries", "uses"}
            if not {"meta", "entries", "uses"} <= tables:
                raise CacheError(f"{where}: not a sopbench cache (no entries table)")
            row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"{where}: cannot read it ({_reason(exc)})") from None
        try:
            format_ = int(row[0]) if row is not None else None
        except ValueError:
            format_ = None
        if format_ is None:
            raise CacheError(f"{where}: not a sopbench cache (no format)")
        if format_ > CACHE_FORMAT:
            raise CacheError(
                f"{where}: written by a newer sopbench (cache format {format_}; this one reads "
                f"{CACHE_FORMAT}): upgrade sopbench or name another file"
            )

    def close(self) -> None:
        self.db.close()

    # -- reading ------------------------------------------------------------------------------------------------
    def _entry(self, key: str, model: Any, request: Any, reply: Any, checksum: Any) -> Entry | str:
        try:
            entry = Entry(key, orjson.loads(request), orjson.loads(reply))
            if not isinstance(entry.request, dict) or not isinstance(entry.reply, dict):
                raise ValueError("not an object")
            if entry.checksum() != checksum:
                raise ValueError("checksum")
        except (ValueError, TypeError, orjson.JSONDecodeError):
            self.damaged_seen.add(key)
            return DAMAGED
        return entry

    def lookup(self, key: str) -> Entry | str | None:
        try:
            row = self.db.execute(
                "SELECT key, model, request, reply, checksum FROM entries WHERE key = ?", (key,)
            ).fetchone()
        except sqlite3.Error as exc:
            self._problem(f"cannot read it ({_reason(exc)})")
            return None
        return None if row is None else self._entry(*row)

    def session(self, task_id: str, run: int, seed: int, *, local: bool = True) -> CacheSession:
        """The view of episode ``task_id`` run ``run``: the entries recorded for it, and (``local``:
        the episode plays in this process) a lookup of any other entry in the file."""
        episode = f"{task_id}#{run}"
        session = CacheSession(self.mode, episode, seed)
        try:
            rows = self.db.execute(
                "SELECT u.side, u.step, e.key, e.model, e.request, e.reply, e.checksum "
                "FROM uses u JOIN entries e ON e.key = u.key WHERE u.episode = ? ORDER BY u.side, u.step",
                (episode,),
            ).fetchall()
        except sqlite3.Error as exc:
            self._problem(f"cannot read it ({_reason(exc)})")
            rows = []
        for side, step, *entry_row in rows:
            entry = self._entry(*entry_row)
            if isinstance(entry, Entry):
                session.known[entry.key] = entry
                session.recorded_uses.setdefault((side, step), []).append(entry.key)
            else:
                session.damaged.add(entry_row[0])
        if local:
            session.fallback = self.lookup
        return session

    # -- writing ------------------------------------------------------------------------------------------------
    def save(self, session: CacheSession) -> None:
        """Write what ``session`` recorded and which entries its episode used, in one transaction
        (a failure is one line in ``problems``: the episode itself is stored all the same)."""
        if self.mode != "read-write" or not (session.recorded or session.uses):
            return
        now = datetime.now(UTC).isoformat(timespec="seconds")
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                for entry in session.recorded:
                    request, reply = entry.texts()
                    self.db.execute(
                        "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?)",
                        (entry.key, entry.model, request.decode(), reply.decode(), entry.checksum(), now),
                    )
                self.db.executemany(
                    "INSERT OR IGNORE INTO uses VALUES (?, ?, ?, ?)",
                    [(session.episode, side, step, key) for side, step, key in session.uses],
                )
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._problem(f"cannot record the replies of episode {session.episode} ({_reason(exc)})")
            return
        self.saved += len(session.recorded)

    def _problem(self, what: str) -> None:
        line = f"--cache {self.path}: {what}"
        if line not in self.problems:
            self.problems.append(line)

    def copy_to(self, target: Path, uses: Iterable[tuple[str, str, int, str]]) -> int:
        """A new cache file at ``target`` (written atomically) holding the entries of ``uses``
        (episode, side, step, key) and those uses: everything a replay of those episodes needs.
        The number of entries written."""
        uses = list(uses)
        keys = sorted({key for *_, key in uses})
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        os.close(handle)
        try:
            out = sqlite3.connect(temporary, isolation_level=None)
            try:
                out.executescript(_SCHEMA)
                out.execute("BEGIN")
                out.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [("format", str(CACHE_FORMAT)), ("written_by", _version())],
                )
                copied = 0
                for key in keys:
                    row = self.db.execute(
                        "SELECT key, model, request, reply, checksum, recorded_at FROM entries WHERE key = ?",
                        (key,),
                    ).fetchone()
                    if row is None or not isinstance(self._entry(*row[:5]), Entry):
                        continue  # missing or damaged: the replay names the miss
                    out.execute("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?)", row)
                    copied += 1
                out.executemany("INSERT OR IGNORE INTO uses VALUES (?, ?, ?, ?)", uses)
                out.execute("COMMIT")
            finally:
                out.close()
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return copied
