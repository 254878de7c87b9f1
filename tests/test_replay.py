"""sopbench replay: re-executing recorded tool calls and comparing with the recordings."""

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.replay import ReplaySummary, replay_paths

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "sopbench"
TASKS = SHARED / "tasks" / "bank_tasks.json.gz"


def _bank_task():
    tasks = json.loads(gzip.decompress(TASKS.read_bytes()))
    task = dict(tasks["transfer_funds"][0])
    task["user_goal"] = "transfer_funds"
    return task


def _run(task, calls, outputs, database):
    messages = [{"sender": "user", "content": task["user_prompt"]}]
    for i, ((name, args), output) in enumerate(zip(calls, outputs, strict=True)):
        messages.append(
            {
                "sender": "bank assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        messages.append({"tool_call_id": f"c{i}", "tool_name": name, "content": output})
    messages.append(
        {
            "sender": "bank assistant",
            "content": None,
            "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "exit_conversation", "arguments": "{}"}}
            ],
        }
    )
    return {"prompt": "", "interaction": messages, "database": database}


@pytest.fixture
def trajectory_file(tmp_path):
    if not TASKS.exists():
        pytest.skip("../shared/sopbench not found: published tasks needed")
    task = _bank_task()
    after = json.loads(json.dumps(task["initial_database"]))
    after["accounts"]["john_doe"]["balance"] -= 200.0
    after["accounts"]["alice_smith"]["balance"] += 200.0
    run = _run(
        task,
        [
            ("internal_check_username_exist", {"username": "john_doe"}),
            (
                "transfer_funds",
                {
                    "username": "john_doe",
                    "destination_username": "alice_smith",
                    "amount": 200.0,
                    "unit": "dollars",
                },
            ),
            ("no_such_tool", {}),
        ],
        ["True", "True", "Error: Tool no_such_tool not found."],
        after,
    )
    record = {"domain": "bank", "setup": {"tool_list": "full"}, "task": task, "interactions": [run]}
    folder = tmp_path / "bank"
    folder.mkdir()
    path = folder / "ast_test-model-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"
    path.write_text(json.dumps([record, {"domain": "bank"}]))  # the second record is broken
    return path


def test_replay_reproduces_a_constructed_run_and_reports_a_broken_record(trajectory_file):
    problems = []
    replays = list(replay_paths([trajectory_file.parent], on_error=lambda e: problems.append(str(e))))
    assert len(replays) == 1
    (replay,) = replays
    assert replay.tool_outputs == ["True", "True", "Error: Tool no_such_tool not found."]
    assert replay.outputs_matching == 3 and replay.database_matches and not replay.misaligned
    assert len(problems) == 1 and "record 1: field" in problems[0] and "missing" in problems[0]


def test_replay_cli_writes_one_line_per_run_with_the_published_fields(trajectory_file, tmp_path):
    out = tmp_path / "replay.jsonl"
    result = CliRunner().invoke(app, ["replay", str(trajectory_file), "--output", str(out), "--json"])
    assert result.exit_code == 1, result.output  # finished, but the broken record was skipped
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 1
    line = lines[0]
    assert {"source", "domain", "record", "run", "tool_outputs", "final_database", "errors"} <= set(line)
    assert line["source"] == trajectory_file.as_posix() and line["record"] == 0 and line["run"] == 0
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    assert summary["domains"][0]["tool_outputs_matching"] == 3


def test_replay_cli_names_a_missing_path(tmp_path):
    result = CliRunner().invoke(
        app, ["replay", str(tmp_path / "nope"), "--output", str(tmp_path / "o.jsonl")]
    )
    assert result.exit_code == 2
    assert "no such file or folder" in result.output


@pytest.mark.skipif(
    not (SHARED / "trajectories").exists(), reason="../shared/sopbench not found: trajectories needed"
)
def test_replay_of_all_published_trajectories_meets_the_fidelity_targets():
    summary = ReplaySummary()
    residual_databases = []
    for replay in replay_paths([SHARED / "trajectories"]):
        summary.add(replay)
        if not replay.misaligned and not replay.database_matches:
            residual_databases.append(replay)
    rows = {row["domain"]: row for row in summary.rows()}
    total = rows["all"]
    assert total["runs"] + total["misaligned_runs"] == 14567
    assert total["tool_outputs_matching"] / total["tool_outputs"] >= 0.998
    assert total["final_databases_matching"] / total["runs"] >= 0.997
    # Every residual database mismatch is a DMV licence number the original derived from hash().
    for replay in residual_databases:
        assert replay.domain == "dmv"
        recorded = replay.recorded_database["accounts"]
        ours = replay.final_database["accounts"]
        differing = [u for u in ours if ours[u] != recorded.get(u)]
        for user in differing:
            assert ours[user]["driver_license"]["dl_number"] != recorded[user]["driver_license"]["dl_number"]
            ours[user]["driver_license"]["dl_number"] = recorded[user]["driver_license"]["dl_number"]
            assert ours[user] == recorded[user]


def test_replay_cli_names_records_that_hold_no_trajectory(tmp_path, make_record):
    folder = tmp_path / "bank"
    folder.mkdir()
    empty = make_record()
    empty["interactions"] = []
    name = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"
    (folder / name).write_text(json.dumps([make_record(), empty]))
    out = tmp_path / "replay.jsonl"
    result = CliRunner().invoke(app, ["replay", str(tmp_path), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert f"1 records have no trajectory (not replayed): bank/{name}: 1 (records 1)" in result.output
    assert [json.loads(line)["record"] for line in out.read_text().splitlines()] == [0]
