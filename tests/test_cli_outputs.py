"""The one output guard, walked from one table: every verb x every output option x every path no
output may replace (the verb's own inputs, a run's store and its -wal/-shm/-journal and lock, the
store through a symlink, a ``..`` spelling or a hard link, a device, a named pipe, a socket).

Each case must end with exit 2, one line naming the option and the path, and every file of the
scratch world byte-identical (nothing created either). The verbs are read from the command line
itself: a verb missing from ``VERBS`` fails the first test, and every ``--output``/``--problems``
option of every verb is walked, so a new verb or a new output cannot skip the guard.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import typer
import typer.core
from typer.testing import CliRunner

from sopbench.cli import app

TRAJECTORY = "traj/bank/ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"
TASK_FILE = "T/bank_tasks.json"
SWEEP = """tasks = "T"
domains = ["bank"]
[limits]
limit = 2
[[agents]]
name = "reference"
agent = "reference"
[matrix]
agents = ["reference"]
tool_lists = ["full"]
"""


@dataclass(frozen=True)
class Row:
    """One way of calling a verb: its arguments without the outputs under test, the files it reads,
    and the outputs it needs (given a harmless new path while another output is under test)."""

    verb: str
    args: tuple[str, ...]
    reads: tuple[str, ...]
    needs: dict[str, str] = field(default_factory=dict)


VERBS = (
    Row("diagnose", ("--tasks", "bank", "--tasks-dir", "T"), (TASK_FILE,)),
    Row("replay", ("traj",), (TRAJECTORY,), {"--output": "new.jsonl"}),
    Row("evaluate", ("R", "traj"), (TRAJECTORY,), {"--output": "new.jsonl"}),
    Row("evaluate", ("R", "traj", "--format", "parquet"), (TRAJECTORY,), {"--output": "new.parquet"}),
    Row("leaderboard", ("R", "traj", "--tasks-dir", "T"), (TRAJECTORY, TASK_FILE)),
    Row("compare", ("R", "traj"), (TRAJECTORY,)),
    Row("quirks", (), ()),
    Row(
        "generate",
        ("--domain", "bank", "--goals", "apply_credit_card", "--compare", "T"),
        (TASK_FILE,),
        {"--output": "gen"},
    ),
    Row(
        "run",
        ("--agent", "reference", "--domain", "bank", "--limit", "1", "--tasks", "T"),
        (TASK_FILE,),
        {"--output": "run2"},
    ),
    Row("sweep", ("sweep.toml",), ("sweep.toml", TASK_FILE), {"--output": "sw"}),
    Row("export", ("R",), ()),
    Row("export", ("R", "--format", "parquet"), (), {"--output": "new.parquet"}),
    Row("export", ("R", "--format", "sopbench", "--tasks", "T"), (TASK_FILE,), {"--output": "exported"}),
    Row("report", ("R", "traj", "--tasks-dir", "T"), (TRAJECTORY, TASK_FILE), {"--output": "new.html"}),
    Row("view", ("R", "traj", "--port", "0"), (TRAJECTORY,)),
    Row("serve-local", ("--model-path", "model.gguf", "--port", "0"), ("model.gguf",)),
    Row("data fetch", ("--domain", "bank", "--from", "http://127.0.0.1:9"), ()),  # writes the user cache
    Row("local build", ("--cache", "wheels"), ()),  # writes a wheel folder under --cache
    Row("mcp serve", ("--domain", "bank", "--all", "--tasks", "T"), (TASK_FILE,), {"--output": "served"}),
    Row("guard proxy", ("--domain", "bank"), ()),  # its --log: tests/guard/test_sop_file.py
    Row("cache info", (), ()),
    Row("cache clear", (), ()),  # removes the verdict cache's entries ($SOPBENCH_CACHE_DIR: the session's)
)

# A character device (a sandbox may have replaced /dev/null with a plain file).
DEVICE = next(d for d in (os.devnull, "/dev/zero", "/dev/full") if stat.S_ISCHR(os.stat(d).st_mode))
# Paths no output of any verb may replace; some are made in the case's world first.
PROTECTED = {
    "the store": "R/results.sqlite",
    "its write-ahead log": "R/results.sqlite-wal",
    "its shared memory": "R/results.sqlite-shm",
    "its journal": "R/results.sqlite-journal",
    "its lock": "R/results.sqlite.lock",
    "the store through a symlink": "store-link",
    "the store through ..": "T/../R/results.sqlite",
    "the store through a hard link": "store-hard-link",
    "a device": DEVICE,
    "a named pipe": "pipe",
    "a socket": "sock",
}


def commands() -> dict[str, list[tuple[str, str]]]:
    """Each registered verb's output options (name, metavar), read from the command line itself; a
    verb of a group (``data fetch``) is named with its group."""
    found: dict[str, list[tuple[str, str]]] = {}

    def walk(group: typer.core.TyperGroup, prefix: str) -> None:
        for name, command in group.commands.items():
            if isinstance(command, typer.core.TyperGroup):
                walk(command, f"{prefix}{name} ")
            else:
                found[f"{prefix}{name}"] = [
                    (p.opts[0], p.metavar) for p in command.params if {"--output", "--problems"} & set(p.opts)
                ]

    root = typer.main.get_command(app)
    assert isinstance(root, typer.core.TyperGroup)
    walk(root, "")
    return found


def cases() -> list:
    found = []
    for row in VERBS:
        for option, _ in commands()[row.verb]:
            targets = {**PROTECTED, **{f"its input {r}": r for r in row.reads}}
            if row.reads:
                targets["its input through a symlink"] = "input-link"
            for what, target in targets.items():
                label = f"{row.verb} {' '.join(row.args[-2:])} {option} <{what}>"
                found.append(pytest.param(row, option, target, id=label))
    return found


@pytest.fixture(scope="module")
def template(tmp_path_factory, make_record) -> Path:
    """A run folder R (a reference run with its store's companions), task files T, trajectory
    files, a sweep file and a model file: the inputs the verbs read."""
    world = tmp_path_factory.mktemp("world")
    runner = CliRunner()
    done = runner.invoke(
        app, ["generate", "--domain", "bank", "--goals", "apply_credit_card", "-o", str(world / "T")]
    )
    assert done.exit_code == 0, done.output
    (world / "T" / "bank_coverage.json").unlink()
    done = runner.invoke(
        app,
        [
            "run",
            "--agent",
            "reference",
            "--domain",
            "bank",
            "--limit",
            "2",
            "--tasks",
            str(world / "T"),
            "-o",
            str(world / "R"),
        ],
    )
    assert done.exit_code == 0, done.output
    for suffix in ("-wal", "-shm", "-journal"):
        (world / "R" / f"results.sqlite{suffix}").write_bytes(b"what a killed run left")
    (world / TRAJECTORY).parent.mkdir(parents=True)
    (world / TRAJECTORY).write_text(json.dumps([make_record(), make_record()]))
    (world / "sweep.toml").write_text(SWEEP)
    (world / "model.gguf").write_bytes(b"GGUF not really")
    return world


def snapshot(root: Path) -> dict[str, object]:
    """Every path under ``root``: a file's bytes, else what it is."""
    seen: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        mode = path.lstat().st_mode
        name = path.relative_to(root).as_posix()
        seen[name] = path.read_bytes() if stat.S_ISREG(mode) else stat.S_IFMT(mode)
    return seen


class Hung(Exception):
    pass


@pytest.fixture
def watchdog():
    """A verb that was not refused may start a server: fail after 60 s rather than hang."""

    def hung(signum, frame):
        raise Hung("the verb was not refused and kept running")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_the_table_names_every_verb():
    assert {row.verb for row in VERBS} == set(commands()), "add the new verb to VERBS"


def test_every_verb_writes_problems_through_the_guard():
    assert all(any(option == "--problems" for option, _ in outputs) for outputs in commands().values())


@pytest.mark.parametrize(("row", "option", "target"), cases())
def test_no_output_replaces_an_input_a_store_or_a_special_file(
    template, tmp_path, monkeypatch, watchdog, row, option, target
):
    world = tmp_path / "w"
    shutil.copytree(template, world, symlinks=True)
    monkeypatch.chdir(world)
    os.symlink("R/results.sqlite", "store-link")
    os.link("R/results.sqlite", "store-hard-link")
    os.mkfifo("pipe")
    listening = socket.socket(socket.AF_UNIX)
    listening.bind("sock")
    if row.reads:
        os.symlink(row.reads[0], "input-link")
    before = snapshot(world)
    outputs = {**row.needs, option: target}
    args = [*row.verb.split(), *row.args, *(part for pair in outputs.items() for part in pair)]
    try:
        result = CliRunner().invoke(app, args)
    finally:
        listening.close()
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2, (args, result.output)
    assert len(lines) == 1 and lines[0].startswith(f"error: {option} {target}"), lines
    assert snapshot(world) == before


# ---- the same, as a user types it, against a run that is writing or was killed ---------------------
SLOW_AGENT = """
import asyncio

from sopbench.agents import Reference, register_agent


@register_agent("slow-reference")
class SlowReference(Reference):
    name = "slow-reference"

    async def act(self, messages):
        await asyncio.sleep(0.03)
        return await super().act(messages)
"""
SOPBENCH = [sys.executable, "-m", "sopbench.cli"]


def sopbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*SOPBENCH, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def stored_rows(folder: Path) -> int:
    """The rows a reader sees, read-only (a read-write connection would checkpoint the log away)."""
    db = sqlite3.connect(f"{(folder / 'results.sqlite').as_uri()}?mode=ro", uri=True)
    try:
        return db.execute("SELECT count(*) FROM episodes").fetchone()[0]
    except sqlite3.OperationalError:  # the run is still making its tables
        return 0
    finally:
        db.close()


def test_report_refuses_the_lock_of_a_run_in_progress_and_the_log_of_a_killed_one(template, tmp_path):
    shutil.copytree(template / "T", tmp_path / "T")
    (tmp_path / "slow_agent.py").write_text(SLOW_AGENT)
    writer = subprocess.Popen(
        [*SOPBENCH, "run", "--agent", "slow-reference", "--import", "slow_agent", "--tasks", "T", "--runs", "50",
         "--concurrency", "1", "--no-baselines", "-o", "race"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    race = tmp_path / "race"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
            (race / "results.sqlite-wal").exists() and stored_rows(race) >= 3
        ):
            time.sleep(0.05)
        lock = race / "results.sqlite.lock"
        held = lock.read_bytes()
        refused = sopbench("report", "race", "-o", "race/results.sqlite.lock", cwd=tmp_path)
        assert refused.returncode == 2
        assert refused.stderr.splitlines() == [
            "error: --output race/results.sqlite.lock is also an input (the run's store); writing it would destroy "
            "the input: choose another output name"
        ]
        assert lock.read_bytes() == held
        second = sopbench(
            "run", "--agent", "reference", "--tasks", "T", "--no-baselines", "-o", "race", cwd=tmp_path
        )
        assert second.returncode == 2 and "is in use by process" in second.stderr  # the lock still excludes
    finally:
        writer.kill()  # as a crash would: the log keeps what was committed
        writer.communicate(timeout=60)
    rows = stored_rows(race)
    files = {p.name: p.read_bytes() for p in race.iterdir()}
    assert rows >= 3 and "results.sqlite-wal" in files
    for outputs in (
        ["-o", "race/results.sqlite-wal"],
        ["-o", "r.html", "--problems", "race/results.sqlite-wal"],
    ):
        refused = sopbench("report", "race", *outputs, cwd=tmp_path)
        assert refused.returncode == 2
        assert refused.stderr.splitlines()[0].startswith("error: ")
        assert len(refused.stderr.splitlines()) == 1 and "results.sqlite-wal" in refused.stderr
    assert {p.name: p.read_bytes() for p in race.iterdir()} == files
    assert stored_rows(race) == rows
