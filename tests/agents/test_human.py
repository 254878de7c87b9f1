"""The human seats, driven through a pseudo-terminal: a person plays the agent, or the user, for a
whole episode of ``sopbench run``."""

from __future__ import annotations

import gzip
import json
import sqlite3
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect", reason="pexpect (a test dependency) is needed to drive a terminal")

SOPBENCH = [sys.executable, "-c", "from sopbench.cli import main; main()"]


@pytest.fixture
def one_task(tmp_path, published_tasks_dir: Path) -> Path:
    """A task folder with the first bank task: apply_credit_card for john_doe (must succeed)."""
    data = json.loads(gzip.decompress((published_tasks_dir / "bank_tasks.json.gz").read_bytes()))
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "bank_tasks.json").write_text(json.dumps({"apply_credit_card": data["apply_credit_card"][:1]}))
    return folder


def _spawn(*args: str):
    child = pexpect.spawn(
        SOPBENCH[0],
        [*SOPBENCH[1:], "run", *args, "--no-baselines"],
        encoding="utf-8",
        timeout=60,
        dimensions=(60, 220),
    )
    return child


def _stored(output: Path) -> list[tuple]:
    with sqlite3.connect(output / "results.sqlite") as db:
        return db.execute("SELECT agent, user, passed, messages FROM episodes").fetchall()


def test_a_person_plays_the_agent_with_help_and_validated_calls(one_task, tmp_path):
    child = _spawn("--agent", "human", "--tasks", str(one_task), "--output", str(tmp_path / "out"))
    child.expect("apply_credit_card\\(username, total_assets, monthly_income\\)")  # the offered tools
    child.expect("user:.*john_doe")  # the user's opening message
    child.expect("agent>")
    child.sendline("help apply_credit_card")
    child.expect("total_assets: number \\(required\\)")
    child.expect("agent>")
    child.sendline("nope {}")
    child.expect("no tool nope")
    child.sendline('apply_credit_card {"username": "john_doe"')
    child.expect("not JSON")
    child.sendline('apply_credit_card {"username": "john_doe"}')
    child.expect("needs total_assets, monthly_income")
    child.sendline('internal_check_username_exist {"username": "john_doe"}')
    child.expect("result:.*True")
    child.sendline(
        'apply_credit_card {"username": "john_doe", "total_assets": 15000.0, "monthly_income": 4500.0}'
    )
    child.expect("result:.*True")
    child.sendline("Your card application went through.")
    child.expect("user:.*exit_conversation")  # the fixed reply of the published loop
    child.sendline("exit")
    child.expect("1 of 1 episodes scored")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    [(agent, user, passed, messages)] = _stored(tmp_path / "out")
    assert (agent, user, passed) == ("human", "none", 1)
    assert "Your card application went through." in messages


def test_a_person_plays_the_user_and_sees_the_agents_messages(one_task, tmp_path):
    child = _spawn(
        "--agent",
        "refuse-all",
        "--user",
        "human",
        "--tasks",
        str(one_task),
        "--output",
        str(tmp_path / "out"),
    )
    child.expect("What you know:")
    child.expect("john_doe")
    child.expect("you>")
    child.sendline("")  # Enter: the task's own opening message
    child.expect("agent:.*cannot help")
    child.expect("you>")
    child.sendline("Why not? I have the money.")
    child.expect("conversation is over")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    [(agent, user, passed, messages)] = _stored(tmp_path / "out")
    assert (agent, user, passed) == ("refuse-all", "human", 0)
    assert "Why not? I have the money." in messages and "interested in applying" in messages


def test_end_of_input_ends_the_conversation(one_task, tmp_path):
    child = _spawn("--agent", "human", "--tasks", str(one_task), "--output", str(tmp_path / "out"))
    child.expect("agent>")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    [(_, _, passed, _)] = _stored(tmp_path / "out")
    assert passed == 0  # the goal was never executed
