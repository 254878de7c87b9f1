"""Two configurations on the same tasks: runs paired by task and run index, compared over tasks.

A task is the same task on both sides only when its content is (its digest, when both sides know
it); the figures' unit is the task: rates with intervals clustered by task, the difference's
paired bootstrap over tasks and the exact sign test over tasks (``mcnemar_p``, McNemar's exact test
when each task ran once)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._intervals import RateInterval
from ._outcome import Outcome
from ._paired import DEFAULT_RESAMPLES, SignTest, difference_interval, sign_test_of_differences

__all__ = ["Flip", "PairedComparison", "compare_outcomes"]

ALL = "all"


@dataclass(frozen=True, slots=True)
class Flip:
    """A paired run that one side passed and the other failed, with the failing side's first judgement."""

    domain: str
    task_id: str
    run: int
    a_failed: str | None  # A's first failing judgement (None: A passed)
    b_failed: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "task_id": self.task_id,
            "run": self.run,
            "a_first_failing_judgement": self.a_failed,
            "b_first_failing_judgement": self.b_failed,
        }


@dataclass(frozen=True, slots=True)
class PairedRates:
    """The paired figures of one domain (or of all), with the runs that flipped each way."""

    paired_tasks: int
    paired_runs: int
    a: RateInterval
    b: RateInterval
    difference_ci95: tuple[float, float] | None
    a_only_passed: tuple[Flip, ...]
    b_only_passed: tuple[Flip, ...]
    sign_test: SignTest = field(default_factory=lambda: SignTest(0, 0, 0))

    @property
    def runs_per_task(self) -> int:
        """The most paired runs of one task (1: each task ran once on both sides)."""
        return max((n for _, n in self.a.per_task), default=0)

    @property
    def a_only(self) -> int:
        return len(self.a_only_passed)

    @property
    def b_only(self) -> int:
        return len(self.b_only_passed)

    @property
    def difference(self) -> float | None:
        if self.a.rate is None or self.b.rate is None:
            return None
        return self.a.rate - self.b.rate

    @property
    def mcnemar_p(self) -> float:
        """The exact sign test over tasks (McNemar's exact test when each task ran once)."""
        return self.sign_test.p

    def as_dict(self) -> dict[str, Any]:
        ci = self.difference_ci95
        return {
            "unit": "task",
            "tasks": {**self.sign_test.as_dict(), "runs_per_task": self.runs_per_task},
            "paired_tasks": self.paired_tasks,
            "paired_runs": self.paired_runs,
            "a": {"pass_rate": self.a.rate, **_ci(self.a)},
            "b": {"pass_rate": self.b.rate, **_ci(self.b)},
            "difference": self.difference,
            "difference_ci95": None if ci is None else list(ci),
            "mcnemar_p": self.mcnemar_p,
            "a_only_passed": [f.as_dict() for f in self.a_only_passed],
            "b_only_passed": [f.as_dict() for f in self.b_only_passed],
            "a_only_passed_count": self.a_only,
            "b_only_passed_count": self.b_only,
        }


def _ci(rate: RateInterval) -> dict[str, Any]:
    ci = rate.ci95
    return {
        "passed": rate.passed,
        "runs": rate.total,
        "ci95": None if ci is None else list(ci),
        "ci95_method": rate.method,
    }


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """Overall and per-domain paired figures, the flipped runs, and the runs without a partner."""

    overall: PairedRates
    domains: dict[str, PairedRates]
    unpaired_a: tuple[str, ...] = field(default=())  # "<task id> run <r>" of A without a B partner
    unpaired_b: tuple[str, ...] = field(default=())
    # Task ids both sides hold but with other content (digests differ): never paired.
    different_tasks: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        out = self.overall.as_dict()
        out["unpaired"] = {
            "a": {"count": len(self.unpaired_a), "runs": list(self.unpaired_a)},
            "b": {"count": len(self.unpaired_b), "runs": list(self.unpaired_b)},
        }
        out["different_tasks"] = {"count": len(self.different_tasks), "tasks": list(self.different_tasks)}
        out["domains"] = {d: rates.as_dict() for d, rates in self.domains.items()}
        return out


def compare_outcomes(
    a: Sequence[Outcome], b: Sequence[Outcome], *, seed: int = 0, resamples: int = DEFAULT_RESAMPLES
) -> PairedComparison:
    """Pair A's and B's runs by (task id, run index) and compare their pass rates, over tasks.

    A task id whose digests differ on the two sides (both known) names two different tasks: its runs
    are not paired but listed in ``different_tasks``. Figures are over the paired runs only; runs
    without a partner are listed in ``unpaired_*``. The unit of every figure is the task: each
    side's rate has an interval clustered by task, the difference's interval is a paired bootstrap
    over tasks (``seed``, ``resamples``) and ``mcnemar_p`` the exact sign test over tasks.
    """
    index_b = {(o.task_id, o.run): o for o in b}
    index_a = {(o.task_id, o.run): o for o in a}
    digests_a = {o.task_id: o.task_digest for o in a if o.task_digest}
    digests_b = {o.task_id: o.task_digest for o in b if o.task_digest}
    different = {t for t, d in digests_a.items() if digests_b.get(t, d) != d}
    index_a = {key: o for key, o in index_a.items() if key[0] not in different}
    index_b = {key: o for key, o in index_b.items() if key[0] not in different}
    pairs = [(o, index_b[key]) for key, o in index_a.items() if key in index_b]
    # Each task id parsed once, not once per run (the report pairs each row with each floor)
    orders = {task_id: task_order(task_id) for task_id, _ in (*index_a, *index_b)}
    pairs.sort(key=lambda p: (p[0].domain, orders[p[0].task_id], p[0].run))

    def runs_in_order(keys: set[tuple[str, int]]) -> tuple[str, ...]:
        return tuple(f"{t} run {r}" for t, r in sorted(keys, key=lambda k: (orders[k[0]], k[1])))

    unpaired_a = runs_in_order(set(index_a) - set(index_b))
    unpaired_b = runs_in_order(set(index_b) - set(index_a))
    of_domain: dict[str, list[tuple[Outcome, Outcome]]] = {}
    for pair in pairs:  # each domain's pairs in the order of all of them
        of_domain.setdefault(pair[0].domain, []).append(pair)
    per_domain = {d: _rates(of_domain[d], seed, resamples) for d in sorted(of_domain)}
    return PairedComparison(
        _rates(pairs, seed, resamples),
        per_domain,
        unpaired_a,
        unpaired_b,
        tuple(sorted(different, key=task_order)),
    )


def task_order(task_id: str) -> tuple[str, int, str]:
    """``bank/open_account[10]`` after ``bank/open_account[9]``: the position compared as a number."""
    name, _, rest = task_id.partition("[")
    position = rest.rstrip("]")
    return (name, int(position), "") if position.isdigit() else (name, -1, task_id)


def _flip(x: Outcome, y: Outcome) -> Flip:
    return Flip(x.domain, x.task_id, x.run, x.first_failing_judgement, y.first_failing_judgement)


def _rates(pairs: Sequence[tuple[Outcome, Outcome]], seed: int, resamples: int) -> PairedRates:
    # One pass: each task's [A passed, B passed, runs], in the order of its first pair, and the flips
    counts: dict[str, list[int]] = {}
    a_only: list[Flip] = []
    b_only: list[Flip] = []
    for x, y in pairs:
        task = counts.get(x.task_id)
        if task is None:
            task = counts[x.task_id] = [0, 0, 0]
        task[0] += x.passed
        task[1] += y.passed
        task[2] += 1
        if x.passed and not y.passed:
            a_only.append(_flip(x, y))
        elif y.passed and not x.passed:
            b_only.append(_flip(x, y))
    tasks = list(counts.values())
    differences = [a - b for a, b, _ in tasks]
    runs = [n for _, _, n in tasks]
    return PairedRates(
        paired_tasks=len(tasks),
        paired_runs=len(pairs),
        a=RateInterval.of_tasks([(a, n) for a, _, n in tasks]),
        b=RateInterval.of_tasks([(b, n) for _, b, n in tasks]),
        difference_ci95=difference_interval(differences, runs, seed=seed, resamples=resamples),
        a_only_passed=tuple(a_only),
        b_only_passed=tuple(b_only),
        sign_test=sign_test_of_differences(differences),
    )
