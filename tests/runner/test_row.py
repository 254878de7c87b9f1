"""The stored episode record is the one description of the store's columns."""

import json
import re
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from sopbench.runner import EpisodeRow, RunSpec, read_run, run
from sopbench.runner.episode import row_of_score, row_score, score_metadata
from sopbench.runner.export import (
    DERIVED,
    DERIVED_FIELDS,
    EXPORT_FIELDS,
    EXPORTED_SETTINGS,
    NOT_EXPORTED,
    SETTINGS_AFTER,
    TIMING_FIELDS,
    export_line,
)
from sopbench.runner.store import COLUMN_TYPES, END_REASONS, SCORE_COLUMNS, STATUSES, Store

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


def doc_export_fields() -> list[tuple[str, str]]:
    """The export's table in docs/runner.md: (field, column) per field, in order."""
    text = RUNNER_DOC.read_text()
    table = text[text.index("| field | from column | what |") :].split("\n\n", 1)[0]
    out: list[tuple[str, str]] = []
    for line in table.splitlines()[2:]:
        names, column = (cell.strip() for cell in line.strip("|").split("|")[:2])
        out += [(name, column) for name in re.split(r",\s*", names)]
    return out


def test_every_column_is_exported_or_left_out_for_a_reason() -> None:
    exported = [column for _name, column in EXPORT_FIELDS if column != DERIVED]
    assert {name for name, column in EXPORT_FIELDS if column == DERIVED} == set(DERIVED_FIELDS)
    assert len(exported) == len(set(exported))
    assert set(exported) | set(NOT_EXPORTED) == set(COLUMN_TYPES)
    assert not set(exported) & set(NOT_EXPORTED)
    assert all(NOT_EXPORTED.values())


def test_the_doc_lists_the_export_fields_in_their_order() -> None:
    expected: list[tuple[str, str]] = []
    for name, column in EXPORT_FIELDS:
        expected.append((name, column))
        if name == SETTINGS_AFTER:
            expected += [(setting, "(manifest)") for setting in EXPORTED_SETTINGS]
    assert doc_export_fields() == expected


def test_an_export_line_has_the_fields_of_the_doc_table_in_its_order() -> None:
    row = EpisodeRow(
        **({column: None for column in COLUMN_TYPES} | {"status": "infra_error", "tool_calls": []})
    )
    line = export_line(row, ablations=EXPORTED_SETTINGS)
    assert list(line) == [name for name, _column in doc_export_fields()]
    assert list(export_line(row, timings=False)) == [
        name for name, _column in EXPORT_FIELDS if name not in TIMING_FIELDS
    ]


def test_an_inspect_score_reads_back_as_the_stored_row_does(small_tasks, tmp_path: Path) -> None:
    """The Inspect scorer keeps ``SCORE_COLUMNS`` of the row; read back, they score alike (whether a
    pass was by default is not known without the calls)."""
    run(
        RunSpec(
            agent="no-verify", tasks=small_tasks, domains=("bank",), output=tmp_path / "r", baselines=False
        )
    )
    for row in read_run(tmp_path / "r", records=False).rows:
        metadata = score_metadata(**{name: getattr(row, name) for name in SCORE_COLUMNS})
        assert list(metadata) == list(SCORE_COLUMNS)
        again = row_of_score(json.loads(json.dumps(metadata)), row.run)
        assert row_score(again, calls_kept=False) == replace(row_score(row), by_default=None)
        assert row_score(again, "sopbench", calls_kept=False).verdict == row_score(row, "sopbench").verdict
    with pytest.raises(TypeError, match="missing"):
        score_metadata(task_id="bank/x[0]")
