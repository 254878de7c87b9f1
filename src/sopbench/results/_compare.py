"""Comparison of two agents on the same tasks: runs paired by task and run.

Only the same task is paired: a task id whose content (digest) differs on the two sides is refused
(``CompareError``), or with ``allow_different_tasks`` counted apart and named. The figures' unit is
the task (``sopbench.statistics.compare_outcomes``), and both sides must have run each task the
same number of times."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sopbench.runner.baselines import Baselines
from sopbench.scoring import RunScore, ScoringReport, file_configuration, score_paths
from sopbench.statistics import (
    DEFAULT_RESAMPLES,
    Configuration,
    Outcome,
    PairedComparison,
    PairedRates,
    compare_outcomes,
)
from sopbench.traces import iter_trajectory_files

from ._floors import floors_beside
from ._options import ScoringOptions
from ._sources import Sources, scores_of_run_folders

__all__ = ["AgentComparison", "CompareError", "compare", "paired_by_goal"]

Progress = Callable[[str], None]
ProblemSink = Callable[[str], None]


class CompareError(ValueError):
    """A side that does not hold exactly one configuration (after its filter), sides that ran tasks
    a different number of times, or other tasks under the same ids."""


@dataclass(frozen=True)
class AgentComparison:
    """The one configuration of each side, their paired figures, the outcomes behind them and the
    floors on the paired tasks."""

    protocol: str
    a: Configuration
    b: Configuration
    result: PairedComparison
    outcomes_a: list[Outcome]
    outcomes_b: list[Outcome]
    seed: int = 0
    floors: Baselines | None = None  # refuse-all and no-verify on the paired tasks

    def by_goal(self) -> dict[tuple[str, str], tuple[PairedRates, int]]:
        """The paired figures per (domain, goal), and how many runs of either side had no partner."""
        return paired_by_goal(self.outcomes_a, self.outcomes_b, self.seed)


def read_scores(
    sources: Sources,
    options: ScoringOptions,
    *,
    selector: str | None = None,
    progress: Progress | None = None,
    on_problem: ProblemSink | None = None,
) -> list[RunScore]:
    """Every score of ``sources``: run folders' stored verdicts and trajectory files scored (only
    the files whose name matches ``selector``: the others would be filtered out after scoring)."""
    files = [f for f in sources.files if matches(file_configuration(f.as_posix()), selector)]
    scores = scores_of_run_folders(sources.run_folders, options.protocol, on_problem, progress=progress)
    if files:
        scoring = ScoringReport()

        def told(path: Path, _position: int, _scored: int) -> None:
            if progress is not None:
                progress(f"{path.parent.name}/{path.name}")

        if options.cache is not None:
            for file in iter_trajectory_files(files):
                read = scoring.files
                scores += options.cache.score_file(
                    file,
                    options.protocol,
                    scoring,
                    credit_cards=options.credit_cards,
                    justify_refusal=options.justify_refusal,
                ).scores
                if scoring.files > read:  # as score_paths tells: each file it could read
                    told(file, scoring.files, scoring.scored)
        else:
            scores += list(
                score_paths(
                    files,
                    options.protocol,
                    report=scoring,
                    progress=told,
                    credit_cards=options.credit_cards,
                    justify_refusal=options.justify_refusal,
                )
            )
        if on_problem is not None:
            for problem in scoring.errors:
                on_problem(problem)
    return scores


def matches(config: Configuration, selector: str | None) -> bool:
    """``--config-a`` / ``--config-b``: ``key=value`` pairs separated by commas (keys agent, model,
    tool_mode, tool_list, user), or a text found in the configuration's label."""
    if not selector:
        return True
    fields = config.as_dict()
    for part in (p.strip() for p in selector.split(",") if p.strip()):
        if "=" in part:
            key, value = (x.strip() for x in part.split("=", 1))
            if key not in fields:
                raise CompareError(f"unknown key {key!r} (use {', '.join(fields)})")
            found = fields[key]
            if not _same(found, value):
                return False
        elif part not in config.label:
            return False
    return True


def _same(found: str | None, wanted: str) -> bool:
    """A filter value against a configuration field: ``none`` (or nothing) matches an unset field."""
    if found is None:
        return wanted.lower() in ("", "none")
    return found == wanted


def one_configuration(
    scores: list[RunScore], selector: str | None, side: str
) -> tuple[Configuration, list[RunScore]]:
    groups: dict[Configuration, list[RunScore]] = {}
    for score in scores:
        if matches(score.config, selector):
            groups.setdefault(score.config, []).append(score)
    option = f"--config-{side.lower()}"
    if not groups:
        raise CompareError(f"{side} holds no run" + (f" matching {option} {selector}" if selector else ""))
    if len(groups) > 1:
        names = "; ".join(sorted(c.label for c in groups))
        raise CompareError(f"{side} holds {len(groups)} configurations ({names}): choose one with {option}")
    ((config, chosen),) = groups.items()
    return config, chosen


def compare(
    a: Sources,
    b: Sources,
    options: ScoringOptions,
    *,
    config_a: str | None = None,
    config_b: str | None = None,
    seed: int = 0,
    allow_different_tasks: bool = False,
    progress: Progress | None = None,
    on_problem: ProblemSink | None = None,
) -> AgentComparison:
    """Compare the one configuration of ``a`` with the one of ``b`` (chosen by ``config_a`` and
    ``config_b``: see ``matches``); ``options.runs`` "first": each task's first run only.

    ``CompareError`` when a side holds no or several configurations, when the sides ran tasks a
    different number of times, or hold other tasks under the same ids (unless
    ``allow_different_tasks``). The floors are played on the paired tasks."""
    config_of_a, scores_a = one_configuration(
        read_scores(a, options, selector=config_a, progress=progress, on_problem=on_problem), config_a, "A"
    )
    config_of_b, scores_b = one_configuration(
        read_scores(b, options, selector=config_b, progress=progress, on_problem=on_problem), config_b, "B"
    )
    if options.first_runs_only:
        scores_a = [s for s in scores_a if s.run == 0]
        scores_b = [s for s in scores_b if s.run == 0]
    outcomes_a = [s.outcome(with_digest=True) for s in scores_a]
    outcomes_b = [s.outcome(with_digest=True) for s in scores_b]
    runs_a, runs_b = runs_per_task(outcomes_a), runs_per_task(outcomes_b)
    if runs_a != runs_b:
        raise CompareError(
            f"A ran each task {runs_a} times and B {runs_b} times: compare runs of the same count "
            "(--runs first compares each task's first run)"
        )
    result = compare_outcomes(outcomes_a, outcomes_b, seed=seed)
    if result.different_tasks and not allow_different_tasks:
        first = result.different_tasks[0]
        raise CompareError(
            f"A and B hold {len(result.different_tasks)} task ids that are other tasks on each side "
            f"(their digests differ, first {first}): they were run on different task sets; "
            "--allow-different-tasks compares the same tasks only and names the others"
        )
    paired = {o.task_id for o in outcomes_a} & {o.task_id for o in outcomes_b}
    paired -= set(result.different_tasks)
    floors = floors_beside([s for s in scores_a if s.task_key in paired and s.run == 0], a, options)
    return AgentComparison(
        str(options.protocol), config_of_a, config_of_b, result, outcomes_a, outcomes_b, seed, floors
    )


def runs_per_task(outcomes: Sequence[Outcome]) -> int:
    """The most runs any one task has (K)."""
    counts = Counter(o.task_id for o in outcomes)
    return max(counts.values(), default=0)


def paired_by_goal(
    a: Sequence[Outcome], b: Sequence[Outcome], seed: int = 0
) -> dict[tuple[str, str], tuple[PairedRates, int]]:
    """Per (domain, goal): the paired figures and how many runs of either side had no partner."""
    keys = sorted({(o.domain, o.goal) for o in (*a, *b)})
    out = {}
    for domain, goal in keys:
        of_a = [o for o in a if (o.domain, o.goal) == (domain, goal)]
        of_b = [o for o in b if (o.domain, o.goal) == (domain, goal)]
        result = compare_outcomes(of_a, of_b, seed=seed, resamples=DEFAULT_RESAMPLES)
        out[(domain, goal)] = (result.overall, len(result.unpaired_a) + len(result.unpaired_b))
    return out
