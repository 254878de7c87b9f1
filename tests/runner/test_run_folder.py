"""A run folder that knows what it ran: the manifest, resuming only the same run, schema-1 stores,
one writer, read-only readers, damaged rows, and the task set checked by export."""

from __future__ import annotations

import json
import os
import platform
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench import __version__
from sopbench.cli import app
from sopbench.runner import RunSpec, StoreError, run
from sopbench.runner.episode import select_tasks
from sopbench.runner.store import (
    SCHEMA_VERSION,
    open_existing,
    sopbench_revision,
    task_digest,
    task_set_digest,
)

runner = CliRunner()


def _config(output: Path, tasks: Path, agent: str = "reference", **extra) -> RunSpec:
    return RunSpec(agent=agent, tasks=tasks, output=output, baselines=False, **extra)


def _cli(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def _first_line(result) -> str:
    return result.output.splitlines()[0] if result.output else ""


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of a folder with its bytes (what "left as it was" compares)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "results.sqlite.lock"  # the writer's lock, not the store
    }


def _altered_tasks(small_tasks: Path, tmp_path: Path) -> Path:
    """The same task ids, but the first bank task expects the other outcome (a regenerated set)."""
    folder = tmp_path / "altered"
    folder.mkdir()
    for file in small_tasks.iterdir():
        data = json.loads(file.read_text())
        if file.name.startswith("bank"):
            first = next(iter(data.values()))[0]
            first["user_prompt"] = first["user_prompt"] + " Please hurry."
        (folder / file.name).write_text(json.dumps(data))
    return folder


# ---- the manifest ----------------------------------------------------------------------------------
def test_the_manifest_says_what_was_run_on_which_tasks(small_tasks, tmp_path):
    config = _config(tmp_path / "run", small_tasks, limit=2, seed=3)
    run(config)
    store = open_existing(tmp_path / "run")
    manifest, digests, version = store.manifest(), store.task_digests(), store.version
    store.close()
    assert version == SCHEMA_VERSION == 3 and manifest is not None
    assert manifest.sopbench_version == __version__
    assert manifest.sopbench_revision == sopbench_revision()  # the checkout's commit, or None
    assert manifest.python_version == platform.python_version()
    assert manifest.created_at.endswith("+00:00")
    played = select_tasks(config)
    assert digests == {task_id: task_digest(task) for task, task_id in played}
    assert manifest.task_set.model_dump() == {
        "path": str(small_tasks.absolute()),
        "generated_seed": None,
        "tasks": 4,
        "sha256": task_set_digest(digests),
    }
    assert manifest.config == config.identity()
    assert manifest.config["agent"] == "reference" and manifest.config["seed"] == 3
    for field in ("model", "tool_mode", "tool_list", "user", "max_turns", "max_actions", "temperature"):
        assert field in manifest.config
    for setting in ("concurrency", "episode_timeout", "output", "tasks", "limit", "runs"):
        assert setting not in manifest.config


def test_settings_that_change_no_result_are_not_identity(monkeypatch):
    monkeypatch.setenv("OTHER_KEY", "sk-test")  # a key variable named by api_key_env must be set
    base = RunSpec(agent="openai", output="x", agent_options={"model": "m"})
    same = RunSpec(
        agent="openai",
        output="y",
        concurrency=1,
        episode_timeout=5,
        agent_options={
            "model": "m",
            "temperature": 0.0,  # the default, given explicitly
            "request_timeout": 9,
            "max_retries": 0,
            "api_key_env": "OTHER_KEY",
            "base_url": "http://127.0.0.1:9/v1/",
        },
    )
    assert base.identity() == same.identity()
    other = RunSpec(agent="openai", output="x", agent_options={"model": "m", "max_tokens": 64})
    assert other.identity()["max_tokens"] == 64 and other.identity() != base.identity()


# ---- resume only the same run ----------------------------------------------------------------------
def test_resume_with_other_tasks_is_refused_and_the_store_is_untouched(small_tasks, tmp_path):
    folder = tmp_path / "run"
    assert (
        _cli("run", "--agent", "reference", "--tasks", small_tasks, "-o", folder, "--no-baselines").exit_code
        == 0
    )
    before = _snapshot(folder)
    altered = _altered_tasks(small_tasks, tmp_path)
    result = _cli("run", "--agent", "reference", "--tasks", altered, "-o", folder, "--no-baselines")
    assert result.exit_code == 2
    line = _first_line(result)
    assert line.startswith(f"error: {folder} holds another run (task_set.sha256: ")
    assert "1 of 12 tasks played before differ, first bank/" in line and len(result.output.splitlines()) == 1
    assert _snapshot(folder) == before


def test_resume_with_another_setting_names_each_field_and_both_values(small_tasks, tmp_path):
    folder = tmp_path / "run"
    common = ("--tasks", small_tasks, "-o", folder, "--no-baselines", "--limit", "1")
    assert _cli("run", "--agent", "reference", *common).exit_code == 0
    before = _snapshot(folder)
    result = _cli("run", "--agent", "refuse-all", "--max-turns", "6", *common)
    assert result.exit_code == 2
    assert _first_line(result) == (
        f'error: {folder} holds another run (agent: "reference" stored, "refuse-all" now; '
        "max_turns: 20 stored, 6 now); it is left as it was: use another --output folder to run these"
    )
    assert _snapshot(folder) == before
    # what changes no result resumes: concurrency, the episode timeout
    again = _cli("run", "--agent", "reference", "--concurrency", "1", "--episode-timeout", "50", *common)
    assert again.exit_code == 0 and "0 run now, 2 already stored" in again.output


def _make_schema_1(folder: Path, tasks_noted: str) -> None:
    """Turn a store into what sopbench made before the manifest (schema 1)."""
    with sqlite3.connect(folder / "results.sqlite") as db:
        manifest = json.loads(db.execute("SELECT value FROM meta WHERE key = 'manifest'").fetchone()[0])
        legacy = {
            "agent": manifest["config"]["agent"],
            "agent_options": {},
            "user": "none",
            "user_options": {},
            "tool_list": "full",
            "seed": 0,
            "max_turns": 20,
            "max_actions": 10,
        }
        db.execute("DELETE FROM meta WHERE key = 'manifest'")
        db.execute("DROP TABLE tasks")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        db.execute("INSERT INTO meta VALUES ('config', ?)", (json.dumps(legacy),))
        db.execute("INSERT INTO meta VALUES ('tasks', ?)", (tasks_noted,))


def test_a_schema_1_store_is_read_and_adopted_only_on_its_own_tasks(small_tasks, tmp_path):
    folder = tmp_path / "old"
    run(_config(folder, small_tasks, limit=2))
    _make_schema_1(folder, "some/relative/tasks")
    exported = _cli("export", folder, "-o", tmp_path / "old.jsonl")
    assert exported.exit_code == 0 and len((tmp_path / "old.jsonl").read_text().splitlines()) == 4
    # other tasks: refused, saying what to do, nothing changed
    before = _snapshot(folder)
    altered = _altered_tasks(small_tasks, tmp_path)
    with pytest.raises(
        StoreError, match=r"schema 1.*were not played on the tasks of .*--tasks some/relative/tasks"
    ):
        run(_config(folder, altered, limit=2))
    assert _snapshot(folder) == before
    # its own tasks: adopted, upgraded to schema 3, finished episodes kept
    resumed = run(_config(folder, small_tasks, limit=3))
    assert (resumed.skipped, resumed.ran) == (4, 2)
    store = open_existing(folder)
    manifest = store.manifest()
    assert store.version == 3 and manifest is not None and manifest.task_set.tasks == 6
    assert len(store.task_digests()) == 6
    store.close()


# ---- one writer ------------------------------------------------------------------------------------
SLOW_RUN = """
import sys
sys.path.insert(0, {tests!r})
import conftest  # registers test-slow-reference
from sopbench.cli import main
sys.argv = ["sopbench", "run", "--agent", "test-slow-reference", "--tasks", {tasks!r}, "--output", {output!r},
            "--concurrency", "1", "--runs", "10", "--no-baselines"]  # minutes: it is stopped
main()
"""


def test_a_second_run_on_a_folder_in_use_exits_2_at_once(small_tasks, tmp_path):
    folder = tmp_path / "run"
    script = SLOW_RUN.format(tests=str(Path(__file__).parent), tasks=str(small_tasks), output=str(folder))
    first = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        lock = folder / "results.sqlite.lock"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (lock.exists() and lock.read_text().strip()):
            time.sleep(0.01)
        assert first.poll() is None
        started = time.monotonic()
        second = subprocess.run(
            [
                sys.executable,
                "-m",
                "sopbench.cli",
                "run",
                "--agent",
                "refuse-all",
                "--tasks",
                str(small_tasks),
                "--output",
                str(folder),
                "--no-baselines",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 2
        assert second.stderr.splitlines() == [
            f"error: {folder} is in use by process {first.pid} (another sopbench run); wait for it to end "
            "or choose another --output folder"
        ]
        assert time.monotonic() - started < 15  # at once: no episode was played
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    store = open_existing(folder)
    agents = {row.agent for row in store.rows()}
    store.close()
    assert agents == {"test-slow-reference"}


# ---- readers ---------------------------------------------------------------------------------------
def test_export_creates_and_changes_nothing_in_the_run_folder(small_tasks, tmp_path):
    folder = tmp_path / "run"
    run(_config(folder, small_tasks, limit=1))
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}
    assert _cli("export", folder, "-o", tmp_path / "e.jsonl").exit_code == 0
    assert _cli("export", folder, "--format", "sopbench", "-o", tmp_path / "traj").exit_code == 0
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()} == before


def test_an_empty_or_foreign_results_file_is_refused_not_adopted(small_tasks, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "results.sqlite").touch()
    result = _cli("export", empty)
    assert (
        result.exit_code == 2
        and _first_line(result) == f"error: {empty / 'results.sqlite'}: empty file, not a sopbench store"
    )
    assert (empty / "results.sqlite").stat().st_size == 0 and sorted(p.name for p in empty.iterdir()) == [
        "results.sqlite"
    ]

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    with sqlite3.connect(foreign / "results.sqlite") as db:
        db.execute("CREATE TABLE results (x)")
    before = _snapshot(foreign)
    for args in (("export", foreign), ("run", "--agent", "reference", "--tasks", small_tasks, "-o", foreign)):
        result = _cli(*args)
        assert result.exit_code == 2
        assert _first_line(result) == (
            f"error: {foreign / 'results.sqlite'}: not a sopbench store (an SQLite file without its tables)"
        )
    assert _snapshot(foreign) == before

    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "results.sqlite").write_bytes(b"not a database at all" * 100)
    result = _cli("export", garbage)
    assert result.exit_code == 2 and "not a sopbench store (file is not a database)" in _first_line(result)


# ---- damaged rows ----------------------------------------------------------------------------------
def test_a_damaged_row_is_skipped_and_named_by_export_and_run_again_by_resume(small_tasks, tmp_path):
    folder = tmp_path / "run"
    run(_config(folder, small_tasks, limit=2))
    with sqlite3.connect(folder / "results.sqlite") as db:
        task_id = db.execute("SELECT task_id FROM episodes ORDER BY task_id LIMIT 1").fetchone()[0]
        db.execute("UPDATE episodes SET messages = '[{\"role\": ' WHERE task_id = ?", (task_id,))
    result = _cli("export", folder, "-o", tmp_path / "e.jsonl")
    assert result.exit_code == 1
    assert (
        f"skipped: {folder / 'results.sqlite'}: episode {task_id} run 0: damaged row (messages is not JSON)"
        in result.output
    )
    assert len((tmp_path / "e.jsonl").read_text().splitlines()) == 3
    resumed = run(_config(folder, small_tasks, limit=2))
    assert (resumed.ran, resumed.completed, resumed.damaged) == (1, 4, [])


# ---- export checks the task set ----------------------------------------------------------------------
def test_export_sopbench_with_tasks_that_no_longer_match_writes_nothing(small_tasks, tmp_path):
    folder = tmp_path / "run"
    run(_config(folder, small_tasks))
    altered = _altered_tasks(small_tasks, tmp_path)
    out = tmp_path / "traj"
    result = _cli("export", folder, "--format", "sopbench", "--tasks", altered, "-o", out)
    assert result.exit_code == 2
    assert _first_line(result).startswith(
        f"error: {altered} does not hold the tasks this run was played on (1 episodes of bank differ, first bank/"
    )
    assert not out.exists()


# ---- the command line ----------------------------------------------------------------------------------
def test_version_and_the_summary_names_the_task_set(small_tasks, tmp_path):
    version = _cli("--version")
    assert version.exit_code == 0 and version.output == f"sopbench {__version__}\n"
    folder = tmp_path / "runs" / "r"  # a run creates its folder, parents included
    result = _cli("run", "--agent", "reference", "--tasks", small_tasks, "-o", folder, "--no-baselines")
    store = open_existing(folder)
    manifest = store.manifest()
    assert manifest is not None
    digest = manifest.task_set.sha256
    store.close()
    assert _first_line(result) == f"tasks: {small_tasks.absolute()}; 12 tasks; sha256 {digest[:12]}"


def test_a_misspelled_domain_is_refused_before_the_default_task_set_is_built(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    started = time.monotonic()
    result = _cli("run", "--agent", "reference", "--domain", "bnak", "-o", tmp_path / "r")
    assert result.exit_code == 2 and _first_line(result).startswith(
        "error: --domain: unknown domain bnak; known: all, bank"
    )
    assert time.monotonic() - started < 5 and not (tmp_path / "cache").exists()


def test_task_files_sopbench_cannot_play_are_one_line_errors(small_tasks, tmp_path):
    foreign = tmp_path / "foo_tasks.json"
    foreign.write_text((small_tasks / "bank_tasks.json").read_text())
    result = _cli("run", "--agent", "reference", "--tasks", foreign, "-o", tmp_path / "a")
    assert result.exit_code == 2
    # (tests may register more domains: the list starts with the published ones)
    assert _first_line(result).startswith(
        f"error: {foreign}: unknown domain 'foo'; known: bank, dmv, healthcare, hotel, library, online_market"
    )
    data = json.loads((small_tasks / "bank_tasks.json").read_text())
    goal = next(iter(data))
    data[goal][0]["constraints"] = ["single", "no_such_check", {}]
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "bank_tasks.json").write_text(json.dumps(data))
    result = _cli("run", "--agent", "reference", "--tasks", bad, "-o", tmp_path / "b")
    assert result.exit_code == 2
    assert _first_line(result) == (
        f"error: {bad / 'bank_tasks.json'}: task bank/{goal}[0]: its constraints name 'no_such_check', "
        "which the bank domain has no check, tool or link for"
    )
    assert not (tmp_path / "b" / "results.sqlite").exists()


def test_a_store_that_cannot_be_written_is_one_line_and_keeps_what_was_stored(small_tasks, tmp_path):
    folder = tmp_path / "run"
    run(_config(folder, small_tasks, limit=1))
    # another program holds the SQLite file locked (not a sopbench run): busy, then one line
    holder = sqlite3.connect(folder / "results.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = _cli("run", "--agent", "reference", "--tasks", small_tasks, "-o", folder, "--limit", "2")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 2 and "this is a bug" not in result.output
    assert _first_line(result).startswith(f"error: {folder / 'results.sqlite'}: ")
    assert "database is locked" in _first_line(result)
    store = open_existing(folder)
    assert len(list(store.rows())) == 2
    store.close()


def test_run_interrupted_with_a_builtin_agent_stops_at_once(published_tasks_dir, tmp_path):
    """Ctrl-C, SIGTERM and a double Ctrl-C with the reference agent (which never waits on I/O)."""
    for signals, code, word in (
        ([signal.SIGINT], 130, "interrupted"),
        ([signal.SIGTERM], 143, "terminated"),
        ([signal.SIGINT, signal.SIGINT], 130, "interrupted"),
    ):
        folder = tmp_path / f"run-{code}-{len(signals)}"
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sopbench.cli",
                "run",
                "--agent",
                "reference",
                "--tasks",
                str(published_tasks_dir),
                "--domain",
                "bank",
                "--runs",
                "20",
                "-o",
                str(folder),
                "--no-baselines",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        stored = 0
        while time.monotonic() < deadline and stored < 5 and process.poll() is None:
            time.sleep(0.05)
            try:
                with sqlite3.connect(f"file:{folder / 'results.sqlite'}?mode=ro", uri=True) as probe:
                    stored = probe.execute("SELECT count(*) FROM episodes").fetchone()[0]
            except sqlite3.Error:
                stored = 0
        assert process.poll() is None, process.stderr.read()
        sent = time.monotonic()
        for signum in signals:
            process.send_signal(signum)
            time.sleep(0.05)
        _, stderr = process.communicate(timeout=30)
        assert time.monotonic() - sent < 3
        assert process.returncode == code, (signals, stderr)
        lines = stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"{word}: ") and "resume" in lines[0], stderr
        store = open_existing(folder)
        kept = len(list(store.rows()))
        store.close()
        assert 5 <= kept < 20 * 185


def test_run_refuses_an_output_that_is_its_store(small_tasks, tmp_path):
    folder = tmp_path / "run"
    run(_config(folder, small_tasks, limit=1))
    before = _snapshot(folder)
    for companion, what in (
        ("results.sqlite", "a run's store"),
        ("results.sqlite-wal", "a run's store journal (wal)"),
        ("results.sqlite-journal", "a run's store journal (journal)"),
    ):
        result = _cli(
            "run",
            "--agent",
            "reference",
            "--tasks",
            small_tasks,
            "-o",
            folder,
            "--limit",
            "1",
            "--problems",
            folder / companion,
        )
        assert result.exit_code == 2
        assert _first_line(result) == (
            f"error: --problems {folder / companion}: is {what}; writing it could destroy stored episodes: "
            "choose another name"
        )
    assert _snapshot(folder) == before
    assert os.path.getsize(folder / "results.sqlite") > 0


def test_export_refuses_outputs_that_are_its_inputs_or_each_other(small_tasks, tmp_path):
    folder = tmp_path / "run"
    run(_config(folder, small_tasks, limit=1))
    before = _snapshot(folder)
    out = tmp_path / "traj"
    (out / "bank").mkdir(parents=True)
    trajectory = out / "bank" / "ast_reference-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"
    cases = {
        ("--format", "sopbench", "-o", out, "--problems", trajectory): (
            f"error: --problems and --output name the same file {trajectory}"
        ),
        ("--format", "sopbench", "-o", folder): (
            f"error: --output {folder} is also an input folder (argument); writing into it could destroy the "
            "input: choose another output folder"
        ),
        ("-o", folder / "results.sqlite"): (
            f"error: --output {folder / 'results.sqlite'} is also an input (the run's store); writing it would "
            "destroy the input: choose another output name"
        ),
    }
    for args, line in cases.items():
        result = _cli("export", folder, *args)
        assert result.exit_code == 2 and result.output.splitlines() == [line]
    assert _snapshot(folder) == before and not trajectory.exists()
