"""The floors played as sopbench run plays them: refuse-all on the published tasks, its split rates
and its justified refusals (the one place they are computed: sopbench.runner._baselines)."""

from __future__ import annotations

from pathlib import Path

from sopbench.runner.baselines import baseline_scores
from sopbench.scoring import SOPBENCH, SOUND, leaderboard, summarize
from sopbench.tasks import iter_all_tasks


def test_refuse_all_baseline_passes_582_of_903_published_tasks(published_tasks_dir: Path) -> None:
    tasks = list(iter_all_tasks(published_tasks_dir))
    assert len(tasks) == 903
    for protocol in (SOPBENCH, SOUND):
        summary = summarize(baseline_scores(tasks, "refuse-all", protocol))
        assert (summary.overall.passed, summary.overall.runs) == (582, 903)
        assert round(summary.overall.pass_rate * 100, 2) == 64.45
        university = summary.domains["university"]
        assert (university.passed, university.runs) == (36, 44)


def test_the_refuse_all_row_splits_582_of_903_into_every_refusal_and_no_success(
    published_tasks_dir: Path,
) -> None:
    tasks = list(iter_all_tasks(published_tasks_dir))
    baseline = baseline_scores(tasks, "refuse-all", SOUND, justify_refusal=True)
    assert {score.source for score in baseline} == {"refuse-all"}
    row = next(row for row in leaderboard([], baseline=baseline) if row.model == "refuse-all")
    assert (row.overall.passed, row.overall.cases) == (582, 903)
    assert (row.pooled.should_succeed, row.pooled.should_refuse) == ([0, 321], [582, 582])
    assert row.pooled.balanced == 0.5
    # It calls no helper, so its refusal is justified only where the request itself shows a violated
    # constraint that no helper checks (a test type, a date outside the lead time): 96 tasks.
    assert row.pooled.justified == [96, 582]


def test_a_justified_refusal_needs_the_revealing_helper_call(published_tasks_dir: Path) -> None:
    tasks = [
        t for t in iter_all_tasks(published_tasks_dir) if t.domain == "bank" and not t.action_should_succeed
    ]
    (score,) = baseline_scores(tasks[:1], "refuse-all", SOUND, justify_refusal=True)
    assert score.passed and score.justified_refusal is False
    assert summarize([score]).overall.justified_refusal_rate.rate == 0.0
