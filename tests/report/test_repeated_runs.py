"""The invariant a reader relies on, through the command line: a deterministic agent run three times
gives exactly the intervals and p-values of the same agent run once (reference vs no-verify)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from typer.testing import CliRunner

from sopbench.cli import app


def invoke(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_reference_against_no_verify_three_runs_give_the_figures_of_one(tmp_path, published_tasks_dir: Path):
    data = json.loads(gzip.decompress((published_tasks_dir / "dmv_tasks.json.gz").read_bytes()))
    kept = {goal: items[:2] for goal, items in list(data.items())[:10]}
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "dmv_tasks.json").write_text(json.dumps(kept))
    folders = {}
    for agent in ("reference", "no-verify"):
        for runs in (1, 3):
            folder = folders[agent, runs] = tmp_path / f"{agent}-{runs}"
            result = invoke(
                "run",
                "--agent",
                agent,
                "--tasks",
                tasks,
                "--runs",
                runs,
                "--output",
                folder,
                "--no-baselines",
                "--json",
            )
            assert result.exit_code == 0, result.output
    documents = {}
    for runs in (1, 3):
        result = invoke("compare", folders["reference", runs], folders["no-verify", runs], "--json")
        assert result.exit_code == 0, result.output
        documents[runs] = json.loads(result.stdout)
    once, thrice = documents[1], documents[3]
    assert thrice["paired_runs"] == 3 * once["paired_runs"] and thrice["paired_tasks"] == once["paired_tasks"]
    assert once["a_only_passed_count"] > 0  # the two agents do differ
    for key in ("difference", "difference_ci95", "mcnemar_p", "unit"):
        assert thrice[key] == once[key], key
    for side in ("a", "b"):
        assert (
            thrice[side]["ci95"] == once[side]["ci95"]
            and thrice[side]["pass_rate"] == once[side]["pass_rate"]
        )
    assert thrice["tasks"] == {**once["tasks"], "runs_per_task": 3}
    # And each side's summary: the same interval on 3 x the runs.
    for agent in ("reference", "no-verify"):
        summaries = []
        for runs in (1, 3):
            out = tmp_path / f"{agent}-{runs}.jsonl"
            result = invoke("evaluate", folders[agent, runs], "-o", out, "--json")
            assert result.exit_code == 0, result.output
            summaries.append(json.loads(result.stdout)["configurations"][0]["domains"]["all"])
        assert summaries[0]["pass_rate_ci95"] == summaries[1]["pass_rate_ci95"]
        assert summaries[0]["balanced_ci95"] == summaries[1]["balanced_ci95"]
        assert summaries[1]["runs"] == 3 * summaries[0]["runs"]
