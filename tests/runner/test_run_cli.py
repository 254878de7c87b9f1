"""The run verb: options reach the agent only when set; mistakes are usage errors."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from sopbench.cli import app


def test_run_prints_the_summary_with_both_baselines(small_tasks, tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--agent",
            "reference",
            "--tasks",
            str(small_tasks),
            "--output",
            str(tmp_path / "r"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["completed"] == report["episodes"] == 12 and report["infra_errors"] == 0
    assert report["summary"]["all"]["passed"] == 12
    baselines = report["baselines"]
    assert set(baselines) == {"refuse-all", "no-verify"}
    refuse = baselines["refuse-all"]["all"]
    assert refuse["should_succeed"]["passed"] == 0 and refuse["should_refuse"]["rate"] == 1.0


def test_an_option_the_agent_does_not_take_is_a_usage_error(small_tasks, tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--agent",
            "reference",
            "--model",
            "gpt",
            "--tasks",
            str(small_tasks),
            "--output",
            str(tmp_path / "r"),
        ],
    )
    assert result.exit_code == 2 and "agent 'reference' does not take --model" in result.output
    result = CliRunner().invoke(
        app, ["run", "--agent", "nobody", "--tasks", str(small_tasks), "--output", str(tmp_path / "r")]
    )
    assert result.exit_code == 2 and "unknown agent 'nobody'" in result.output
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--agent",
            "reference",
            "--domain",
            "atlantis",
            "--tasks",
            str(small_tasks),
            "--output",
            str(tmp_path / "r"),
        ],
    )
    assert result.exit_code == 2 and "atlantis" in result.output


def test_remaining_infra_errors_exit_1(small_tasks, tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--agent",
            "test-crash",
            "--limit",
            "1",
            "--tasks",
            str(small_tasks),
            "--output",
            str(tmp_path / "r"),
            "--no-baselines",
        ],
    )
    assert result.exit_code == 1 and "infra_error" in result.output


def test_a_missing_required_option_or_a_bad_value_is_a_usage_error(small_tasks, tmp_path):
    runner = CliRunner()
    base = ["--tasks", str(small_tasks), "--output", str(tmp_path / "r")]
    result = runner.invoke(app, ["run", "--agent", "replay", *base])
    assert result.exit_code == 2 and "agent 'replay' needs --trajectories" in result.output
    result = runner.invoke(
        app, ["run", "--agent", "replay", "--trajectories", str(tmp_path / "none.json"), *base]
    )
    assert result.exit_code == 2 and "--trajectories" in result.output and "no such file" in result.output
    result = runner.invoke(app, ["run", "--agent", "reference", "--user", "scripted", *base])
    assert result.exit_code == 2 and "user 'scripted' needs --user-script" in result.output
    (tmp_path / "bad.json").write_text("{not json")
    result = runner.invoke(
        app,
        [
            "run",
            "--agent",
            "reference",
            "--user",
            "scripted",
            "--user-script",
            str(tmp_path / "bad.json"),
            *base,
        ],
    )
    assert result.exit_code == 2 and "bad.json" in result.output
    assert not (tmp_path / "r").exists()  # nothing was created for a run that could not start


def test_without_tasks_the_generated_set_is_built_once_and_played(tmp_path, monkeypatch):
    import sopbench.generation as generation

    cache = tmp_path / "cache"
    built: list[int] = []

    def build(seed: int = 0, progress=None):  # one small domain instead of all seven (20 s)
        if not (cache / "bank_tasks.json").exists():
            built.append(seed)
            cache.mkdir()
            generation.generate(["bank"], cache, seed=seed, goals=["get_account_balance"], progress=progress)
        return cache

    monkeypatch.setattr(generation, "default_tasks_dir", build)
    monkeypatch.setattr(generation, "default_tasks_ready", lambda seed=0: cache.exists())
    for folder in ("a", "b"):
        result = CliRunner().invoke(
            app,
            ["run", "--agent", "reference", "--domain", "bank", "--output", str(tmp_path / folder), "--json"],
        )
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert report["episodes"] > 0 and report["summary"]["all"]["passed"] == report["episodes"]
    assert built == [0]
