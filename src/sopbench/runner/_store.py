"""The run folder's SQLite store, ``DIR/results.sqlite`` (schema in docs/runner.md).

One row per episode, written in one transaction when the episode ends, in WAL mode: a process
killed at any moment leaves every finished episode intact and nothing half-written. Resume reads
which episodes are finished; an ``infra_error`` row is replaced when its episode is run again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

SCHEMA_VERSION = 1
STORE_NAME = "results.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    task_id TEXT NOT NULL,           -- "<domain>/<goal>[<i>]"
    run INTEGER NOT NULL,            -- 0-based run of the task
    domain TEXT NOT NULL,
    goal TEXT NOT NULL,
    task_index INTEGER NOT NULL,     -- position in the domain's task file
    seed INTEGER NOT NULL,           -- the episode's own seed (derived from the run seed)
    agent TEXT NOT NULL,
    model TEXT,
    tool_mode TEXT,
    tool_list TEXT NOT NULL,
    user TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('completed', 'infra_error')),
    end_reason TEXT NOT NULL,        -- exit_conversation, user_ended, max_turns, max_actions, context_length, infra_error
    reason TEXT,                     -- infra_error: what went wrong
    should_succeed INTEGER NOT NULL,
    passed INTEGER,                  -- NULL for infra_error
    verdict TEXT,                    -- JSON: the sound verdict (11 keys)
    compat TEXT,                     -- JSON: the sopbench-protocol verdict (11 keys)
    explanations TEXT NOT NULL,      -- JSON list
    messages TEXT NOT NULL,          -- JSON: the transcript, chat-completions shape
    tool_calls TEXT NOT NULL,        -- JSON: executed calls {id, name, arguments_text, arguments, output, problem}
    final_database TEXT,             -- JSON
    problems TEXT NOT NULL,          -- JSON list: malformed calls and replies, raw text kept
    raw_replies TEXT NOT NULL,       -- JSON list: {message, raw} for replies the agent parsed (ReAct text)
    malformed_calls INTEGER NOT NULL,
    usage TEXT NOT NULL,             -- JSON {prompt_tokens, completion_tokens} of the agent
    user_usage TEXT NOT NULL,
    agent_steps INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    attempts INTEGER NOT NULL,       -- how many times the episode was run (infra_error retries)
    finished_at TEXT NOT NULL,
    PRIMARY KEY (task_id, run)
);
"""

COLUMNS = (
    "task_id",
    "run",
    "domain",
    "goal",
    "task_index",
    "seed",
    "agent",
    "model",
    "tool_mode",
    "tool_list",
    "user",
    "status",
    "end_reason",
    "reason",
    "should_succeed",
    "passed",
    "verdict",
    "compat",
    "explanations",
    "messages",
    "tool_calls",
    "final_database",
    "problems",
    "raw_replies",
    "malformed_calls",
    "usage",
    "user_usage",
    "agent_steps",
    "latency_s",
    "attempts",
    "finished_at",
)
JSON_COLUMNS = frozenset(
    {
        "verdict",
        "compat",
        "explanations",
        "messages",
        "tool_calls",
        "final_database",
        "problems",
        "raw_replies",
        "usage",
        "user_usage",
    }
)


class StoreError(Exception):
    """A store that cannot be used: another run's folder, a newer schema, a damaged file."""


def dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


@dataclass(frozen=True, slots=True)
class Finished:
    status: str
    attempts: int


class Store:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / STORE_NAME
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(
                "PRAGMA synchronous=NORMAL"
            )  # WAL + NORMAL: a killed process loses nothing committed
            self.db.executescript(_SCHEMA)
            self._check_version()
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{self.path}: cannot open the store ({exc})") from None

    def _check_version(self) -> None:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            self.db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        elif int(row[0]) != SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: schema version {row[0]}, this sopbench reads version {SCHEMA_VERSION}"
            )

    def claim(self, identity: Mapping[str, Any]) -> None:
        """Bind the folder to a run configuration; another configuration is refused."""
        text = dumps(dict(identity))
        row = self.db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
        if row is None:
            self.db.execute("INSERT INTO meta VALUES ('config', ?)", (text,))
            return
        stored = orjson.loads(row[0])
        if stored != orjson.loads(text):
            differing = sorted(k for k in set(stored) | set(identity) if stored.get(k) != identity.get(k))
            raise StoreError(
                f"{self.folder} holds a run with other settings ({', '.join(differing)}); "
                "use another --output folder to run these"
            )

    def set_note(self, key: str, value: str) -> None:
        """Remember a setting that may change between invocations (the tasks path)."""
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def note(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def config(self) -> dict[str, Any] | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
        return None if row is None else orjson.loads(row[0])

    def finished(self) -> dict[tuple[str, int], Finished]:
        rows = self.db.execute("SELECT task_id, run, status, attempts FROM episodes")
        return {(task_id, run): Finished(status, attempts) for task_id, run, status, attempts in rows}

    def put(self, row: Mapping[str, Any]) -> None:
        """Store one finished episode (replacing an earlier ``infra_error`` attempt), atomically."""
        values = [dumps(row[c]) if c in JSON_COLUMNS and row[c] is not None else row[c] for c in COLUMNS]
        placeholders = ", ".join("?" for _ in COLUMNS)
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute(
                f"INSERT OR REPLACE INTO episodes ({', '.join(COLUMNS)}) VALUES ({placeholders})", values
            )
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def rows(self, *, decode: bool = True) -> Iterator[dict[str, Any]]:
        """Every stored episode in a fixed order: domain, position in the task file, run."""
        cursor = self.db.execute(
            f"SELECT {', '.join(COLUMNS)} FROM episodes ORDER BY domain, task_index, run"
        )
        for values in cursor:
            row = dict(zip(COLUMNS, values, strict=True))
            if decode:
                for column in JSON_COLUMNS:
                    if row[column] is not None:
                        row[column] = orjson.loads(row[column])
            yield row

    def close(self) -> None:
        self.db.close()


def open_existing(folder: Path) -> Store:
    """The store of a run folder that must already exist (export)."""
    if not (folder / STORE_NAME).is_file():
        raise StoreError(f"{folder}: no {STORE_NAME} here (run `sopbench run --output {folder}` first)")
    return Store(folder)


def default_tasks_path(store: Store) -> Path:
    """The tasks a stored run was played on (what ``export --format sopbench`` embeds)."""
    noted = store.note("tasks")
    if noted:
        return Path(noted)
    from sopbench.generation import default_tasks_dir

    return default_tasks_dir()
