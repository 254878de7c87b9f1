"""``sopbench.results.compare``: two agents paired by task and run, the figures of ``sopbench compare
--json``; a side holding several configurations is refused."""

from __future__ import annotations

import json

import pytest

from sopbench.report import CompareReport
from sopbench.results import CompareError, ScoringOptions, Sources, compare


def test_two_run_folders_compare_as_the_verb_says(run_folders, cli):
    a, b = run_folders / "reference", run_folders / "no-verify"
    compared = compare(Sources.of([a]), Sources.of([b]), ScoringOptions())
    assert compared.result.overall.paired_runs == 6 and compared.a.agent == "reference"
    assert compared.result.overall.a.rate == 1.0 and compared.result.overall.b.rate < 1.0
    assert [rates.paired_tasks for rates, _unpaired in compared.by_goal().values()] != []
    done = cli("compare", str(a), str(b), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(json.dumps(CompareReport(compared).as_dict()))


def test_a_side_of_several_configurations_is_refused(run_folders):
    with pytest.raises(CompareError, match="A holds 2 configurations"):
        compare(Sources.of([run_folders]), Sources.of([run_folders / "reference"]), ScoringOptions())
    chosen = compare(
        Sources.of([run_folders]),
        Sources.of([run_folders]),
        ScoringOptions(runs="first"),
        config_a="agent=reference",
        config_b="agent=no-verify",
    )
    assert chosen.a.agent == "reference" and chosen.b.agent == "no-verify"
