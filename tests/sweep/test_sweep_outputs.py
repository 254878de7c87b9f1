"""A sweep never writes over what it reads or stores, refuses what it cannot run before making a
folder, and reports what it could do: the leaderboard, a real refuse-all row, one progress line per
5% off a terminal, and a refused key named beside the other configurations' infra_errors.

Each case is the command a user types (``sopbench sweep FILE -o DIR ...``) on a small generated task
file: exit code, one line, and every stored row and input byte-identical afterwards.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.cli import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from chat_server import ChatServer, error  # noqa: E402

SWEEP = """tasks = "{tasks}"
domains = ["bank"]
runs = {runs}
[[agents]]
name = "{name}"
agent = "reference"
[[agents]]
name = "refuse-all"
agent = "refuse-all"
[matrix]
agents = ["{name}", "refuse-all"]
tool_lists = ["full"]
"""


def sopbench(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def errors(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def tasks(tmp_path_factory) -> Path:
    """Nine generated bank tasks (one goal)."""
    folder = tmp_path_factory.mktemp("tasks") / "T"
    done = sopbench("generate", "--domain", "bank", "--goals", "apply_credit_card", "-o", folder)
    assert done.exit_code == 0, done.output
    (folder / "bank_coverage.json").unlink()
    return folder


@pytest.fixture
def sweep_file(tasks, tmp_path) -> Path:
    shutil.copytree(tasks, tmp_path / "T")
    file = tmp_path / "sweep.toml"
    file.write_text(SWEEP.format(tasks=tmp_path / "T", runs=1, name="reference"))
    return file


def rows(folder: Path) -> list[tuple]:
    with sqlite3.connect(f"{(folder / 'results.sqlite').as_uri()}?mode=ro", uri=True) as db:
        return sorted(db.execute("SELECT task_id, run, status, verdict FROM episodes"))


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_problems_never_empties_a_configurations_store_or_the_sweeps_task_file(sweep_file, tmp_path):
    out = tmp_path / "s"
    assert sopbench("sweep", sweep_file, "-o", out).exit_code == 0
    stored = rows(out / "reference-full")
    assert len(stored) == 9
    os.link(out / "reference-full" / "results.sqlite", out / "reference-full" / "renamed-store")
    before = files(tmp_path)
    for target, message in (
        (
            out / "reference-full" / "results.sqlite",
            ": is a run's store; writing it could destroy stored episodes",
        ),
        (out / "refuse-all-full" / "results.sqlite.lock", ": is a run's lock"),
        (out / "reference-full" / "renamed-store", ": is an SQLite database; writing it could destroy"),
        (tmp_path / "T" / "bank_tasks.json", " is also an input (the sweep file's tasks)"),
        (sweep_file, " is also an input (SWEEP.toml)"),
    ):
        result = sopbench("sweep", sweep_file, "-o", out, "--problems", target)
        assert result.exit_code == 2
        [line] = errors(result)
        assert line.startswith(f"error: --problems {target}{message}"), line
    assert files(tmp_path) == before
    assert rows(out / "reference-full") == stored


def test_an_empty_store_is_refused_not_adopted(sweep_file, tmp_path):
    folder = tmp_path / "s" / "reference-full"
    folder.mkdir(parents=True)
    (folder / "results.sqlite").write_bytes(b"")
    result = sopbench("sweep", sweep_file, "-o", tmp_path / "s")
    assert result.exit_code == 2
    assert errors(result) == [f"error: {folder / 'results.sqlite'}: empty file, not a sopbench store"]
    assert files(tmp_path / "s") == {"reference-full/results.sqlite": b""}  # no lock, no other folder


def test_a_run_refuses_an_empty_store_too(tasks, tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "results.sqlite").write_bytes(b"")
    result = sopbench("run", "--agent", "reference", "--tasks", tasks, "-o", tmp_path / "r")
    assert result.exit_code == 2
    assert errors(result) == [f"error: {tmp_path / 'r' / 'results.sqlite'}: empty file, not a sopbench store"]
    assert files(tmp_path / "r") == {"results.sqlite": b""}


def test_a_task_file_without_tasks_is_nothing_to_do_and_makes_no_folder(tmp_path):
    (tmp_path / "E").mkdir()
    (tmp_path / "E" / "bank_tasks.json").write_text("{}")
    for tasks in (tmp_path / "E", tmp_path / "E" / "bank_tasks.json"):
        result = sopbench("run", "--agent", "reference", "--tasks", tasks, "-o", tmp_path / "r")
        assert result.exit_code == 1
        assert errors(result) == [
            f"nothing to do: {tasks} holds no task to play (all); no run folder was made"
        ]
        assert not (tmp_path / "r").exists()
    file = tmp_path / "sweep.toml"
    file.write_text(SWEEP.format(tasks=tmp_path / "E", runs=1, name="reference"))
    result = sopbench("sweep", file, "-o", tmp_path / "s")
    assert result.exit_code == 1
    assert errors(result) == [
        f"nothing to do: {tmp_path / 'E'} holds no task to play (bank); no run folder was made"
    ]
    assert not (tmp_path / "s").exists()


def test_a_name_too_long_for_a_folder_is_refused_before_any_folder_is_made(tasks, tmp_path):
    file = tmp_path / "sweep.toml"
    file.write_text(SWEEP.format(tasks=tasks, runs=1, name="a" * 300))
    result = sopbench("sweep", file, "-o", tmp_path / "s")
    assert result.exit_code == 2
    assert errors(result) == [
        f"error: {file}: configuration name {'a' * 40}... is 305 bytes, and names a folder (at most 255): "
        "shorten the agent's name"
    ]
    assert not (tmp_path / "s").exists()


def test_off_a_terminal_progress_is_a_line_per_5_percent_and_the_refuse_all_row_has_numbers(tasks, tmp_path):
    file = tmp_path / "sweep.toml"
    file.write_text(SWEEP.format(tasks=tasks, runs=10, name="reference"))  # 180 episodes
    result = sopbench("sweep", file, "-o", tmp_path / "s")
    assert result.exit_code == 0, result.output
    lines = errors(result)
    assert len(lines) <= 20 + 2 * 2, lines  # a line per 5%, and each configuration's first and last
    assert lines[-1].endswith("total 180/180")
    [baseline] = [line for line in result.stdout.splitlines() if "| refuse-all (floor) | - | - | - |" in line]
    assert "(9)" in baseline and "55.56" in baseline  # over the 9 tasks played, first run


def test_a_refused_key_still_shows_the_leaderboard_and_names_the_others_infra_errors(
    tasks, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "loopback")
    with (
        ChatServer(lambda _request: error(401, "bad key")) as refusing,
        ChatServer(lambda _request: error(500, "overloaded")) as failing,
    ):
        file = tmp_path / "sweep.toml"
        file.write_text(
            f"""tasks = "{tasks}"
domains = ["bank"]
[limits]
limit = 2
[[agents]]
name = "refused"
agent = "openai"
model = "m"
endpoint = "{refusing.url}"
[[agents]]
name = "failing"
agent = "openai"
model = "m"
endpoint = "{failing.url}"
options = {{max_retries = 0}}
[[agents]]
name = "reference"
agent = "reference"
[matrix]
agents = ["refused", "failing"]
tool_modes = ["fc"]
[[include]]
agent = "reference"
"""
        )
        result = sopbench("sweep", file, "-o", tmp_path / "s")
    assert result.exit_code == 2
    [line] = [line for line in errors(result) if line.startswith("error:")]
    assert line.startswith("error: the sweep stopped: refused-fc-full: ")
    assert line.endswith(
        "(fix it, then run the same command); also failing-fc-full: 2 episodes in infra_error (the same "
        "command retries them)"
    )
    assert "| reference | - | full | none | 100.00" in result.stdout, (
        result.stdout
    )  # what was stored is shown
