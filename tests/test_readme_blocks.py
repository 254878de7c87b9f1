"""The README's shell blocks run, in order, as a reader would paste them, in a scratch folder beside
the published data (``../shared/sopbench`` there is a link to it).

A block is run as written unless the HTML comment above it says otherwise:

- ``<!-- readme-test: setup -->``: a set-up command; its ``sopbench`` part runs (the install is
  this test's own environment);
- ``<!-- readme-test: model -->``: the block needs a model: it runs against the stub chat server
  (``tests/agents/chat_server.py``), every ``--base-url`` pointing at it, a model's run limited to
  the first 2 tasks of each domain unless it names its own ``--limit``, and the lines that start a
  model server (vllm, ollama) left out;
- ``<!-- readme-test: server -->``: a verb that serves until Ctrl-C: it must print its URL, then
  Ctrl-C ends it with exit code 130;
- ``<!-- readme-test: skip: REASON -->``: not run, for the reason given.

``pip install`` lines are left out everywhere: the extras they name are this test's dependencies.
Each block must exit 0, so a later block that reused an earlier block's output folder would fail.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "agents"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from chat_server import benchmark_model, serve  # noqa: E402

from conftest import PUBLISHED_DATA_DIR, require_published_data  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARKER = re.compile(r"<!-- readme-test: (setup|model|server|skip)(?::\s*(.*?))? -->\s*$")
KINDS = ("run", "setup", "model", "server", "skip")
BLOCK_TIMEOUT_S = 900


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence in the README
    kind: str
    reason: str
    script: str


def readme_blocks(text: str) -> list[Block]:
    """Every ```bash block of ``text``, with the kind its marker gives (``run`` without one)."""
    lines = text.splitlines()
    blocks, index = [], 0
    while index < len(lines):
        fence = lines[index]
        if not fence.startswith("```"):
            index += 1
            continue
        end = next((j for j in range(index + 1, len(lines)) if lines[j].startswith("```")), None)
        assert end is not None, f"README.md:{index + 1}: a code block is never closed"
        if fence.strip() == "```bash":
            marker = MARKER.match(lines[index - 1]) if index else None
            kind, reason = (marker[1], marker[2] or "") if marker else ("run", "")
            blocks.append(Block(index + 1, kind, reason, "\n".join(lines[index + 1 : end])))
        index = end + 1
    return blocks


def commands(script: str) -> list[str]:
    """The block's commands, continuation lines joined, ``pip install`` lines left out."""
    joined = script.replace("\\\n", " ")
    return [line for line in joined.splitlines() if not line.lstrip().startswith("pip install")]


def for_the_stub(command: str, url: str) -> str | None:
    """A model block's command against the stub (None: a line that starts a model server)."""
    if re.match(r"\s*(vllm|ollama|llama-server)\b", command):
        return None
    if "--base-url" not in command:
        return command
    command = re.sub(r"--base-url \S+", f"--base-url {url}", command)
    if command.lstrip().startswith("sopbench run") and "--limit" not in command:
        code, hash_, comment = command.partition(" #")
        command = f"{code.rstrip()} --limit 2" + (f" #{comment}" if hash_ else "")
    return command


def for_setup(command: str) -> str:
    """A set-up command's ``sopbench`` part, with the ``sopbench`` of this environment."""
    part = command.split("&&")[-1].strip()
    assert "sopbench " in part, command
    return part.replace(".venv/bin/sopbench", "sopbench")


def test_the_blocks_are_closed_and_marked():
    blocks = readme_blocks(README.read_text())
    assert len(blocks) >= 15
    assert all(b.kind in KINDS and (b.kind != "skip" or b.reason) for b in blocks)
    assert [b.kind for b in blocks[:2]] == ["setup", "skip"]  # the two set-up commands, and only two
    assert sum(b.kind == "setup" for b in blocks) == 1
    assert sum(b.kind == "run" for b in blocks) >= 5


def test_a_block_left_open_is_caught():
    with pytest.raises(AssertionError, match="never closed"):
        readme_blocks("text\n```bash\nsopbench run\n")


def test_model_commands_point_at_the_stub():
    command = (
        "sopbench run --agent openai --base-url http://gpu1:8000/v1 --base-url http://gpu2:8000/v1 --model m"
    )
    assert (
        for_the_stub(command, "U")
        == "sopbench run --agent openai --base-url U --base-url U --model m --limit 2"
    )
    assert for_the_stub("ollama pull qwen2.5:7b", "U") is None
    assert "--limit 20" in for_the_stub("sopbench run --base-url x --limit 20 --output o  # note", "U")
    assert for_the_stub("sopbench run --base-url x --output o  # note", "U").endswith("--limit 2 # note")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A folder laid out as a clone: ``examples/``, and ``../shared/sopbench`` beside it."""
    require_published_data()
    base = tmp_path_factory.mktemp("readme")
    (base / "shared").mkdir()
    (base / "shared" / "sopbench").symlink_to(PUBLISHED_DATA_DIR, target_is_directory=True)
    work = base / "clone"
    shutil.copytree(ROOT / "examples", work / "examples")
    bin_dir = base / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "sopbench"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m sopbench.cli "$@"\n')
    wrapper.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    env["OPENROUTER_API_KEY"] = env["OPENAI_API_KEY"] = "not-a-key"  # the stub asks for none
    return work, env


def _run(script: str, work: Path, env: dict[str, str], where: str) -> str:
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, (
        f"{where} exited {result.returncode}:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout


def _serve_then_interrupt(command: str, work: Path, env: dict[str, str], where: str) -> None:
    process = subprocess.Popen(
        ["bash", "-c", f"exec {command}"],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen = []
    deadline = time.monotonic() + 300
    try:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            if "http://127.0.0.1:" in line or time.monotonic() > deadline:
                break
        assert any("http://127.0.0.1:" in line for line in seen), f"{where}: no URL printed:\n{''.join(seen)}"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 130, f"{where}: Ctrl-C did not end it with 130"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_every_block_runs_in_order(scratch):
    work, env = scratch
    ran = []
    for block in readme_blocks(README.read_text()):
        where = f"README.md:{block.line} ({block.kind})"
        if block.kind == "skip":
            continue
        if block.kind == "setup":
            out = _run("\n".join(for_setup(c) for c in commands(block.script)), work, env, where)
            # `run` ends with where its results are and the three commands that show them
            tail = out.strip().splitlines()[-5:]
            assert tail[0] == "results: runs/reference/results.sqlite", out[-2000:]
            assert [line.split()[1] for line in tail[2:]] == ["view", "report", "export"]
        elif block.kind == "model":
            with serve(benchmark_model) as server:
                lines = [for_the_stub(c, server.url) for c in commands(block.script)]
                _run("\n".join(c for c in lines if c is not None), work, env, where)
        elif block.kind == "server":
            for command in commands(block.script):
                _serve_then_interrupt(command, work, env, where)
        else:
            _run("\n".join(commands(block.script)), work, env, where)
        ran.append(block.kind)
    assert ran.count("run") >= 5 and ran.count("model") >= 4 and "server" in ran
