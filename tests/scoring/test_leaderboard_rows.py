"""How the leaderboard keys, marks and ranks its rows (no published data needed)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sopbench.scoring import RunScore, leaderboard, leaderboard_domains, score_run
from sopbench.traces import record_from_json

NAME = "ast_{model}-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"


@pytest.fixture(scope="module")
def template(make_record) -> RunScore:
    return score_run(record_from_json(make_record()), 0)


def scores(template: RunScore, source: str, domain: str, passed: int, cases: int) -> list[RunScore]:
    verdict = {key: True for key in template.verdict}
    return [
        replace(template, source=source, domain=domain, record=i, verdict={**verdict, "passed": i < passed})
        for i in range(cases)
    ]


def test_the_same_file_name_in_two_folders_gives_two_rows(template):
    name = NAME.format(model="m")
    rows = leaderboard(
        scores(template, f"expA/bank/{name}", "bank", 1, 2)
        + scores(template, f"expA/dmv/{name}", "dmv", 2, 2)
        + scores(template, f"expB/bank/{name}", "bank", 0, 2)
    )
    by_folder = {row.folder: row for row in rows}
    assert set(by_folder) == {"expA", "expB"}
    assert set(by_folder["expA"].cells) == {"bank", "dmv"}  # domains of one folder pool into one row
    assert by_folder["expA"].files == {"bank": [f"expA/bank/{name}"], "dmv": [f"expA/dmv/{name}"]}
    assert by_folder["expB"].overall.cases == 2


def test_a_tiny_perfect_row_no_longer_ranks_first(template):
    full = NAME.format(model="full")
    rows = leaderboard(
        scores(template, f"bank/{full}", "bank", 30, 40)
        + scores(template, f"dmv/{full}", "dmv", 30, 40)
        + scores(template, f"bank/{NAME.format(model='partial')}", "bank", 40, 40)
        + scores(template, f"dmv/{NAME.format(model='tiny')}", "dmv", 1, 1),
        min_cases=20,
    )
    assert [row.model for row in rows] == ["full", "partial", "tiny"]
    assert [row.coverage_differs for row in rows] == [False, True, True]
    assert [row.below_min_cases for row in rows] == [False, False, True]
    assert rows[0].as_dict()["domains_covered"] == ["bank", "dmv"]


def test_the_baseline_neither_widens_the_coverage_nor_goes_apart(template):
    model = NAME.format(model="m")
    baseline = scores(template, "refuse-all", "bank", 1, 3) + scores(template, "refuse-all", "hotel", 1, 2)
    rows = leaderboard(scores(template, f"bank/{model}", "bank", 20, 25), baseline=baseline, min_cases=20)
    model_row, refuse_all = rows
    assert (model_row.model, model_row.coverage_differs) == ("m", False)
    assert (refuse_all.model, refuse_all.coverage_differs, refuse_all.below_min_cases) == (
        "refuse-all",
        True,
        False,
    )


def test_a_file_named_otherwise_is_its_own_row_and_columns_put_published_domains_first(template):
    rows = leaderboard(
        scores(template, "zoo/my-run.json", "zoo", 1, 2)
        + scores(template, f"hotel/{NAME.format(model='m')}", "hotel", 1, 1)
        + scores(template, f"bank/{NAME.format(model='m')}", "bank", 1, 1)
    )
    odd = next(row for row in rows if row.model == "my-run.json")
    assert (odd.mode, odd.tool_list, odd.user, odd.folder) == ("?", "?", None, "")
    # Published domains in their published order (bank before hotel), then custom ones by name.
    assert leaderboard_domains(rows) == ["bank", "hotel", "zoo"]
