"""Statistics over verdicts: intervals, repeated runs, paired comparisons, breakdowns, usage.

The unit of every interval and test is the task: with K >= 2 runs of a task, rates get intervals
clustered by task (``task_interval``) and comparisons test tasks, not runs
(``sign_test_over_tasks``); with one run per task these are Wilson's interval and McNemar's exact
test, as before.

Pure functions over typed rows (``Outcome``): no file, no clock, no global state; anything random
is seeded by its caller.

>>> from sopbench.statistics import wilson_interval, pass_hat_k, mcnemar_exact
>>> [round(x, 4) for x in wilson_interval(31, 66)]
[0.3543, 0.5884]
>>> pass_hat_k(3, 2, 2)
0.3333333333333333
>>> mcnemar_exact(1, 6)
0.125
"""

from ._compare import Flip, PairedComparison, PairedRates, compare_outcomes, task_order
from ._intervals import (
    Z95,
    RateInterval,
    balanced_interval,
    clustered,
    effective_tasks,
    task_interval,
    wilson_interval,
)
from ._outcome import JUDGEMENT_NAMES, Configuration, Outcome, Unverified, Usage
from ._paired import (
    DEFAULT_RESAMPLES,
    SignTest,
    mcnemar_exact,
    paired_bootstrap_difference,
    resampled_differences,
    sign_test_over_tasks,
)
from ._ranks import RANK_ALPHA, adjacent_p_values, rank_groups
from ._repeated import RepeatedRuns, pass_at_k, pass_hat_k, repeated_runs
from ._summary import (
    BREAKDOWNS,
    OutcomeSummary,
    UsageSummary,
    breakdown,
    by_configuration,
    percentile,
    rate_over_tasks,
    summarize_outcomes,
    summarize_usage,
    with_cost,
)

__all__ = [
    "BREAKDOWNS",
    "DEFAULT_RESAMPLES",
    "JUDGEMENT_NAMES",
    "Z95",
    "Configuration",
    "Flip",
    "Outcome",
    "RANK_ALPHA",
    "adjacent_p_values",
    "rank_groups",
    "OutcomeSummary",
    "PairedComparison",
    "PairedRates",
    "RateInterval",
    "RepeatedRuns",
    "SignTest",
    "Unverified",
    "Usage",
    "UsageSummary",
    "balanced_interval",
    "breakdown",
    "by_configuration",
    "clustered",
    "compare_outcomes",
    "effective_tasks",
    "sign_test_over_tasks",
    "task_interval",
    "task_order",
    "mcnemar_exact",
    "paired_bootstrap_difference",
    "pass_at_k",
    "pass_hat_k",
    "percentile",
    "rate_over_tasks",
    "repeated_runs",
    "resampled_differences",
    "summarize_outcomes",
    "summarize_usage",
    "wilson_interval",
    "with_cost",
]
