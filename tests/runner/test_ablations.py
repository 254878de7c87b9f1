"""The published ablations (env_mode, shuffled tools, constraint format, default SOP) and the guard:
what the agent is shown, what the environment answers, and what is recorded."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from typer.testing import CliRunner

from sopbench.agents import AgentTurn, ToolCallRequest, UserTurn
from sopbench.agents.openai import build_system_prompt
from sopbench.cli import app
from sopbench.runner import Limits, RunSpec, export_jsonl, read_run, run
from sopbench.runner.episode import episode_setup, run_episode
from sopbench.runner.export import trajectory_file_name
from sopbench.scoring import SOUND, score_paths


@pytest.fixture(scope="module")
def bank(published_tasks):
    return published_tasks("bank")


def _apply_card(tasks, *, succeed):
    return next(t for t in tasks if t.goal == "apply_credit_card" and t.action_should_succeed is succeed)


def _names(setup):
    return [tool["function"]["name"] for tool in setup.tools]


def test_program_mode_offers_no_internal_tool_and_lists_no_constraint(bank):
    task = _apply_card(bank, succeed=True)
    prompt = episode_setup(task, "bank/apply_credit_card[0]", "full", 0, 0)
    program = episode_setup(task, "bank/apply_credit_card[0]", "full", 0, 0, env_mode="program")
    assert any(n.startswith("internal_") for n in _names(prompt))
    assert not any(n.startswith("internal_") for n in _names(program))
    assert set(_names(program)) == {n for n in _names(prompt) if not n.startswith("internal_")}
    assert program.sops == {} and prompt.sops
    assert "constraints" in build_system_prompt(prompt) and "constraints" not in build_system_prompt(program)


class _OneCall:
    """Calls the goal straight away with the user's values, then exits."""

    model = tool_mode = None

    def __init__(self, task):
        self.task = task

    async def start(self, setup):
        pass

    async def act(self, messages):
        if len(messages) == 1:
            args = {k: v for k, v in self.task.user_known.items() if k != "identification"}
            return AgentTurn(tool_calls=(ToolCallRequest("c1", self.task.goal, json.dumps(args)),))
        return AgentTurn(tool_calls=(ToolCallRequest("x", "exit_conversation", "{}"),))

    async def close(self):
        pass


class _Silent:
    async def start(self, setup):
        pass

    async def opening(self):
        return UserTurn("hello")

    async def reply(self, messages):
        return UserTurn("ok")

    async def close(self):
        pass


def _play(task, env_mode):
    setup = episode_setup(task, "t", "full", 0, 0, env_mode=env_mode)
    return asyncio.run(run_episode(setup, _OneCall(task), _Silent(), Limits()))


def test_program_mode_answers_as_the_strict_system_and_guard_mode_refuses_with_the_reason(bank):
    task = next(
        t
        for t in bank
        if t.goal == "apply_credit_card"
        and t.action_should_succeed
        and "logged_in_user" in repr(t.constraints)
    )  # the goal needs a logged-in user
    prompt, program, guarded = (_play(task, mode) for mode in ("prompt", "program", "guard"))
    assert prompt.calls[0].output == "True"  # the lenient system executes it
    assert program.calls[0].output == "False"  # the strict system refuses: nobody logged in
    assert program.final_database == task.initial_database
    call = guarded.calls[0]
    assert (
        call.refused
        and "was not executed" in call.output
        and f"login_user(username={task.user_known['username']})" in call.output
    )
    assert guarded.final_database == task.initial_database


def test_shuffled_tools_are_seeded_and_the_same_tools(bank):
    task = bank[0]
    plain = _names(episode_setup(task, "t", "full", 7, 0))
    one = _names(episode_setup(task, "t", "full", 7, 0, shuffle_tools=True))
    again = _names(episode_setup(task, "t", "full", 7, 0, shuffle_tools=True))
    other = _names(episode_setup(task, "t", "full", 8, 0, shuffle_tools=True))
    assert one == again and sorted(one) == sorted(plain) and one != plain and other != one


def test_default_sop_required_lists_only_the_required_part_for_non_goal_actions(bank):
    task = _apply_card(bank, succeed=True)
    full = episode_setup(task, "t", "full", 0, 0)
    required = episode_setup(task, "t", "full", 0, 0, default_sop="required")
    assert required.sops[task.goal] == full.sops[task.goal] == task.constraints_original
    # get_account_balance: full = user exists AND logged in; required = user exists only
    assert "logged_in_user" in repr(full.sops["get_account_balance"])
    assert "logged_in_user" not in repr(required.sops["get_account_balance"])


def test_old_constraint_format_numbers_the_distinct_constraints(bank):
    task = _apply_card(bank, succeed=True)
    structured = build_system_prompt(episode_setup(task, "t", "full", 0, 0))
    old = build_system_prompt(episode_setup(task, "t", "full", 0, 0, constraint_format="old"))
    goal_entry = old.split(f"* {task.goal}:\n", 1)[1].split("\n* ", 1)[0]
    lines = goal_entry.strip().splitlines()
    assert lines[0].startswith("1. ") and all(line[0].isdigit() for line in lines)
    assert "ALL of" in structured and "ALL of" not in goal_entry


def test_settings_are_recorded_in_the_store_the_export_and_the_file_name(small_tasks, tmp_path):
    config = RunSpec(
        agent="no-verify",
        tasks=small_tasks,
        output=tmp_path / "g",
        domains=("bank",),
        env_mode="guard",
        shuffle_tools=True,
        constraint_format="old",
        default_sop="required",
        baselines=False,
    )
    report = run(config)
    assert report.completed == 6
    sink = io.BytesIO()
    export_jsonl(read_run(tmp_path / "g", records=False), sink)
    lines = [json.loads(line) for line in sink.getvalue().splitlines()]
    assert {(x["env_mode"], x["shuffle_tools"], x["constraint_format"], x["default_sop"]) for x in lines} == {
        ("guard", True, "old", "required")
    }
    refused = [c for x in lines for c in x["tool_calls"] if c.get("refused")]
    assert refused and all("not executed" in c["output"] for c in refused)
    # no unverified call was executed: every no-verify episode of a must-refuse task passes
    assert all(x["verdict"]["passed"] for x in lines if x["verdict"]["action_called_correctly"] is not False)
    # another setting on the same folder is refused; the defaults resume a default folder
    again = CliRunner().invoke(
        app,
        [
            "run",
            "--agent",
            "no-verify",
            "--tasks",
            str(small_tasks),
            "--domain",
            "bank",
            "--output",
            str(tmp_path / "g"),
            "--env-mode",
            "prompt",
        ],
    )
    assert again.exit_code == 2 and "env_mode" in again.output
    exported = CliRunner().invoke(
        app, ["export", str(tmp_path / "g"), "--format", "sopbench", "-o", str(tmp_path / "t")]
    )
    assert exported.exit_code == 0, exported.output
    name = trajectory_file_name(None, "no-verify", None, "full", config.ablations())
    assert name == "ast_no-verify-mode_fc-dep_required-fmt_old-tool_full-shuffle_True.json"
    path = tmp_path / "t" / "bank" / name
    record = json.loads(path.read_text())[0]
    assert (
        record["setup"]["env_mode"] == "guard" and record["setup"]["default_constraint_option"] == "required"
    )
    # the export leaves the refused calls out, so evaluate gives the stored verdicts
    stored = {x["task_id"]: x["verdict"]["passed"] for x in lines}
    scored = [s.verdict["passed"] for s in score_paths(path, SOUND)]
    assert sorted(scored) == sorted(stored.values())


def test_a_bad_setting_is_a_usage_error(small_tasks, tmp_path):
    for args in (
        ["--env-mode", "strict"],
        ["--constraint-format", "tree"],
        ["--default-sop", "none"],
        ["--tool-list", "oracle", "--default-sop", "required"],
        ["--no-action", "loose"],
    ):
        result = CliRunner().invoke(
            app,
            [
                "run",
                "--agent",
                "reference",
                "--tasks",
                str(small_tasks),
                "--output",
                str(tmp_path / "x"),
                *args,
            ],
        )
        assert result.exit_code == 2, (args, result.output)
        assert args[-2] in result.output and "\n" not in result.output.strip()  # one line naming it
    assert not (tmp_path / "x").exists()


def test_the_wide_no_action_reading_is_part_of_the_runs_identity(small_tasks, tmp_path):
    common = ["--agent", "reference", "--tasks", str(small_tasks), "--domain", "bank", "--limit", "1",
              "--no-baselines", "--output", str(tmp_path / "r")]  # fmt: skip
    assert CliRunner().invoke(app, ["run", *common, "--no-action", "wide"]).exit_code == 0
    again = CliRunner().invoke(app, ["run", *common])
    assert again.exit_code == 2 and 'no_action: "wide" stored' in again.output
    assert CliRunner().invoke(app, ["run", *common, "--no-action", "wide"]).exit_code == 0


def test_program_mode_runs_are_scored_against_the_strict_system_they_talked_to(small_tasks, tmp_path):
    config = RunSpec(
        agent="no-verify",
        tasks=small_tasks,
        output=tmp_path / "p",
        domains=("bank",),
        env_mode="program",
        baselines=False,
    )
    run(config)
    sink = io.BytesIO()
    export_jsonl(read_run(tmp_path / "p", records=False), sink)
    for line in map(json.loads, sink.getvalue().splitlines()):
        goal_calls = [c for c in line["tool_calls"] if c["name"] == line["goal"]]
        executed = any(c["output"] not in ("False",) for c in goal_calls)
        assert line["verdict"]["action_successfully_called"] == executed
        assert line["final_database"] is not None
