"""The stored episode record is the one description of the store's columns."""

import re
import sqlite3
from pathlib import Path

from sopbench.runner import COLUMN_TYPES, END_REASONS, STATUSES, Store

RUNNER_DOC = Path(__file__).resolve().parents[2] / "docs" / "runner.md"


def doc_columns() -> dict[str, str]:
    """The table of columns in docs/runner.md: name -> type (a row may name several columns)."""
    text = RUNNER_DOC.read_text()
    table = text[text.index("| column | type | meaning |") :].split("\n\n", 1)[0]
    columns: dict[str, str] = {}
    for line in table.splitlines()[2:]:
        names, sql = (cell.strip() for cell in line.strip("|").split("|")[:2])
        for name in re.split(r",\s*", names):
            columns[name] = sql
    return columns


def test_the_doc_table_lists_every_stored_column_with_its_type() -> None:
    assert doc_columns() == COLUMN_TYPES


def test_the_doc_names_every_status_and_end_reason() -> None:
    text = RUNNER_DOC.read_text()
    for value in (*STATUSES, *END_REASONS):
        assert f"`{value}`" in text


def test_a_new_store_has_exactly_the_record_columns(tmp_path: Path) -> None:
    Store.for_run(tmp_path / "run").close()
    db = sqlite3.connect(tmp_path / "run" / "results.sqlite")
    table = db.execute("PRAGMA table_info(episodes)").fetchall()
    assert [(row[1], row[2]) for row in table] == [
        (name, "TEXT" if sql == "JSON" else sql) for name, sql in COLUMN_TYPES.items()
    ]
