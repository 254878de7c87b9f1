"""Generated tasks: deterministic, verified on the strict oracle, in the published format."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

import sopbench
from sopbench.cli import app
from sopbench.constraints import dump, parse
from sopbench.domains import (
    WRITE,
    Catalogue,
    Context,
    Domain,
    action_graph,
    get_domain,
    register_domain,
    run_reference_path,
)
from sopbench.generation import default_task_file, default_tasks_dir, generate, generate_domain
from sopbench.tasks import TASK_FIELDS, load_tasks, task_from_json

BANK_GOALS = ("get_account_balance", "transfer_funds", "set_safety_box")
PUBLISHED_KEYS = TASK_FIELDS  # every field a published task has


@cache
def bank_subset(seed: int):
    return generate_domain("bank", seed=seed, goals_wanted=BANK_GOALS)


def test_same_seed_gives_byte_identical_files_and_another_seed_other_tasks():
    first = bank_subset(5).to_json()
    assert generate_domain("bank", seed=5, goals_wanted=BANK_GOALS).to_json() == first
    assert bank_subset(6).to_json() != first


def test_every_task_passes_the_strict_oracle_with_the_expected_outcome():
    result = bank_subset(5)
    domain = get_domain("bank")
    tasks = [task_from_json(t, domain="bank", goal=goal) for goal, ts in result.tasks.items() for t in ts]
    assert len(tasks) == result.report.tasks > 0
    assert {t.action_should_succeed for t in tasks} == {True, False}
    for task in tasks:
        assert run_reference_path(domain, task).goal_succeeded == task.action_should_succeed


def test_tasks_carry_the_published_fields_graph_and_realistic_user_values():
    result = bank_subset(5)
    catalogue = get_domain("bank").catalogue
    for goal, tasks in result.tasks.items():
        for task in tasks:
            assert set(task) == PUBLISHED_KEYS and task["user_goal"] == goal
            graph = action_graph(catalogue, goal, parse(task["constraints_original"]))
            assert task["directed_action_graph"] == graph.to_json()
            assert dump(parse(task["constraints"])) == task["constraints"]
            for value in task["user_known"].values():
                assert not (isinstance(value, str) and ("placeholder" in value or value == ""))
                if isinstance(value, str):
                    assert value in task["user_prompt"]


def test_written_files_load_with_the_task_loader_and_round_trip(tmp_path: Path):
    done = generate(["bank"], tmp_path, seed=2, goals=BANK_GOALS)
    path = tmp_path / "bank_tasks.json"
    assert done[0].tasks_file == path and (tmp_path / "bank_coverage.json").is_file()
    loaded = load_tasks(path)
    raw = json.loads(path.read_text())
    assert len(loaded) == sum(len(v) for v in raw.values()) == done[0].result.report.tasks
    for task, (goal, entry) in zip(loaded, [(g, t) for g, ts in raw.items() for t in ts], strict=True):
        assert task.goal == goal and task.directed_action_graph.to_json() == entry["directed_action_graph"]
        assert task.constraints_json == entry["constraints"]


def test_per_assignment_makes_distinct_tasks():
    result = generate_domain("bank", seed=1, goals_wanted=["get_account_balance"], per_assignment=2)
    tasks = result.tasks["get_account_balance"]
    assert len(tasks) == 2 * result.report.realised
    keys = [
        json.dumps([t["initial_database"], t["user_known"], t["constraint_parameters"]], sort_keys=True)
        for t in tasks
    ]
    assert len(set(keys)) == len(keys)


# ---- a domain with a constraint that can never hold ------------------------------------------------

_VAULT = Catalogue.from_dict(
    {
        "domain": "vault_for_generation_tests",
        "default_constraint_parameters": {"max_units": 3},
        "tools": [
            {
                "name": "withdraw",
                "signature": ["owner", "units"],
                "params": [{"name": "owner", "type": "string"}, {"name": "units", "type": "integer"}],
                "required": ["owner", "units"],
            },
        ],
        "innate_dependencies": {"withdraw": None},
        "required_dependencies": {"withdraw": ["single", "within_limit", {"units": "units"}]},
        "customizable_dependencies": {"withdraw": [["single", "vault_sealed", {"owner": "owner"}]]},
        "constraint_processes": {"within_limit": None, "vault_sealed": None},
    }
)


def _vault() -> Domain:
    try:
        return get_domain("vault_for_generation_tests")
    except KeyError:
        pass
    vault = register_domain(Domain("vault_for_generation_tests", _VAULT))

    @vault.tool(WRITE, "Take units out of the owner's vault.")
    def withdraw(ctx: Context, owner: str, units: int):
        ctx.db["vaults"][owner] -= units
        return True

    @vault.check("At most {max_units} units.", "More than {max_units} units.")
    def within_limit(ctx: Context, units: int) -> bool:
        return units <= ctx.params["max_units"]

    @vault.check("The vault of {owner} is sealed.", "The vault of {owner} is not sealed.")
    def vault_sealed(ctx: Context, owner: str) -> bool:
        return False  # no state makes it hold

    return vault


def test_an_unrealisable_combination_is_reported_with_its_reason():
    _vault()
    world = {"vaults": {"harbour": 12, "quarry": 4}}
    result = generate_domain("vault_for_generation_tests", seed=0, world=world, budget=200)
    report = result.report
    assert report.realised + len(report.unrealisable) == report.assignments
    assert report.unrealisable, "vault_sealed can never hold"
    reasons = [u.reason for u in report.unrealisable]
    assert all("vault_sealed(owner=owner) must hold" in r for r in reasons)
    assert report.tasks == report.realised > 0  # the realisable ones are still made


# ---- the verb ------------------------------------------------------------------------------------


def test_the_verb_writes_the_files_and_one_json_document(tmp_path: Path):
    runner = CliRunner()
    out = tmp_path / "generated"
    result = runner.invoke(
        app,
        [
            "generate",
            "--domain",
            "bank",
            "--goals",
            "get_account_balance",
            "--seed",
            "3",
            "--output",
            str(out),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [d["domain"] for d in document["domains"]] == ["bank"]
    assert document["domains"][0]["realised"] == document["domains"][0]["assignments"]
    assert sorted(p.name for p in out.iterdir()) == ["bank_coverage.json", "bank_tasks.json"]
    assert load_tasks(out / "bank_tasks.json")


def test_the_verb_refuses_unknown_domains_and_goals(tmp_path: Path):
    runner = CliRunner()
    bad = runner.invoke(app, ["generate", "--domain", "casino", "--output", str(tmp_path)])
    assert bad.exit_code == 2 and "unknown domain" in bad.output
    bad_goal = runner.invoke(
        app, ["generate", "--domain", "bank", "--goals", "fly", "--output", str(tmp_path)]
    )
    assert bad_goal.exit_code == 2 and "unknown goal fly" in bad_goal.output
    assert not any(tmp_path.iterdir())


def test_comparison_with_the_published_file(published_tasks_dir: Path, tmp_path: Path):
    done = generate(["bank"], tmp_path, seed=0, goals=BANK_GOALS, compare_with=published_tasks_dir)
    comparison = done[0].comparison.as_dict()
    assert comparison["published_tasks"] == sum(r["published"] for r in comparison["rows"]) + len(
        comparison["published_tasks_unplaced"]
    )
    assert comparison["covered_by_published"] > 0
    assert comparison["covered_by_generated"] >= comparison["covered_by_published"]


def test_default_task_set_is_built_once_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # A private import allowed by name in tests/test_architecture.py: the default set is all seven
    # published domains, and building them takes minutes; no public function builds a smaller default
    # set (its folder, keyed by version and seed alone, must hold all seven).
    import sopbench.generation._files as files

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(files, "PUBLISHED_DOMAINS", ("library",))
    folder = default_tasks_dir(seed=4)
    assert folder.parent == tmp_path / "sopbench" / "tasks" and folder.name.endswith("-seed4")
    built = (folder / "library_tasks.json").stat().st_mtime_ns
    assert default_task_file("library", seed=4) == folder / "library_tasks.json"
    assert (folder / "library_tasks.json").stat().st_mtime_ns == built  # not rebuilt
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no half-built folders left


def test_an_interrupted_generation_leaves_the_folder_as_it_was(tmp_path):
    """Files are written only once every domain is made: never some domains of one seed and some of
    another in one folder."""
    from sopbench.generation import generate as generate_files

    goals = ["apply_credit_card", "cancel_test"]
    generate_files(["bank", "dmv"], tmp_path, seed=0, goals=goals)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def interrupt_in_dmv(domain: str, goal: str) -> None:
        if domain == "dmv":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        generate_files(["bank", "dmv"], tmp_path, seed=1, goals=goals, progress=interrupt_in_dmv)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_build_folders_of_killed_processes_are_removed_from_the_cache(tmp_path, monkeypatch):
    import os
    import subprocess
    import sys

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    base = tmp_path / "sopbench" / "tasks"
    ready = base / f"{sopbench.__version__}-seed9"
    ready.mkdir(parents=True)
    (ready / "COMPLETE").write_text("done\n")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    abandoned = base / f".{ready.name}.{dead.pid}.x1y2"
    building = base / f".{ready.name}.{os.getpid()}.z3w4"  # a build still under way (this process)
    for folder in (abandoned, building):
        folder.mkdir()
        (folder / "bank_tasks.json").write_text("{}")
    assert default_tasks_dir(seed=9) == ready
    assert not abandoned.exists() and building.exists()


def test_the_verb_exits_0_when_only_combinations_excluded_by_design_are_missing(tmp_path: Path):
    runner = CliRunner()
    common = ["generate", "--domain", "hotel", "--goals", "request_room_change", "--seed", "5"]
    plain = runner.invoke(app, [*common, "--output", str(tmp_path / "plain"), "--json"])
    assert plain.exit_code == 0, plain.output
    report = json.loads(plain.stdout)["domains"][0]
    assert report["unrealisable"] == [] and report["excluded"]
    assert report["realised"] + len(report["excluded"]) == report["assignments"]
    assert all("hidden prerequisite" in u["reason"] for u in report["excluded"])
    asked = runner.invoke(
        app, [*common, "--include-hidden-prerequisites", "--output", str(tmp_path / "asked"), "--json"]
    )
    assert asked.exit_code == 0, asked.output
    tasks = json.loads((tmp_path / "asked" / "hotel_tasks.json").read_text())["request_room_change"]
    marked = [t for t in tasks if t.get("refused_only_for_hidden_prerequisite")]
    assert len(marked) == len(report["excluded"]) and not any(t["action_should_succeed"] for t in marked)
    assert len(tasks) == report["tasks"] + len(marked)


def test_difficulty_counts_a_repeated_prerequisite_once_among_distinct_constraints():
    # The published expansion writes a shared prerequisite chain once, this one before every
    # constraint that needs it: the distinct count is the measure both sets share.
    from sopbench.generation import difficulty

    check = ["single", "internal_check_username_exist", {"username": "username"}]
    expanded = [
        "and",
        [
            ["chain", [check, ["single", "logged_in_user", {"username": "username"}]]],
            ["chain", [check, ["single", "internal_is_admin", {"username": "username"}]]],
        ],
    ]
    task = task_from_json(
        {
            "initial_database": {},
            "constraint_parameters": {},
            "user_known": {"username": "ada"},
            "constraints": expanded,
            "constraints_original": ["single", "logged_in_user", {"username": "username"}],
            "action_should_succeed": True,
            "user_instruction": "",
            "user_prompt": "",
            "directed_action_graph": {"nodes": [], "connections": []},
            "user_goal": "add_book",
        },
        domain="library",
    )
    profile = difficulty([task])
    assert profile["expanded_constraints"]["max"] == 4
    assert profile["distinct_expanded_constraints"]["max"] == 3
