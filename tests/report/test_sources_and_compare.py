"""Run folders and trajectory files read together; evaluate per configuration; compare two agents."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.results import read_prices
from sopbench.statistics import Configuration, Outcome, Usage, summarize_usage

UNIVERSITY_FILE = "ast_gpt-4.1-mini-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json.gz"


def invoke(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def runs(tmp_path_factory, published_tasks_dir: Path) -> dict[str, Path]:
    """reference (2 runs of 8 tasks), no-verify (2 runs of the first 5 of them), in run folders."""
    tasks = tmp_path_factory.mktemp("tasks")
    data = json.loads(gzip.decompress((published_tasks_dir / "university_tasks.json.gz").read_bytes()))
    kept, count = {}, 0
    for goal, items in data.items():
        if count >= 8:
            break
        kept[goal] = items[: 8 - count]
        count += len(kept[goal])
    (tasks / "university_tasks.json").write_text(json.dumps(kept))
    root = tmp_path_factory.mktemp("runs")
    folders = {}
    for agent, limit in (("reference", "8"), ("no-verify", "1")):
        folder = root / agent
        result = invoke(
            "run",
            "--agent",
            agent,
            "--tasks",
            tasks,
            "--runs",
            2,
            "--limit",
            limit,
            "--output",
            folder,
            "--no-baselines",
            "--json",
        )
        assert result.exit_code == 0, result.output
        folders[agent] = folder
    return folders


def test_evaluate_reads_run_folders_with_trajectory_files_one_block_per_configuration(
    runs, published_trajectories_dir, tmp_path
):
    file = published_trajectories_dir / "university" / UNIVERSITY_FILE
    out = tmp_path / "verdicts.jsonl"
    result = invoke("evaluate", runs["reference"], file, "-o", out, "--protocol", "sopbench", "--json")
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 16 + 132
    stored = lines[0]
    assert stored["agent"] == "reference" and stored["tool_list"] == "full" and stored["user"] == "none"
    assert stored["task_id"].startswith("university/") and stored["goal"] in stored["task_id"]
    published = lines[-1]
    assert (published["model"], published["tool_mode"], published["tool_list"]) == (
        "gpt-4.1-mini",
        "fc",
        "full",
    )
    document = json.loads(result.stdout)
    blocks = {block["label"]: block for block in document["configurations"]}
    assert set(blocks) == {"reference full", "gpt-4.1-mini fc full"}
    ours = blocks["gpt-4.1-mini fc full"]["domains"]["all"]
    assert [round(ours["pass_at_k_first"][k], 4) for k in "123"] == [0.3864, 0.5682, 0.6136]
    assert ours["pass_rate_ci95"][0] < ours["pass_rate"] < ours["pass_rate_ci95"][1]
    assert ours["should_succeed"]["ci95"] and ours["balanced_ci95"]
    reference = blocks["reference full"]
    assert reference["domains"]["all"]["tasks_with_k"] == {"1": 8, "2": 8}
    assert reference["usage"]["episodes"] == 16 and "cost_usd" not in reference["usage"]
    assert set(reference["breakdowns"]) == {"goal", "judgement", "constraint"}


def test_a_run_folder_holds_only_the_sound_and_sopbench_verdicts(runs, tmp_path):
    result = invoke("evaluate", runs["reference"], "-o", tmp_path / "out.jsonl", "--quirk", "python_eval")
    assert result.exit_code == 2
    assert "sound and sopbench verdicts only" in result.output and not (tmp_path / "out.jsonl").exists()


def test_compare_two_run_folders_pairs_runs_and_names_the_unpaired(runs):
    result = invoke("compare", runs["reference"], runs["no-verify"], "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    for key in (
        "paired_tasks",
        "a",
        "b",
        "difference",
        "difference_ci95",
        "mcnemar_p",
        "a_only_passed",
        "b_only_passed",
        "unpaired",
    ):
        assert key in document
    assert document["paired_tasks"] == 1 and document["paired_runs"] == 2
    assert document["a"]["pass_rate"] == 1.0 and document["b"]["pass_rate"] == 0.0
    # Two discordant runs of one task are one task where A did better: the sign test over tasks
    # has nothing to go on (p = 1), where McNemar over runs claimed p = 0.5.
    assert document["difference"] == 1.0 and document["mcnemar_p"] == 1.0
    assert document["unit"] == "task" and document["tasks"]["a_better"] == 1
    assert [f["b_first_failing_judgement"] for f in document["a_only_passed"]] != [None, None]
    assert document["unpaired"]["a"]["count"] == 14 and document["unpaired"]["b"]["count"] == 0
    university = document["domains"]["university"]
    assert university["a_only_passed_count"] == 2 and len(university["a_only_passed"]) == 2
    table = invoke("compare", runs["reference"], runs["no-verify"], "--by", "judgement")
    assert "runs of A have no partner" in table.stdout and "failed runs by judgement" in table.stdout
    csv = invoke("compare", runs["reference"], runs["no-verify"], "--format", "csv")
    assert csv.stdout.splitlines()[0].startswith("domain,paired_tasks,a_pass_rate")


def test_compare_asks_to_choose_when_a_side_holds_several_configurations(published_trajectories_dir):
    folder = published_trajectories_dir / "university"
    result = invoke("compare", folder, folder)
    assert result.exit_code == 2 and "--config-a" in result.output
    sides = [
        "--config-a",
        "model=gpt-4.1-mini,tool_mode=fc,tool_list=full,user=none",
        "--config-b",
        "model=gpt-4o-mini,tool_mode=fc,tool_list=full,user=none",
    ]
    # gpt-4.1-mini ran each task 3 times, gpt-4o-mini once: refused in one line, nothing printed.
    refused = invoke("compare", folder, folder, "--protocol", "sopbench", "--json", *sides)
    assert refused.exit_code == 2 and refused.stdout == ""
    assert "A ran each task 3 times and B 1 times" in refused.output
    assert len(refused.output.strip().splitlines()) == 1
    chosen = invoke("compare", folder, folder, "--protocol", "sopbench", "--json", "--runs", "first", *sides)
    assert chosen.exit_code == 0, chosen.output
    document = json.loads(chosen.stdout)
    assert document["paired_tasks"] == 44 and document["paired_runs"] == 44
    assert document["unpaired"]["a"]["count"] == 0 and document["tasks"]["runs_per_task"] == 1


def test_prices_give_a_cost_only_for_priced_models(tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text("[gpt-x]\ninput = 2.0\noutput = 8.0\n")
    table = read_prices(prices)
    assert table == {"gpt-x": (2.0, 8.0)}
    config = Configuration("openai", "gpt-x", "fc", "full", "none")
    outcomes = [
        Outcome(config, "bank", "g", f"bank/g[{i}]", 0, True, True, usage=Usage(1000, 500, 10, 5, latency))
        for i, latency in enumerate([1.0, 2.0, 3.0])
    ]
    usage = summarize_usage(outcomes, table)
    assert usage.cost_usd == pytest.approx((3000 * 2 + 1500 * 8) / 1e6)
    assert usage.cost_per_episode_usd == pytest.approx(usage.cost_usd / 3)
    assert (usage.latency_mean_s, usage.latency_p50_s) == (2.0, 2.0) and usage.user_prompt_tokens == 30
    unpriced = summarize_usage(
        [
            Outcome(
                Configuration("openai", "other", None, None, None),
                "bank",
                "g",
                "t",
                0,
                True,
                True,
                usage=Usage(),
            )
        ],
        table,
    )
    assert unpriced.cost_usd is None and "cost_usd" not in unpriced.as_dict()
    bad = tmp_path / "bad.json"
    bad.write_text('{"gpt-x": {"input": 1}}')
    with pytest.raises(ValueError, match="gpt-x"):
        read_prices(bad)


def test_a_folder_of_run_folders_gives_one_row_per_run_and_skips_their_exports(
    runs, published_tasks_dir, tmp_path
):
    exported = invoke(
        "export", runs["reference"], "--format", "sopbench", "--output", runs["reference"] / "trajectories"
    )
    assert exported.exit_code == 0, exported.output
    result = invoke(
        "leaderboard",
        runs["reference"].parent,
        "--format",
        "json",
        "--pass-hat-k",
        "--tasks-dir",
        published_tasks_dir,
        "--min-cases",
        0,
        "--by",
        "judgement",
    )
    assert result.exit_code == 0, result.output
    rows = {row["model"]: row for row in json.loads(result.stdout)}
    assert set(rows) == {"reference", "no-verify", "refuse-all"}
    assert rows["reference"]["cells"]["Overall"]["cases"] == 16 and rows["reference"]["tasks_with_k"] == {
        "1": 8,
        "2": 8,
    }
    assert rows["no-verify"]["breakdowns"]["judgement"]["failed_runs"] == 2
    assert rows["reference"]["pass_rate_ci95"][1] == 1.0


def test_compare_by_goal_pairs_per_domain_and_goal_and_counts_the_unpaired_beside(runs):
    document = json.loads(invoke("compare", runs["reference"], runs["no-verify"], "--json").stdout)
    goals = document["breakdowns"]["goal"]
    assert all({"domain", "goal", "paired_tasks", "unpaired_runs", "mcnemar_p"} <= set(g) for g in goals)
    assert sum(g["paired_runs"] for g in goals) == document["paired_runs"]
    assert sum(g["unpaired_runs"] for g in goals) == document["unpaired"]["a"]["count"]
    table = invoke("compare", runs["reference"], runs["no-verify"], "--by", "goal").stdout
    assert "by goal: paired runs only" in table and "| unpaired runs |" in table


def test_compare_refuses_other_task_sets_under_the_same_ids_unless_allowed(runs, tmp_path):
    # The same agent on a task set where one task under a shared id has other content.
    store = runs["reference"] / "results.sqlite"
    import sqlite3

    changed = tmp_path / "changed"
    changed.mkdir()
    (changed / "results.sqlite").write_bytes(store.read_bytes())
    with sqlite3.connect(changed / "results.sqlite") as db:
        (task_id,) = db.execute("SELECT task_id FROM tasks ORDER BY task_id LIMIT 1").fetchone()
        db.execute("UPDATE tasks SET sha256 = ? WHERE task_id = ?", ("0" * 64, task_id))
    refused = invoke("compare", runs["reference"], changed)
    assert refused.exit_code == 2 and refused.stdout == ""
    assert "other tasks on each side" in refused.output and task_id in refused.output
    assert len(refused.output.strip().splitlines()) == 1
    allowed = invoke("compare", runs["reference"], changed, "--allow-different-tasks", "--json")
    document = json.loads(allowed.stdout)
    assert document["different_tasks"] == {"count": 1, "tasks": [task_id]}
    assert document["paired_tasks"] == 7
