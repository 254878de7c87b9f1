"""The run folder's SQLite store, ``DIR/results.sqlite`` (schema in docs/runner.md).

One row per episode, written in one transaction when the episode ends, in WAL mode: a process
killed at any moment leaves every finished episode intact and nothing half-written. Resume reads
which episodes are finished; an ``infra_error`` row is replaced when its episode is run again.

One process writes a folder at a time (``RunLock``, an OS lock that dies with its process); readers
open the store read-only and never create or change a file in the folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

# Everything read back is bounded like any file from outside: anything may have been written into it.
from sopbench._json import JsonBoundError, decode_document
from sopbench._outputs import LOCK_NAME, STORE_NAME
from sopbench.agents import Shown

from ._row import COLUMNS, JSON_COLUMNS, episodes_table

SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)  # schema 1: stores made before the manifest (read by every verb)
# How long a write waits for a store another program (not a sopbench run: the lock excludes those)
# holds locked before it fails with one line.
BUSY_TIMEOUT_S = 2.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
{episodes};
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY,        -- "<domain>/<goal>[<i>]"
    sha256 TEXT NOT NULL             -- of the task's canonical JSON, as it was played
);
""".replace("{episodes}", episodes_table())


class StoreError(Exception):
    """A store that cannot be used: another run's folder, a newer schema, a damaged or foreign file,
    a folder in use by another run."""


def dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def shown_notes(task_id: str, run: int, shown: Shown) -> list[tuple[str, str]]:
    """The ``meta`` rows that keep what an episode's model was shown: each distinct system prompt
    once (``shown.prompt.<digest>``), each distinct tool list once (``shown.tools.<digest>``), and
    per episode which ones it got (``shown.episode.<task id>#<run>``); the digest is the first 16 hex
    digits of the sha256 of the text (the tool list: its JSON)."""
    notes = []
    prompt = tools = None
    if shown.system_prompt is not None:
        prompt = _digest(shown.system_prompt)
        notes.append((f"shown.prompt.{prompt}", shown.system_prompt))
    if shown.tools:
        text = dumps([dict(tool) for tool in shown.tools])
        tools = _digest(text)
        notes.append((f"shown.tools.{tools}", text))
    episode = {"task_id": task_id, "run": run, "system_prompt": prompt, "tools": tools}
    notes.append((f"shown.episode.{task_id}#{run}", dumps(episode)))
    return notes


@dataclass(frozen=True, slots=True)
class Finished:
    status: str
    attempts: int


OnDamaged = Callable[[str], None]


class Store:
    """An open store. ``Store.for_run(folder)`` opens (or creates) it to write; ``open_existing``
    opens an existing one read-only."""

    def __init__(self, folder: Path, db: sqlite3.Connection, *, writable: bool) -> None:
        self.folder = folder
        self.path = folder / STORE_NAME
        self.db = db
        self.writable = writable
        self.version = self._version()

    # -- opening --------------------------------------------------------------------------------
    @classmethod
    def for_run(cls, folder: Path) -> Store:
        """The store to write a run into (created when missing). An existing file must be a sopbench
        store of a version this sopbench reads; nothing in it is changed here."""
        path = folder / STORE_NAME
        if path.exists():  # an empty file is refused too: it is not a store, and may be a lost one
            open_existing(folder).close()  # refuses a foreign file or a newer schema, read-only
        try:
            folder.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_S)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a killed process loses nothing committed
            if not _has_table(db, "meta"):  # a new store is made at the current version
                db.executescript(_SCHEMA)
                db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{path}: cannot open the store ({_reason(exc)})") from None
        return cls(folder, db, writable=True)

    def _version(self) -> int:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot read the store ({_reason(exc)})") from None
        if row is None:
            raise StoreError(f"{self.path}: not a sopbench store (no schema version)")
        try:
            version = int(row[0])
        except ValueError:
            raise StoreError(f"{self.path}: not a sopbench store (schema version {row[0]!r})") from None
        if version not in READABLE_VERSIONS:
            raise StoreError(
                f"{self.path}: schema version {version}, this sopbench reads versions "
                f"{', '.join(map(str, READABLE_VERSIONS))} (a newer sopbench made it)"
            )
        return version

    # -- the manifest ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def _reading(self, what: str) -> Iterator[None]:
        """A damaged file (a corrupted page, a table gone): a ``StoreError`` naming it."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot read {what} ({_reason(exc)})") from None

    def note(self, key: str) -> str | None:
        with self._reading(f"its {key}"):
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def manifest(self) -> dict[str, Any] | None:
        """What the run is (schema 2): versions, task set, result-determining settings, creation time."""
        return self._note_object("manifest")

    def legacy_config(self) -> dict[str, Any] | None:
        """The configuration a schema-1 store was bound to (``meta.config``)."""
        return self._note_object("config")

    def _note_object(self, key: str) -> dict[str, Any] | None:
        try:
            value = None if (text := self.note(key)) is None else decode_document(text)
        except ValueError as exc:
            raise StoreError(f"{self.path}: damaged store: its {key} is not JSON ({exc})") from None
        if value is not None and not isinstance(value, dict):
            raise StoreError(f"{self.path}: damaged store: its {key} is not a JSON object")
        return value

    def task_digests(self) -> dict[str, str]:
        """task id -> sha256 of the task as it was played (schema 2)."""
        with self._reading("its task digests"):
            if self.version < 2 or not _has_table(self.db, "tasks"):
                return {}
            return dict(self.db.execute("SELECT task_id, sha256 FROM tasks"))

    def record_manifest(self, manifest: Mapping[str, Any], digests: Mapping[str, str]) -> None:
        """Write the manifest and the played tasks' digests in one transaction (a schema-1 store
        becomes schema 2)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA.split(";"):  # the tasks table, in this transaction
                if statement.strip():
                    self.db.execute(statement)
            self.db.executemany("INSERT OR REPLACE INTO tasks VALUES (?, ?)", sorted(digests.items()))
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('manifest', ?)", (dumps(dict(manifest)),))
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
            self.db.execute("DELETE FROM meta WHERE key IN ('config', 'tasks')")  # schema 1's
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        self.version = SCHEMA_VERSION

    # -- episodes -------------------------------------------------------------------------------
    def finished(self) -> dict[tuple[str, int], Finished]:
        """Stored episodes; a damaged row (JSON that does not decode) counts as not finished, so
        that resume runs its episode again and replaces it."""
        valid = " AND ".join(f"({c} IS NULL OR json_valid({c}))" for c in sorted(JSON_COLUMNS))
        with self._reading("the stored episodes"):
            rows = self.db.execute(f"SELECT task_id, run, status, attempts FROM episodes WHERE {valid}")
            return {(task_id, run): Finished(status, attempts) for task_id, run, status, attempts in rows}

    def put(self, row: Mapping[str, Any], shown: Shown | None = None) -> None:
        """Store one finished episode (replacing an earlier ``infra_error`` attempt), atomically, with
        what its model was shown (``shown_notes``)."""
        values = [dumps(row[c]) if c in JSON_COLUMNS and row[c] is not None else row[c] for c in COLUMNS]
        placeholders = ", ".join("?" for _ in COLUMNS)
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.execute(
                    f"INSERT OR REPLACE INTO episodes ({', '.join(COLUMNS)}) VALUES ({placeholders})", values
                )
                if shown is not None:
                    self.db.executemany(
                        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                        shown_notes(row["task_id"], row["run"], shown),
                    )
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:  # a full disk, a file locked or damaged by something else
            raise StoreError(
                f"{self.path}: cannot store episode {row['task_id']} run {row['run']} ({_reason(exc)}); "
                "every episode stored before is kept"
            ) from None

    def shown(self) -> dict[str, Any]:
        """What the models of this run were shown (see ``shown_notes``), as one document:
        ``{"system_prompts": {digest: text}, "tools": {digest: [schema, ...]},
        "episodes": [{"task_id", "run", "system_prompt": digest, "tools": digest}, ...]}``."""
        prompts: dict[str, Any] = {}
        tools: dict[str, Any] = {}
        episodes = []
        with self._reading("what the models were shown"):
            rows = self.db.execute("SELECT key, value FROM meta WHERE key LIKE 'shown.%' ORDER BY key").fetchall()
        for key, value in rows:
            kind, _, name = key[len("shown."):].partition(".")
            try:
                if kind == "prompt":
                    prompts[name] = value
                elif kind == "tools":
                    tools[name] = decode_document(value)
                elif kind == "episode":
                    episodes.append(decode_document(value))
            except ValueError as exc:
                raise StoreError(f"{self.path}: damaged store: its note {key} is not JSON ({exc})") from None
        episodes.sort(key=lambda e: (e["task_id"], e["run"]))
        return {"system_prompts": prompts, "tools": tools, "episodes": episodes}

    def rows(self, *, decode: bool = True, on_damaged: OnDamaged | None = None) -> Iterator[dict[str, Any]]:
        """Every stored episode in a fixed order: domain, position in the task file, run. A row whose
        JSON does not decode is skipped and named to ``on_damaged`` (raised without one); a damaged
        file is a ``StoreError``."""
        with self._reading("the episodes"):
            cursor = self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM episodes ORDER BY domain, task_index, run")
            yield from self._decoded(cursor, decode, on_damaged)

    def _decoded(
        self, cursor: Iterable[tuple[Any, ...]], decode: bool, on_damaged: OnDamaged | None
    ) -> Iterator[dict[str, Any]]:
        for values in cursor:
            row = dict(zip(COLUMNS, values, strict=True))
            if decode:
                try:
                    for column in JSON_COLUMNS:
                        if row[column] is not None:
                            row[column] = decode_document(row[column])
                except ValueError as exc:  # not JSON, or past the bound (a row written by hand)
                    reason = f"JSON {exc}" if isinstance(exc, JsonBoundError) else "not JSON"
                    message = f"{self.path}: episode {row['task_id']} run {row['run']}: damaged row ({column} is {reason})"
                    if on_damaged is None:
                        raise StoreError(message) from None
                    on_damaged(message)
                    continue
            yield row

    def close(self) -> None:
        if self.writable:
            # Back to a rollback journal: the file alone holds the run (readers need no -wal/-shm).
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("PRAGMA journal_mode=DELETE")
        self.db.close()


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    return (
        db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
        is not None
    )


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc)


def open_existing(folder: Path) -> Store:
    """The store of a run folder that must already exist, opened read-only: no lock, no write access
    needed, and no file in the folder is created or changed (a store left in WAL mode without its
    ``-wal`` file is opened immutable, as nothing can be pending in it)."""
    path = folder / STORE_NAME
    if not path.is_file():
        raise StoreError(f"{folder}: no {STORE_NAME} here (run `sopbench run --output {folder}` first)")
    if path.stat().st_size == 0:
        raise StoreError(f"{path}: empty file, not a sopbench store")
    if not os.access(path, os.R_OK):
        raise StoreError(f"{path}: not readable (check its permissions)")
    mode = "mode=ro" if Path(f"{path}-wal").exists() else "immutable=1"
    try:
        db = sqlite3.connect(f"{path.absolute().as_uri()}?{mode}", uri=True, isolation_level=None)
        if not _has_table(db, "meta") or not _has_table(db, "episodes"):
            db.close()
            raise StoreError(f"{path}: not a sopbench store (an SQLite file without its tables)")
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: not a sopbench store ({_reason(exc)})") from None
    store = Store(folder, db, writable=False)
    return store


class RunLock:
    """The one-writer lock of a run folder: ``flock`` on ``DIR/results.sqlite.lock``, held for the
    whole run and released by the OS when the process ends (however it ends). The file holds the
    writer's process id, for the message a second writer gets."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / LOCK_NAME
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create the run folder's lock ({_reason(exc)})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise StoreError(
                f"{self.path.parent} is in use by process {holder} (another sopbench run); "
                "wait for it to end or choose another --output folder"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock; the file stays (removing it would race a new writer)
            self._fd = None


def run_in_progress(folder: Path) -> bool:
    """Whether a ``sopbench run`` (or sweep) is writing ``folder`` now: its lock file names a live
    process and the lock is held. The lock is probed (a shared lock taken and let go at once) only
    when that process is alive, so a folder no run writes is never touched; a probe could turn away
    a run starting in that very microsecond, never one already running."""
    path = folder / LOCK_NAME
    try:
        pid = int(path.read_text(encoding="ascii", errors="replace").strip())
        if pid <= 0:
            return False
        os.kill(pid, 0)
    except PermissionError:
        pass  # alive, someone else's: probe the lock
    except (OSError, ValueError):
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also lets go of the probe's lock
    return False


def default_tasks_path(store: Store) -> Path:
    """The tasks a stored run was played on (what ``export --format sopbench`` embeds): the
    manifest's absolute path, or the path a schema-1 store noted (as it was given)."""
    manifest = store.manifest()
    if manifest is not None:
        task_set = manifest.get("task_set", {})
        if task_set.get("generated_seed") is not None:
            from sopbench.generation import default_tasks_dir

            return default_tasks_dir(int(task_set["generated_seed"]))
        if task_set.get("path"):
            return Path(task_set["path"])
    noted = store.note("tasks")
    if noted:
        return Path(noted)
    from sopbench.generation import default_tasks_dir

    return default_tasks_dir()
