"""The statistics against values computed by hand, and the properties that tie them together."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sopbench.evaluation import UnverifiedConstraint
from sopbench.statistics import (
    Configuration,
    Outcome,
    balanced_interval,
    breakdown,
    compare_outcomes,
    mcnemar_exact,
    paired_bootstrap_difference,
    pass_at_k,
    pass_hat_k,
    percentile,
    repeated_runs,
    resampled_differences,
    summarize_outcomes,
    wilson_interval,
)

CONFIG = Configuration("openai", "m", "fc", "full", "none")


def test_wilson_bounds_match_hand_computed_values():
    # 5/10: centre (0.5 + 1.92/10) / 1.384 = 0.5, half = 1.96 * sqrt(0.025 + 0.0096) / 1.384 = 0.2634
    low, high = wilson_interval(5, 10)
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)
    # 0/10: the upper bound is z^2 / (n + z^2) = 3.8415 / 13.8415 = 0.2775; 10/10 mirrors it.
    assert wilson_interval(0, 10) == (0.0, pytest.approx(0.27753, abs=1e-5))
    assert wilson_interval(10, 10) == (pytest.approx(0.72247, abs=1e-5), 1.0)
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_balanced_interval_is_the_mover_combination_of_both_wilson_intervals():
    (l1, u1), (l2, _u2) = wilson_interval(5, 10), wilson_interval(10, 10)
    low, high = balanced_interval((5, 10), (10, 10))
    assert low == pytest.approx(0.75 - math.hypot(0.5 - l1, 1 - l2) / 2)
    assert high == pytest.approx(min(1.0, 0.75 + math.hypot(u1 - 0.5, 0.0) / 2))
    assert balanced_interval((5, 10), (0, 0)) == wilson_interval(5, 10)
    assert balanced_interval((0, 0), (0, 0)) is None


def test_unbiased_pass_at_k_and_pass_hat_k_by_hand():
    # n = 3, c = 1: pass@2 = 1 - C(2,2)/C(3,2) = 2/3; pass^2 = C(1,2)/C(3,2) = 0
    assert pass_at_k(3, 1, 2) == pytest.approx(2 / 3)
    assert pass_hat_k(3, 1, 2) == 0.0
    # n = 5, c = 3: pass^2 = C(3,2)/C(5,2) = 3/10; pass@2 = 1 - C(2,2)/C(5,2) = 9/10
    assert pass_hat_k(5, 3, 2) == pytest.approx(0.3)
    assert pass_at_k(5, 3, 2) == pytest.approx(0.9)
    # n = k: every run is drawn; c = 0: nothing ever passes.
    assert pass_hat_k(3, 3, 3) == 1.0 and pass_hat_k(3, 2, 3) == 0.0
    assert pass_at_k(3, 1, 3) == 1.0 and pass_at_k(3, 0, 3) == 0.0
    assert pass_at_k(4, 0, 1) == 0.0 and pass_hat_k(4, 0, 2) == 0.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_repeated_runs_average_over_tasks_with_enough_runs_and_read_the_first_k():
    runs = {"t1": [(0, False), (1, True), (2, True)], "t2": [(1, True), (0, True)], "t3": [(0, False)]}
    stats = repeated_runs(runs)
    assert stats.tasks_with_k == {1: 3, 2: 2, 3: 1}
    assert stats.pass_hat_k[1] == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert stats.pass_hat_k[2] == pytest.approx((1 / 3 + 1) / 2)
    assert stats.pass_hat_k[3] == 0.0
    assert stats.pass_at_k_first == {1: pytest.approx(1 / 3), 2: 1.0, 3: 1.0}
    assert stats.as_dict()["pass_hat_k"].keys() == {"1", "2", "3"}


@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=6), min_size=1, max_size=20))
def test_pass_hat_k_is_non_increasing_in_k_and_is_the_pass_rate_at_one(tasks):
    for passes in tasks:
        n, c = len(passes), sum(passes)
        values = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
        assert values[0] == pytest.approx(c / n)
        assert all(later <= earlier + 1e-12 for earlier, later in zip(values, values[1:], strict=False))
        at = [pass_at_k(n, c, k) for k in range(1, n + 1)]
        assert at[0] == pytest.approx(c / n)
        assert all(later >= earlier - 1e-12 for earlier, later in zip(at, at[1:], strict=False))


def test_mcnemar_exact_p_by_hand():
    # 1 vs 6 discordant: 2 * (C(7,0) + C(7,1)) / 2^7 = 16/128
    assert mcnemar_exact(1, 6) == 0.125
    assert mcnemar_exact(6, 1) == 0.125
    # 0 vs 10: 2 / 1024
    assert mcnemar_exact(0, 10) == pytest.approx(2 / 1024)
    assert mcnemar_exact(3, 3) == 1.0 and mcnemar_exact(0, 0) == 1.0


def test_paired_bootstrap_is_seeded_and_brackets_the_difference():
    pairs = {f"t{i}": [(i % 2 == 0, i % 5 == 0)] for i in range(200)}
    first = paired_bootstrap_difference(pairs, seed=3)
    assert first == paired_bootstrap_difference(pairs, seed=3)
    assert first is not None and first[0] < 0.5 - 0.2 < first[1]
    assert paired_bootstrap_difference({}) is None


@given(
    st.lists(st.tuples(st.integers(-3, 3), st.integers(1, 3)), min_size=1, max_size=40),
    st.integers(0, 2**40),
    st.integers(1, 60),
)
def test_the_bootstrap_draws_the_same_resamples_with_numpy_as_without(tasks, seed, resamples):
    diffs, sizes = [d for d, _ in tasks], [s for _, s in tasks]
    expected = resampled_differences(diffs, sizes, resamples=resamples, seed=seed, draw="python")
    assert resampled_differences(diffs, sizes, resamples=resamples, seed=seed) == expected
    assert resampled_differences(diffs, sizes, resamples=resamples, seed=seed, draw="numpy") == expected
    # drawn a few resamples at a time, the stream goes on unbroken
    few = resampled_differences(diffs, sizes, resamples=resamples, seed=seed, draw="numpy", draws_at_once=7)
    assert few == expected


def _outcome(task, run, passed, domain="bank", failed=(), unverified=(), goal="g", config=CONFIG):
    return Outcome(config, domain, goal, task, run, passed, True, failed, unverified)


def test_compare_pairs_by_task_and_run_and_names_the_unpaired():
    a = [_outcome("t1", 0, True), _outcome("t2", 0, True), _outcome("t3", 0, False, failed=("permission",))]
    b = [_outcome("t1", 0, True), _outcome("t2", 0, False, failed=("procedure",)), _outcome("t9", 0, True)]
    result = compare_outcomes(a, b).as_dict()
    assert result["paired_tasks"] == 2 and result["a_only_passed_count"] == 1
    assert result["difference"] == 0.5
    assert result["a_only_passed"][0]["b_first_failing_judgement"] == "procedure"
    assert result["unpaired"] == {
        "a": {"count": 1, "runs": ["t3 run 0"]},
        "b": {"count": 1, "runs": ["t9 run 0"]},
    }
    assert result["mcnemar_p"] == 1.0


def test_breakdowns_by_goal_judgement_and_constraint():
    outcomes = [
        _outcome(
            "t1", 0, False, failed=("procedure",), unverified=(UnverifiedConstraint("Or", 1),), goal="a"
        ),
        _outcome(
            "t2", 0, False, failed=("procedure", "database"), unverified=(UnverifiedConstraint("Single", 0),)
        ),
        _outcome("t3", 0, False, failed=("procedure",)),
        _outcome("t4", 0, True, goal="a"),
    ]
    assert breakdown(outcomes, "goal")["a"]["rate"] == 0.5
    judgements = breakdown(outcomes, "judgement")
    assert judgements["failed_runs"] == 3 and judgements["judgements"]["database"]["passed"] == 1
    constraints = breakdown(outcomes, "constraint")
    assert constraints["by_kind"]["Or"]["rate"] == pytest.approx(1 / 3)
    assert constraints["by_kind"]["unclassified"]["passed"] == 1
    assert constraints["by_depth"]["1"]["passed"] == 1 and constraints["by_depth"]["none"]["passed"] == 1


def test_summary_has_intervals_and_repeated_runs_only_with_several_runs():
    single = summarize_outcomes([_outcome("t1", 0, True), _outcome("t2", 0, False)]).as_dict()
    assert single["pass_rate"] == 0.5 and len(single["pass_rate_ci95"]) == 2 and "pass_hat_k" not in single
    repeated = summarize_outcomes([_outcome("t1", 0, True), _outcome("t1", 1, False)]).as_dict()
    assert repeated["pass_hat_k"] == {"1": 0.5, "2": 0.0}


def test_percentile_interpolates():
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([5.0], 95) == 5.0 and percentile([], 50) is None
