"""The ``run`` summary on a terminal: the agent's row names its model, every table fits 100
columns without a cell wrapping (``--wide`` shows the counts and intervals, wider), and each
caption sits under its own table."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from sopbench.generation import generate_domain
from sopbench.report import run_tables
from sopbench.runner import RunSpec, run

CHAT_SERVER = Path(__file__).resolve().parents[1] / "agents" / "chat_server.py"


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tasks")
    generated = generate_domain("bank", seed=0, goals_wanted=["transfer_funds"])
    (folder / "bank_tasks.json").write_bytes(generated.to_json())
    return folder


@pytest.fixture(scope="module")
def report(tasks: Path, tmp_path_factory: pytest.TempPathFactory):
    done = run(RunSpec(agent="no-verify", tasks=tasks, output=tmp_path_factory.mktemp("run") / "r", runs=3))
    # The longest published domain name, so that the widest first column is measured.
    domains = dict(done.summary.domains)
    domains = {"online_market" if name == "bank" else name: value for name, value in domains.items()}
    return dataclasses.replace(done, summary=dataclasses.replace(done.summary, domains=domains))


def printed(tables, width: int) -> list[str]:
    console = Console(width=width, force_terminal=True, color_system=None, record=True)
    for table in tables:
        table.print(console)
    return console.export_text().splitlines()


def test_the_tables_fit_100_columns_one_line_a_row_each_caption_under_its_table(report):
    lines = printed(run_tables(report, "gpt-test"), 100)
    assert max(map(len, lines)) <= 100
    summary = report.summary.domains["all"]
    all_rows = [line for line in lines if line.startswith("│ all ")]
    assert len(all_rows) == 2 and f"{100 * summary.pass_rate:.1f} [" in all_rows[0]  # rates, protocol counts
    # No cell wrapped: a table's body has one line per row (the domain and "all", twice; then three agents).
    bodies = [i for i, line in enumerate(lines) if line.startswith("┡")]
    ends = [i for i, line in enumerate(lines) if line.startswith("└")]
    assert [end - body - 1 for body, end in zip(bodies, ends, strict=False)][:3] == [2, 2, 3]
    # Each caption right under its table's last line, before the next title.
    assert lines[ends[0] + 1].startswith("pass % with its 95% interval")
    assert lines[ends[1] + 1].startswith("passed by default: passes with no well-formed action")
    assert lines[ends[2] + 1].startswith("succeed / refuse")
    assert [line.split("│")[1].strip() for line in lines[bodies[2] + 1 : ends[2]]] == [
        "gpt-test",
        "refuse-all",
        "no-verify",
    ]


def test_wide_shows_every_count_and_interval(report):
    narrow = run_tables(report, "gpt-test")[0].markdown()
    wide = run_tables(report, "gpt-test", wide=True)[0].markdown()
    succeed = report.summary.domains["all"].should_succeed
    assert f"({succeed[0]}/{succeed[1]})" in wide and f"({succeed[0]}/{succeed[1]})" not in narrow
    assert "| database | permission | procedure | passed by default |" in wide and "pass^3" in wide
    assert max(len(line) for line in wide.splitlines() if line.startswith("| all")) > 100


def test_the_run_verb_names_the_model_not_the_agent(tasks, tmp_path):
    bodies = tmp_path / "bodies.json"
    bodies.write_text(
        json.dumps(
            [
                {
                    "id": "c",
                    "object": "chat.completion",
                    "created": 1,
                    "model": "m",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "I cannot help."},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 2},
                }
            ]
        )
    )
    server = subprocess.Popen(
        [sys.executable, str(CHAT_SERVER), "--latency", "0", "--bodies", str(bodies)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "sopbench.cli",
                "run",
                "--agent",
                "openai",
                "--model",
                "my-model-7b",
                "--base-url",
                url,
                "--api-key-env",
                "NO_SUCH_KEY",
                "--tasks",
                str(tasks),
                "--limit",
                "2",
                "--max-turns",
                "4",
                "--output",
                str(tmp_path / "run"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={"NO_SUCH_KEY": "x", "PATH": "", **_python_env()},
        )
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    assert "| my-model-7b |" in done.stdout and "| openai |" not in done.stdout
    assert done.stdout.index("failed: runs failed by") < done.stdout.index(
        "next to the two trivial baselines"
    )


def _python_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "HOME", "LANG", "TMPDIR")}
