"""The unit of every interval and test is the task: K runs of a task are not K samples.

The invariant a user relies on: a deterministic agent run K times looks exactly as certain as the
same agent run once. With one run per task the figures are today's Wilson and McNemar figures.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sopbench.statistics import (
    Configuration,
    Outcome,
    RateInterval,
    compare_outcomes,
    effective_tasks,
    mcnemar_exact,
    paired_bootstrap_difference,
    sign_test_over_tasks,
    summarize_outcomes,
    task_interval,
    task_order,
    wilson_interval,
)

REFERENCE = Configuration("reference", None, None, "full", "none")
NO_VERIFY = Configuration("no-verify", None, None, "full", "none")


def _repeat(config: Configuration, verdicts: list[tuple[bool, bool]], runs: int) -> list[Outcome]:
    """A deterministic agent: each task's verdict, repeated ``runs`` times."""
    return [
        Outcome(config, "bank", "goal", f"bank/goal[{i}]", run, passed, should, task_digest=f"d{i}")
        for i, (passed, should) in enumerate(verdicts)
        for run in range(runs)
    ]


# 44 tasks: the reference agent passes 40, no-verify 25 (it fails most tasks that must be refused).
TASKS = [(i % 11 != 0, i % 3 == 0) for i in range(44)]
NO_VERIFY_TASKS = [(should or i % 7 == 0, should) for i, (_, should) in enumerate(TASKS)]


def test_a_deterministic_agent_run_three_times_gets_the_figures_of_one_run():
    once = compare_outcomes(_repeat(REFERENCE, TASKS, 1), _repeat(NO_VERIFY, NO_VERIFY_TASKS, 1))
    thrice = compare_outcomes(_repeat(REFERENCE, TASKS, 3), _repeat(NO_VERIFY, NO_VERIFY_TASKS, 3))
    assert thrice.overall.paired_runs == 3 * once.overall.paired_runs
    for a, b in ((once.overall, thrice.overall), (once.domains["bank"], thrice.domains["bank"])):
        assert a.a.ci95 == b.a.ci95 and a.b.ci95 == b.b.ci95
        assert a.difference == b.difference
        assert a.difference_ci95 == b.difference_ci95
        assert a.mcnemar_p == b.mcnemar_p
    # And a summary of each side alone: the rate's interval and the split rates' and balanced ones.
    for verdicts in (TASKS, NO_VERIFY_TASKS):
        one = summarize_outcomes(_repeat(REFERENCE, verdicts, 1))
        three = summarize_outcomes(_repeat(REFERENCE, verdicts, 3))
        assert one.runs.ci95 == three.runs.ci95
        assert one.should_succeed.ci95 == three.should_succeed.ci95
        assert one.balanced_ci95 == three.balanced_ci95


def test_one_run_per_task_keeps_wilson_and_mcnemar_exactly():
    once = compare_outcomes(_repeat(REFERENCE, TASKS, 1), _repeat(NO_VERIFY, NO_VERIFY_TASKS, 1))
    overall = once.overall
    assert overall.a.ci95 == wilson_interval(overall.a.passed, overall.a.total)
    assert overall.mcnemar_p == mcnemar_exact(overall.a_only, overall.b_only)
    data = overall.as_dict()
    assert data["unit"] == "task"
    assert data["tasks"]["paired"] == 44 == data["paired_tasks"]
    assert data["tasks"]["a_better"] == overall.a_only and data["tasks"]["b_better"] == overall.b_only
    assert data["a"]["ci95_method"] == "wilson"


def test_repeated_runs_that_disagree_count_tasks_not_runs():
    # 40 tasks x 3 runs; A passes 2 of 3 runs of every task, B 1 of 3: 120 paired runs, 40 tasks.
    a = [Outcome(REFERENCE, "bank", "g", f"t{i}", r, r < 2, True) for i in range(40) for r in range(3)]
    b = [Outcome(NO_VERIFY, "bank", "g", f"t{i}", r, r < 1, True) for i in range(40) for r in range(3)]
    result = compare_outcomes(a, b).overall
    assert result.a_only == 40 and result.b_only == 0  # 40 discordant runs ...
    assert result.sign_test.a_better == 40  # ... of 40 tasks: the test counts the tasks
    assert result.mcnemar_p == mcnemar_exact(40, 0)
    assert result.as_dict()["tasks"]["runs_per_task"] == 3
    # Clustered by task, the interval is no narrower than the one over 120 "independent" runs.
    naive = wilson_interval(80, 120)
    assert result.a.ci95 is not None and naive is not None
    assert result.a.method == "wilson, clustered by task"


def test_an_agent_that_is_inconsistent_across_runs_gets_a_wider_interval_than_the_runs_suggest():
    rng = random.Random(3)
    # Tasks either always pass or always fail, but K=3: the 132 runs are worth 44 tasks.
    per_task = [(3, 3) if rng.random() < 0.47 else (0, 3) for _ in range(44)]
    clustered = task_interval(per_task)
    passed = sum(p for p, _ in per_task)
    naive = wilson_interval(passed, 132)
    assert clustered is not None and naive is not None
    assert clustered[1] - clustered[0] > naive[1] - naive[0]
    assert clustered == wilson_interval(passed // 3, 44)
    assert effective_tasks(per_task) == 44


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 5)), min_size=1, max_size=30))
def test_a_clustered_interval_holds_its_rate_and_stays_in_0_1(counts):
    per_task = [(min(p, n), n) for p, n in counts]
    rate = RateInterval.of_tasks(per_task)
    low, high = rate.ci95
    assert 0.0 <= low <= rate.rate <= high <= 1.0
    assert 0 < effective_tasks(per_task) <= rate.total


def test_the_sign_test_is_mcnemar_with_one_run_per_task():
    pairs = {i: [(i % 2 == 0, i % 3 == 0)] for i in range(30)}
    test = sign_test_over_tasks(pairs)
    a_only = sum(1 for ((a, b),) in pairs.values() if a and not b)
    b_only = sum(1 for ((a, b),) in pairs.values() if b and not a)
    assert (test.a_better, test.b_better) == (a_only, b_only)
    assert test.p == pytest.approx(mcnemar_exact(a_only, b_only))


def test_tasks_with_the_same_id_and_other_content_are_never_paired():
    a = [
        Outcome(REFERENCE, "bank", "g", "bank/g[0]", 0, True, True, task_digest="x"),
        Outcome(REFERENCE, "bank", "g", "bank/g[1]", 0, True, True, task_digest="y"),
    ]
    b = [
        Outcome(NO_VERIFY, "bank", "g", "bank/g[0]", 0, False, True, task_digest="x"),
        Outcome(NO_VERIFY, "bank", "g", "bank/g[1]", 0, False, True, task_digest="other"),
    ]
    result = compare_outcomes(a, b)
    assert result.overall.paired_tasks == 1
    assert result.different_tasks == ("bank/g[1]",)
    assert result.as_dict()["different_tasks"] == {"count": 1, "tasks": ["bank/g[1]"]}


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["bank", "dmv"]),
            st.integers(0, 12),
            st.integers(0, 2),
            st.booleans(),
            st.booleans(),
        ),
        max_size=60,
    ),
    st.sets(st.integers(0, 12), max_size=3),
    st.integers(1, 40),
)
def test_paired_figures_are_those_of_each_tasks_runs_grouped(runs, unpaired, resamples):
    """compare_outcomes counts each task's runs in one pass: its figures are exactly those of the
    (A passed, B passed) pairs grouped by task, as the public functions over such groups give them."""
    a, b = {}, {}
    for domain, task, run, a_passed, b_passed in runs:
        task_id = f"{domain}/goal[{task}]"
        a[task_id, run] = Outcome(
            REFERENCE, domain, "goal", task_id, run, a_passed, True, () if a_passed else ("database",)
        )
        if task not in unpaired:
            b[task_id, run] = Outcome(NO_VERIFY, domain, "goal", task_id, run, b_passed, True)
    result = compare_outcomes(list(a.values()), list(b.values()), seed=5, resamples=resamples)
    every = sorted(
        (key for key in a if key in b), key=lambda key: (a[key].domain, task_order(key[0]), key[1])
    )
    for domain, rates in [(None, result.overall), *result.domains.items()]:
        keys = [key for key in every if domain is None or a[key].domain == domain]
        by_task: dict[str, list[tuple[bool, bool]]] = {}
        for key in keys:
            by_task.setdefault(key[0], []).append((a[key].passed, b[key].passed))
        assert rates.paired_tasks == len(by_task) and rates.paired_runs == len(keys)
        for side, rate in ((0, rates.a), (1, rates.b)):
            expected = RateInterval.of_tasks(
                [(sum(p[side] for p in pairs), len(pairs)) for pairs in by_task.values()]
            )
            assert (rate, rate.per_task, rate.ci95) == (expected, expected.per_task, expected.ci95)
        assert rates.difference_ci95 == paired_bootstrap_difference(by_task, seed=5, resamples=resamples)
        assert rates.sign_test == sign_test_over_tasks(by_task)
        assert [(f.task_id, f.run) for f in rates.a_only_passed] == [
            k for k in keys if a[k].passed and not b[k].passed
        ]
        assert [(f.task_id, f.run) for f in rates.b_only_passed] == [
            k for k in keys if b[k].passed and not a[k].passed
        ]
