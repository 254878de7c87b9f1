"""What a model agent was shown is kept once per run folder and exported with --format shown."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.runner import RunSpec, run
from sopbench.runner.store import open_existing

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from chat_server import benchmark_model, serve  # noqa: E402


def _run(tasks: Path, output: Path, url: str, mode: str) -> None:
    run(
        RunSpec(
            agent="openai",
            agent_options={"base_url": url, "model": "m", "tool_mode": mode},
            tasks=tasks / "bank_tasks.json",
            limit=3,
            runs=2,
            output=output,
            baselines=False,
        )
    )


def test_each_distinct_prompt_and_tool_list_is_stored_once_and_exported(small_tasks, tmp_path):
    with serve(benchmark_model) as server:
        _run(small_tasks, tmp_path / "fc", server.url, "fc")
        _run(small_tasks, tmp_path / "react", server.url, "react")
        sent = [request["messages"][0]["content"] for request in server.requests]
    store = open_existing(tmp_path / "fc")
    shown = store.shown()
    assert len(shown["episodes"]) == 6  # 3 tasks x 2 runs
    assert len(shown["tools"]) == 1  # the full bank list, stored once
    assert 1 <= len(shown["system_prompts"]) <= 3  # at most one per task, never one per run
    for episode in shown["episodes"]:
        assert episode["system_prompt"] in shown["system_prompts"]
        assert episode["tools"] in shown["tools"]
    # exactly what was sent as the system message
    assert set(shown["system_prompts"].values()) <= set(sent)
    tools = next(iter(shown["tools"].values()))
    assert tools[-1]["function"]["name"] == "exit_conversation"
    store.close()

    result = CliRunner().invoke(
        app, ["export", str(tmp_path / "react"), "--format", "shown", "-o", str(tmp_path / "s.json")]
    )
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "s.json").read_text())
    assert len(document["episodes"]) == 6
    prompt = next(iter(document["system_prompts"].values()))
    assert "## How to reply" in prompt and "Action Input:" in prompt  # the react protocol, as sent
    # the published layout keeps each run's system prompt in its ``prompt``, as the original did
    result = CliRunner().invoke(
        app, ["export", str(tmp_path / "react"), "--format", "sopbench", "-o", str(tmp_path / "files")]
    )
    assert result.exit_code == 0, result.output
    (path,) = (tmp_path / "files").rglob("*.json")
    runs = [run for record in json.loads(path.read_text()) for run in record["interactions"]]
    assert len(runs) == 6 and {run["prompt"] for run in runs} == set(document["system_prompts"].values())


def test_agents_that_call_no_model_leave_nothing_to_show(small_tasks, tmp_path):
    run(
        RunSpec(
            agent="reference",
            tasks=small_tasks / "bank_tasks.json",
            limit=2,
            output=tmp_path / "r",
            baselines=False,
        )
    )
    result = CliRunner().invoke(
        app, ["export", str(tmp_path / "r"), "--format", "shown", "-o", str(tmp_path / "s.json")]
    )
    assert result.exit_code == 1  # nothing to do
    assert json.loads((tmp_path / "s.json").read_text())["episodes"] == []
