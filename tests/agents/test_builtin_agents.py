"""The built-in agents on the published tasks: reference, the two baselines, replay."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.runner import EpisodeRow, RunSpec, run
from sopbench.runner.episode import select_tasks
from sopbench.runner.store import open_existing
from sopbench.scoring import SOUND, load_records, score_run
from sopbench.traces import detect_output_format


def _identity(task) -> tuple:
    return (task.goal, task.user_prompt, json.dumps(task.initial_database, sort_keys=True))


DEFECTS_FILE = Path(__file__).resolve().parents[2] / "docs" / "task-defects.md"


def _rows(folder: Path) -> list[EpisodeRow]:
    store = open_existing(folder)
    rows = list(store.rows())
    store.close()
    return rows


@pytest.fixture(scope="module")
def reference_rows(published_tasks_dir, tmp_path_factory) -> list[EpisodeRow]:
    output = tmp_path_factory.mktemp("reference")
    run(RunSpec(agent="reference", tasks=published_tasks_dir, output=output, concurrency=16, baselines=False))
    return _rows(output)


def test_reference_passes_every_task_but_the_documented_defects(reference_rows):
    assert len(reference_rows) == 903 and all(r.status == "completed" for r in reference_rows)
    failed = {r.task_id for r in reference_rows if not r.passed}
    documented = set(re.findall(r"^\| ([a-z_]+/[a-z_]+\[\d+\]) \|", DEFECTS_FILE.read_text(), re.MULTILINE))
    assert failed == documented
    assert 903 - len(failed) >= 880


def test_reference_uses_only_offered_tools_and_never_a_malformed_call(reference_rows):
    assert sum(r.malformed_calls for r in reference_rows) == 0
    assert all(not r.problems for r in reference_rows)
    assert all(r.end_reason in ("exit_conversation", "max_turns", "max_actions") for r in reference_rows)


def test_refuse_all_and_no_verify_behave_as_their_names_say(published_tasks_dir, tmp_path):
    for agent in ("refuse-all", "no-verify"):
        run(
            RunSpec(
                agent=agent,
                domains=("bank", "dmv"),
                tasks=published_tasks_dir,
                output=tmp_path / agent,
                baselines=False,
            )
        )
    refusals = _rows(tmp_path / "refuse-all")
    assert all(not r.tool_calls for r in refusals)
    assert all(bool(r.passed) == (not r.should_succeed) for r in refusals)
    hasty = _rows(tmp_path / "no-verify")
    assert all([c["name"] for c in r.tool_calls] == [r.goal] for r in hasty)
    # executing without verifying passes only where there is nothing to verify
    assert sum(r.passed for r in hasty) < 10


def test_replay_reproduces_a_recorded_file_and_its_verdicts(
    published_trajectories_dir, published_tasks_dir, tmp_path
):
    file = (
        published_trajectories_dir
        / "university"
        / "ast_gpt-4o-mini-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json.gz"
    )
    if not file.exists():
        pytest.skip(f"{file.name} not in the published data")
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--agent",
            "replay",
            "--trajectories",
            str(file),
            "--domain",
            "university",
            "--tasks",
            str(published_tasks_dir),
            "--output",
            str(tmp_path / "replay"),
            "--no-baselines",
            "--json",
        ],
    )
    records = load_records(file)
    fmt = detect_output_format(records)
    recorded = {}
    for record in records:
        if record.runs:
            recorded.setdefault(
                _identity(record.task), (record, score_run(record, 0, SOUND, output_format=fmt))
            )
    rows = [r for r in _rows(tmp_path / "replay") if r.status == "completed"]
    assert result.exit_code == 0 and len(rows) == 44
    tasks = {
        task_id: task
        for task, task_id in select_tasks(
            RunSpec(agent="reference", domains=("university",), tasks=published_tasks_dir, output=tmp_path)
        )
    }
    for row in rows:
        record, verdict = recorded[_identity(tasks[row.task_id])]
        steps = [
            (s.call.name, s.call.arguments_text)
            for s in record.runs[0].tool_steps()
            if s.output_text is not None
        ]
        assert [(c["name"], c["arguments_text"]) for c in row.tool_calls] == steps
        assert {k: v for k, v in row.verdict.items() if k != "unverified"} == verdict.verdict, row.task_id


def test_reference_never_reads_the_database_graph_expected_outcome_or_expanded_sop(published_tasks_dir):
    """Blinded to everything an agent must not read, the reference agent makes the same calls."""
    import asyncio
    import dataclasses

    from sopbench.agents import NoUser, Reference
    from sopbench.constraints import ActionGraph
    from sopbench.runner import Limits
    from sopbench.runner.episode import episode_setup, run_episode

    class Blind(Reference):
        async def start(self, setup):
            task = dataclasses.replace(
                setup.task,
                initial_database={},
                directed_action_graph=ActionGraph((), ()),
                constraints=None,
                action_should_succeed=not setup.task.action_should_succeed,
                user_instruction="",
            )
            await super().start(dataclasses.replace(setup, task=task))

    config = RunSpec(
        agent="reference", domains=("bank", "hotel", "library"), tasks=published_tasks_dir, output=Path("x")
    )
    for task, task_id in select_tasks(config)[::3]:
        setup = episode_setup(task, task_id, "full", 0, 0)
        seen = asyncio.run(run_episode(setup, Reference(), NoUser(), Limits()))
        blind = asyncio.run(run_episode(setup, Blind(), NoUser(), Limits()))
        assert [(c.name, c.arguments_text) for c in blind.calls] == [
            (c.name, c.arguments_text) for c in seen.calls
        ]
