"""A run folder written at store schema 2 (before the typed manifest) is still a run: every verb
reads it, its exports are byte for byte what the sopbench that wrote it exported, and the same
``sopbench run`` command on it plays nothing, changes no result and exits 0.

``data/schema2/*.sql`` are SQL dumps of three run folders made by the schema-2 sopbench (the
reference agent on three bank tasks, two runs each; refuse-all on bank and dmv; a model agent whose
endpoint was unreachable, every episode an infra_error). ``data/schema2/exports.json`` holds the
exit code and sha256 of each export that sopbench made of them. The manifests' task path was made
neutral in the dumps: the tasks are the generated set, which a run finds by its seed.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.runner import read_run

DATA = Path(__file__).parent / "data" / "schema2"
EXPORTS = json.loads((DATA / "exports.json").read_text())
FOLDERS = sorted(EXPORTS)
# The command that made each folder (the infra one is left out: its episodes would be retried).
COMMANDS = {
    "reference": ["--agent", "reference", "--domain", "bank", "--limit", "3", "--runs", "2"],
    "refuse": ["--agent", "refuse-all", "--domain", "bank,dmv", "--limit", "2", "--seed", "7"],
}


def _folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    db = sqlite3.connect(folder / "results.sqlite")
    db.executescript((DATA / f"{name}.sql").read_text())
    db.close()
    return folder


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_bytes(folder: Path) -> bytes:
    return (folder / "results.sqlite").read_bytes()


@pytest.mark.parametrize("name", FOLDERS)
def test_a_schema_2_folder_is_read_without_being_written(tmp_path, name):
    folder = _folder(tmp_path, name)
    before = _file_bytes(folder)
    run = read_run(folder)
    assert run.schema_version == 2
    assert run.manifest is not None and run.manifest.sopbench_version == "0.1.0"
    assert run.manifest.sopbench_revision is None  # schema 2 did not keep it
    assert run.manifest.task_set.generated_seed == 0
    assert run.config == run.manifest.config and run.config["agent"] == run.episodes[0].row.agent
    statuses = {episode.row.status for episode in run.episodes}
    assert statuses == ({"infra_error"} if name == "infra" else {"completed"})
    assert _file_bytes(folder) == before
    assert sorted(p.name for p in folder.iterdir()) == ["results.sqlite"]


@pytest.mark.parametrize("name", FOLDERS)
def test_every_export_of_a_schema_2_folder_is_byte_identical(tmp_path, name):
    folder = _folder(tmp_path, name)
    before = _file_bytes(folder)
    for export, (code, digest) in EXPORTS[name].items():
        if export == "sopbench":
            out = tmp_path / f"{name}-trajectories"
            result = CliRunner().invoke(
                app, ["export", str(folder), "--format", "sopbench", "--output", str(out)]
            )
            assert result.exit_code == code, result.output
            made = {
                p.relative_to(out).as_posix(): _sha256(p.read_bytes())
                for p in sorted(out.rglob("*"))
                if p.is_file()
            }
            assert made == digest
            continue
        form, *rest = export.split()
        result = CliRunner().invoke(app, ["export", str(folder), "--format", form, *rest])
        assert result.exit_code == code, result.output
        assert _sha256(result.stdout_bytes) == digest, export
    assert _file_bytes(folder) == before


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_same_run_command_on_a_schema_2_folder_plays_nothing(tmp_path, name):
    folder = _folder(tmp_path, name)
    rows_before = _episodes(folder)
    result = CliRunner().invoke(
        app, ["run", *COMMANDS[name], "--no-baselines", "--output", str(folder), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ran"] == 0 and report["skipped"] == report["episodes"] and report["infra_errors"] == 0
    assert _episodes(folder) == rows_before
    # the writer migrated it; the exports are still those of schema 2
    assert read_run(folder).schema_version == 3
    for export, (code, digest) in EXPORTS[name].items():
        if export != "sopbench":
            form, *rest = export.split()
            result = CliRunner().invoke(app, ["export", str(folder), "--format", form, *rest])
            assert (result.exit_code, _sha256(result.stdout_bytes)) == (code, digest), export


def _episodes(folder: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(f"{(folder / 'results.sqlite').absolute().as_uri()}?mode=ro", uri=True)
    try:
        return db.execute("SELECT * FROM episodes ORDER BY task_id, run").fetchall()
    finally:
        db.close()
