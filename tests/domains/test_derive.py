"""Derived tables (default SOPs, expansion, action graphs) against the published ones."""

import random
from pathlib import Path

import pytest

from sopbench.constraints import ActionGraph, dump, holds, parse, singles
from sopbench.domains import PUBLISHED_DOMAINS as DOMAINS
from sopbench.domains import (
    Catalogue,
    action_graph,
    default_action_graphs,
    default_dependencies,
    expand,
    oracle_dependencies,
    simplify,
)

REPO = Path(__file__).resolve().parents[2]


def catalogue(domain):
    return Catalogue.from_file(REPO / "src" / "sopbench" / "domains" / domain / "sop.json")


def test_simplify_merges_nested_groups_drops_repeats_and_collapses():
    expr = parse(
        [
            "and",
            [
                ["single", "a", None],
                ["and", [["single", "b", None], ["single", "a", None]]],
                ["or", [["single", "c", None]]],
            ],
        ]
    )
    assert dump(simplify(expr)) == [
        "and",
        [["single", "a", None], ["single", "b", None], ["single", "c", None]],
    ]


def test_expansion_guards_a_constraint_with_its_prerequisites():
    cat = catalogue("bank")
    positive = parse(
        ["single", "sufficient_account_balance", {"username": "destination", "amount": "amount"}]
    )
    assert dump(expand(positive, cat)) == [
        "chain",
        [["single", "internal_check_username_exist", {"username": "destination"}], dump(positive)],
    ]
    negated = parse(["single", "not no_owed_balance", {"username": "username"}])
    assert dump(expand(negated, cat))[0] == "gate"


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("option", ["full", "required"])
def test_default_sops_equal_the_published_tables(published_tables, domain, option):
    mine = default_dependencies(catalogue(domain), option, expanded=False)
    published = published_tables[domain][f"derived_default_dependency_{option}_original"]
    assert list(mine) == list(published)  # the prompt order
    assert {k: dump(v) for k, v in mine.items()} == published


@pytest.mark.parametrize("domain", DOMAINS)
def test_expanded_sops_are_logically_equivalent_to_the_published_ones(published_tables, domain):
    # The published expansion also prunes guards that another sibling already establishes; ours keeps
    # them, which changes nothing about truth (checked here over random assignments).
    mine = default_dependencies(catalogue(domain), "full", expanded=True)
    rng = random.Random(7)
    for tool, encoded in published_tables[domain]["derived_default_dependency_full_expanded"].items():
        reference = parse(encoded)
        names = {s.name for s in singles(reference)} | {s.name for s in singles(mine[tool])}
        assert names == {s.name for s in singles(mine[tool])} | {s.name for s in singles(reference)}
        for _ in range(200):
            truth = {
                (s.name, s.params): rng.random() < 0.7 for s in [*singles(reference), *singles(mine[tool])]
            }
            value = lambda s, truth=truth: truth[(s.name, s.params)]  # noqa: E731
            assert holds(mine[tool], value) == holds(reference, value), tool


def test_oracle_table_replaces_only_the_goal():
    cat = catalogue("bank")
    goal_sop = parse(["single", "logged_in_user", {"username": "username"}])
    table = oracle_dependencies(cat, "transfer_funds", goal_sop)
    assert table["transfer_funds"] == goal_sop
    assert table["get_loan"] == default_dependencies(cat)["get_loan"]


@pytest.mark.parametrize("domain", DOMAINS)
def test_task_graphs_equal_the_published_graphs(domain, published_tasks, published_task_counts):
    cat = catalogue(domain)
    checked = 0
    for task in published_tasks(domain):
        mine = action_graph(cat, task.goal, task.constraints_original)
        published = task.directed_action_graph
        assert mine.canonical() == published.canonical(), (task.goal, task.constraints_original_json)
        assert mine.function_names() == published.function_names()
        checked += 1
    assert checked == published_task_counts[domain]


@pytest.mark.parametrize("domain", DOMAINS)
def test_default_action_graphs_equal_the_published_ones(published_tables, domain):
    mine = default_action_graphs(catalogue(domain))
    for tool, published in published_tables[domain]["derived_default_action_graphs_full"].items():
        assert mine[tool].canonical() == ActionGraph.from_json(published).canonical(), tool
