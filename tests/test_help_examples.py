"""Every example in every verb's --help is run, as a user would type it, and must do what it says.

The examples name the published data as ``../shared/sopbench`` and run folders as ``runs/...``: they
run in a working folder beside a ``shared`` link to the published data, after ``runs/no-verify`` is
made (no example makes it; ``runs/reference`` is made by ``run``'s own example, run first). What an
example needs beyond the machine is stood in for and said here: the local endpoint of ``run``'s
second example is a scripted chat server on a free port (``tests/agents/chat_server.py``); ``view``
is started, asked for its page and stopped with Ctrl-C (exit 130); ``serve-local`` needs the
optional llama.cpp build and a model (its example is run by ``tests/local`` when that is there).
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from sopbench.cli import app

PUBLISHED_DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "sopbench"
EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"
CHAT_SERVER = Path(__file__).resolve().parent / "agents" / "chat_server.py"
SRC = Path(__file__).resolve().parents[1] / "src"


def help_examples() -> list[tuple[str, str]]:
    """(verb, example command) for every example in every verb's --help epilog, in verb order."""
    command = typer.main.get_command(app)
    out = []
    for name, verb in command.commands.items():  # type: ignore[attr-defined]
        epilog = verb.epilog or ""
        match = re.search(r"Examples?:\s*(.*)", epilog, re.S)
        if match is None:
            continue
        text = re.sub(r"\s*\(then open .*?\)\s*$", "", match.group(1).strip(), flags=re.S)
        for example in re.split(r"\s*;\s+(?=sopbench )", text):
            out.append((name, example.strip().rstrip(";").strip()))
    # ``run`` first: its first example makes runs/reference, which the others read.
    return sorted(out, key=lambda item: item[0] != "run")


def test_every_verb_that_writes_or_reads_has_an_example_and_each_is_listed():
    examples = help_examples()
    verbs = {verb for verb, _ in examples}
    assert {"run", "evaluate", "leaderboard", "compare", "report", "view", "export", "sweep"} <= verbs
    assert all(example.startswith("sopbench ") for _, example in examples)
    assert not any("PATH" in example.split() for _, example in examples), (
        "an example must be runnable as typed"
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    if not PUBLISHED_DATA_DIR.is_dir():
        pytest.skip("../shared/sopbench not found: published data needed")
    root = tmp_path_factory.mktemp("examples")
    (root / "shared").symlink_to(PUBLISHED_DATA_DIR.parent, target_is_directory=True)
    work = root / "work"
    work.mkdir()
    (work / "examples").symlink_to(EXAMPLES_DIR, target_is_directory=True)  # the sweep files
    return work


def _invoke(args: list[str], cwd: Path):
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(app, args)
    finally:
        os.chdir(previous)


def _run_view(args: list[str], cwd: Path) -> int:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    process = subprocess.Popen(
        [sys.executable, "-m", "sopbench.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 120
    url = None
    while time.monotonic() < deadline and url is None:
        line = process.stdout.readline()
        if not line and process.poll() is not None:
            break
        found = re.search(r"http://127\.0\.0\.1:\d+/\S*", line)
        url = found.group(0) if found else None
    try:
        assert url is not None, "view printed no URL"
        with urllib.request.urlopen(url, timeout=30) as reply:
            assert reply.status == 200
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=60)
    return code


@pytest.mark.parametrize(("verb", "example"), help_examples())
def test_the_example_runs(verb, example, workdir):
    if verb == "serve-local":
        pytest.skip("serve-local needs the llama.cpp extra and a model: tests/local runs it")
    args = shlex.split(example)[1:]
    redirect = None
    if ">" in args:
        redirect = workdir / args[args.index(">") + 1]
        args = args[: args.index(">")]
    if verb == "view":
        assert _run_view(args, workdir) == 130
        return
    server = None
    if "--base-url" in args:
        server = subprocess.Popen(
            [sys.executable, str(CHAT_SERVER), "--latency", "0"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert server.stdout is not None
        args[args.index("--base-url") + 1] = server.stdout.readline().strip()
    if verb == "compare" and "runs/no-verify" in args and not (workdir / "runs" / "no-verify").exists():
        made = _invoke(
            [
                "run",
                "--agent",
                "no-verify",
                "--domain",
                "all",
                "--tasks",
                "../shared/sopbench/tasks",
                "--output",
                "runs/no-verify",
            ],
            workdir,
        )
        assert made.exit_code == 0, made.output
    try:
        result = _invoke(args, workdir)
    finally:
        if server is not None:
            server.communicate("")
    assert result.exit_code == 0, f"{example}\n{result.output}"
    if redirect is not None:
        redirect.write_text(result.stdout)
        assert redirect.stat().st_size > 0
