"""Export: the fields of each line, fixed order, determinism, and trajectory files that evaluate reads."""

from __future__ import annotations

import io
import json
import re

from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.runner import RunSpec, export_jsonl, read_run, run
from sopbench.runner.store import open_existing
from sopbench.scoring import SOUND, score_paths

REQUIRED = {
    "domain",
    "task_id",
    "goal",
    "agent",
    "model",
    "tool_mode",
    "tool_list",
    "run",
    "seed",
    "status",
    "tool_calls",
    "final_database",
    "verdict",
    "explanations",
    "usage",
    "latency_s",
}
VERDICT = {
    "passed",
    "database",
    "permission",
    "procedure",
    "no_tool_call_error",
    "constraint_not_violated",
    "database_match",
    "action_successfully_called",
    "dirgraph_satisfied",
    "action_called_correctly",
    "success",
}


def _run(tmp_path, tasks, name="run", **extra):
    config = RunSpec(agent="reference", tasks=tasks, output=tmp_path / name, baselines=False, **extra)
    run(config)
    return tmp_path / name


def _export(folder, timings=True) -> bytes:
    buffer = io.BytesIO()
    export_jsonl(read_run(folder, records=False), buffer, timings=timings)
    return buffer.getvalue()


def test_each_line_has_the_documented_fields(small_tasks, tmp_path):
    lines = [json.loads(line) for line in _export(_run(tmp_path, small_tasks)).splitlines()]
    assert len(lines) == 12
    for line in lines:
        assert set(line) >= REQUIRED and list(line)[-1] == "latency_s"
        assert re.fullmatch(r"(bank|hotel)/[a-z_]+\[\d+\]", line["task_id"])
        assert line["task_id"].startswith(f"{line['domain']}/{line['goal']}[")
        assert set(line["verdict"]) == VERDICT and line["status"] == "completed"
        assert all(set(call) == {"name", "arguments", "output"} for call in line["tool_calls"])
        assert line["usage"] == {"prompt_tokens": 0, "completion_tokens": 0}
    assert [line["domain"] for line in lines] == ["bank"] * 6 + ["hotel"] * 6
    assert (
        lines[0]["task_id"] == "bank/apply_credit_card[0]"
        and lines[1]["task_id"] == "bank/apply_credit_card[1]"
    )


def test_the_reference_export_is_byte_identical_across_runs_and_concurrency(small_tasks, tmp_path):
    one = _export(_run(tmp_path, small_tasks, "one", concurrency=1, runs=2), timings=False)
    many = _export(_run(tmp_path, small_tasks, "many", concurrency=16, runs=2), timings=False)
    again = _export(_run(tmp_path, small_tasks, "again", concurrency=5, runs=2), timings=False)
    assert one == many == again and b"latency_s" not in one


def test_sopbench_export_is_scored_by_evaluate_as_the_runner_scored_it(small_tasks, tmp_path):
    folder = _run(tmp_path, small_tasks, runs=2)
    result = CliRunner().invoke(
        app, ["export", str(folder), "--format", "sopbench", "--output", str(tmp_path / "traj")]
    )
    assert result.exit_code == 0, result.output
    files = sorted((tmp_path / "traj").rglob("*.json"))
    assert [f.parent.name for f in files] == ["bank", "hotel"]
    assert files[0].name == "ast_reference-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"
    evaluated = {(s.domain, s.record, s.run): s.verdict for s in score_paths(tmp_path / "traj", SOUND)}
    store = open_existing(folder)
    stored = list(store.rows())
    store.close()
    assert len(evaluated) == len(stored) == 24
    by_position = {}
    for row in stored:
        record = [r for r in stored if r.domain == row.domain]
        record_index = sorted({r.task_index for r in record}).index(row.task_index)
        by_position[(row.domain, record_index, row.run)] = {
            k: v for k, v in row.verdict.items() if k != "unverified"
        }
    assert evaluated == by_position


def test_export_cli_writes_one_line_per_episode_and_refuses_a_missing_folder(small_tasks, tmp_path):
    folder = _run(tmp_path, small_tasks, limit=2)
    runner = CliRunner()
    result = runner.invoke(
        app, ["export", str(folder), "--format", "jsonl", "--no-timings", "-o", str(tmp_path / "e.jsonl")]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "e.jsonl").read_bytes() == _export(folder, timings=False)
    missing = runner.invoke(app, ["export", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "results.sqlite" in missing.output
    bad = runner.invoke(app, ["export", str(folder), "--format", "csv"])
    assert bad.exit_code == 2
