"""The run folder's SQLite store, ``DIR/results.sqlite`` (schema in docs/runner.md).

One row per episode, written in one transaction when the episode ends, in WAL mode: a process
killed at any moment leaves every finished episode intact and nothing half-written. Resume reads
which episodes are finished; an ``infra_error`` row is replaced when its episode is run again.

One process writes a folder at a time (``RunLock``, ``runner/_lock.py``); readers
open the store read-only and never create or change a file in the folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

# Everything read back is bounded like any file from outside: anything may have been written into it.
from sopbench._json import JsonBoundError, decode_document
from sopbench._outputs import STORE_NAME
from sopbench.agents import Shown

from ._manifest import Manifest
from ._row import COLUMNS, JSON_COLUMNS, EpisodeRow, episodes_table

# Schema 3: the manifest is a typed document (``Manifest``) that names the sopbench revision too.
# Schema 2 (the manifest and the tasks' digests) and schema 1 (neither) are read by every verb as
# they are; a run (the one writer) makes them schema 3 when it records its manifest.
SCHEMA_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
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

    def cache_uses(self) -> list[tuple[str, str, int, str]]:
        """Which recorded replies (``--cache``) the stored episodes used: ``(episode, side, step, key)``
        with ``episode`` as ``<task id>#<run>`` (the run notes them as ``cache.episode.<episode>``)."""
        with self._reading("its cache notes"):
            notes = self.db.execute("SELECT key, value FROM meta WHERE key LIKE 'cache.episode.%'").fetchall()
            stored = {
                f"{task_id}#{run}" for task_id, run in self.db.execute("SELECT task_id, run FROM episodes")
            }
        uses = []
        for key, value in notes:
            episode = key.removeprefix("cache.episode.")
            if episode not in stored:
                continue
            try:
                listed = orjson.loads(value)
                uses += [(episode, str(side), int(step), str(used)) for side, step, used in listed]
            except (ValueError, TypeError):
                raise StoreError(f"{self.path}: the cache note of episode {episode} is damaged") from None
        return sorted(uses)

    def manifest(self) -> Manifest | None:
        """What the run is (schema 2 and later): versions, task set, result-determining settings,
        creation time; None for a schema-1 store."""
        document = self._note_object("manifest")
        if document is None:
            return None
        try:
            return Manifest.model_validate(document)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"])
            raise StoreError(
                f"{self.path}: damaged store: its manifest does not hold a run's ({where}: {problem['msg']})"
            ) from None

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

    def record_manifest(self, manifest: Manifest, digests: Mapping[str, str]) -> None:
        """Write the manifest and the played tasks' digests in one transaction: a store of an
        earlier schema becomes schema 3 (its episodes are kept as they are)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA.split(";"):  # the tasks table, in this transaction
                if statement.strip():
                    self.db.execute(statement)
            self.db.executemany("INSERT OR REPLACE INTO tasks VALUES (?, ?)", sorted(digests.items()))
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('manifest', ?)", (dumps(manifest.document()),)
            )
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

    def put(self, row: EpisodeRow, shown: Shown | None = None, notes: Iterable[tuple[str, str]] = ()) -> None:
        """Store one finished episode (replacing an earlier ``infra_error`` attempt), atomically, with
        what its model was shown (``shown_notes``) and any further ``meta`` ``notes`` about it."""
        columns = row.columns()
        values = [
            dumps(value) if name in JSON_COLUMNS and value is not None else value
            for name, value in columns.items()
        ]
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
                        shown_notes(row.task_id, row.run, shown),
                    )
                self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(notes))
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:  # a full disk, a file locked or damaged by something else
            raise StoreError(
                f"{self.path}: cannot store episode {row.task_id} run {row.run} ({_reason(exc)}); "
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
            rows = self.db.execute(
                "SELECT key, value FROM meta WHERE key LIKE 'shown.%' ORDER BY key"
            ).fetchall()
        for key, value in rows:
            kind, _, name = key[len("shown.") :].partition(".")
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

    def rows(self, *, on_damaged: OnDamaged | None = None) -> Iterator[EpisodeRow]:
        """Every stored episode in a fixed order: domain, position in the task file, run. A row whose
        JSON does not decode is skipped and named to ``on_damaged`` (raised without one); a damaged
        file is a ``StoreError``."""
        with self._reading("the episodes"):
            cursor = self.db.execute(
                f"SELECT {', '.join(COLUMNS)} FROM episodes ORDER BY domain, task_index, run"
            )
            yield from self._decoded(cursor, on_damaged)

    def _decoded(
        self, cursor: Iterable[tuple[Any, ...]], on_damaged: OnDamaged | None
    ) -> Iterator[EpisodeRow]:
        for values in cursor:
            columns = dict(zip(COLUMNS, values, strict=True))
            try:
                for column in JSON_COLUMNS:
                    if columns[column] is not None:
                        columns[column] = decode_document(columns[column])
            except ValueError as exc:  # not JSON, or past the bound (a row written by hand)
                reason = f"JSON {exc}" if isinstance(exc, JsonBoundError) else "not JSON"
                message = (
                    f"{self.path}: episode {columns['task_id']} run {columns['run']}: "
                    f"damaged row ({column} is {reason})"
                )
                if on_damaged is None:
                    raise StoreError(message) from None
                on_damaged(message)
                continue
            yield EpisodeRow(**columns)

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


def default_tasks_path(store: Store) -> Path:
    """The tasks a stored run was played on (what ``export --format sopbench`` embeds): the
    manifest's absolute path, or the path a schema-1 store noted (as it was given)."""
    return tasks_path_of(store.manifest(), store.note("tasks"))


def tasks_path_of(manifest: Manifest | None, noted: str | None) -> Path:
    """``default_tasks_path`` from what the store holds: its manifest, or (schema 1) the tasks it
    noted. The generated set of the manifest's seed is built on first use."""
    from sopbench.generation import default_tasks_dir

    if manifest is not None:
        if manifest.task_set.generated_seed is not None:
            return default_tasks_dir(manifest.task_set.generated_seed)
        if manifest.task_set.path:
            return Path(manifest.task_set.path)
    if noted:
        return Path(noted)
    return default_tasks_dir()
