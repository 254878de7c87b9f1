"""``sopbench compare A B``: two configurations on the same tasks, paired by task and run.

Only the same task is paired: a task id whose content (digest) differs on the two sides is refused
(``CompareError``), or with ``allow_different_tasks`` counted apart and named. The figures' unit is
the task (``sopbench.statistics.compare_outcomes``), and both sides must have run each task the
same number of times."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sopbench.runner.baselines import Baselines, source_baselines
from sopbench.scoring import (
    Protocol,
    RunScore,
    ScoringReport,
    file_configuration,
    score_paths,
)
from sopbench.statistics import (
    DEFAULT_RESAMPLES,
    Configuration,
    Outcome,
    PairedComparison,
    PairedRates,
    breakdown,
    compare_outcomes,
)
from sopbench.traces import iter_trajectory_files

from ._breakdowns import breakdown_tables
from ._floors import floors_json, floors_table
from ._sources import outside_run_folders, scores_of_run_folders, split_sources
from ._table import TextTable, interval_text, percent

COMPARE_FORMATS = ("markdown", "csv", "json")
FLIPS_SHOWN = 20


class CompareError(ValueError):
    """A side that does not hold exactly one configuration (after its filter)."""


@dataclass
class CompareReport:
    protocol: str
    a: Configuration
    b: Configuration
    result: PairedComparison
    outcomes_a: list[Outcome]
    outcomes_b: list[Outcome]
    by: Sequence[str] = ()
    seed: int = 0
    floors: Baselines | None = None  # refuse-all and no-verify on the paired tasks
    viewer_url: str | None = None  # where sopbench view serves both sides: each flip links to /compare

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "protocol": self.protocol,
            "config_a": self.a.as_dict(),
            "config_b": self.b.as_dict(),
        }
        out.update(self.result.as_dict())
        out["floors"] = floors_json(self.floors)
        out["breakdowns"] = {
            side: {by: breakdown(outcomes, by) for by in ("judgement", "constraint")}
            for side, outcomes in (("a", self.outcomes_a), ("b", self.outcomes_b))
        }
        out["breakdowns"]["goal"] = self.by_goal()
        return out

    def by_goal(self) -> list[dict[str, Any]]:
        """The paired figures per (domain, goal): only runs with a partner, the unpaired beside."""
        return [
            {"domain": domain, "goal": goal, **rates.as_dict(), "unpaired_runs": unpaired}
            for (domain, goal), (rates, unpaired) in paired_by_goal(
                self.outcomes_a, self.outcomes_b, self.seed
            ).items()
        ]

    def tables(self) -> list[TextTable]:
        rates = TextTable(
            f"A = {self.a.label}, B = {self.b.label} (protocol {self.protocol})",
            ["domain", "paired tasks", "A", "B", "A - B [95% CI]", "A only", "B only", "p over tasks"],
        )
        items = [*self.result.domains.items(), ("all", self.result.overall)]
        for name, rates_of in items:
            data = rates_of.as_dict()
            difference = data["difference"]
            rates.add_row(
                [
                    name,
                    str(data["paired_tasks"]),
                    percent(data["a"]["pass_rate"]),
                    percent(data["b"]["pass_rate"]),
                    "-"
                    if difference is None
                    else f"{100 * difference:+.2f} {interval_text(rates_of.difference_ci95)}",
                    str(data["a_only_passed_count"]),
                    str(data["b_only_passed_count"]),
                    _p_text(data["mcnemar_p"]),
                ],
                bold=name == "all",
            )
        tables = [rates]
        overall = self.result.overall
        link = [] if self.viewer_url is None else ["side by side"]
        for title, flips in (
            ("A passed, B failed", overall.a_only_passed),
            ("B passed, A failed", overall.b_only_passed),
        ):
            table = TextTable(
                f"{title}: {len(flips)} runs"
                + (f" (first {FLIPS_SHOWN} shown)" if len(flips) > FLIPS_SHOWN else ""),
                ["task", "run", "A's first failing judgement", "B's first failing judgement", *link],
            )
            for flip in flips[:FLIPS_SHOWN]:
                row = [flip.task_id, str(flip.run), flip.a_failed or "-", flip.b_failed or "-"]
                table.add_row(row + ([self._side_by_side(flip.task_id)] if link else []))
            tables.append(table)
        floors = floors_table(self.floors, "the paired tasks")
        if floors is not None:
            tables.append(floors)
        if "goal" in self.by:
            tables.append(self._goal_table())
        others = [name for name in self.by if name != "goal"]
        for side, outcomes, config in (("A", self.outcomes_a, self.a), ("B", self.outcomes_b, self.b)):
            tables += breakdown_tables(outcomes, others, f"{side} = {config.label}")
        return tables

    def _side_by_side(self, task_id: str) -> str:
        from sopbench.view import compare_address, configuration_name

        assert self.viewer_url is not None
        names = (configuration_name(self.a), configuration_name(self.b))
        return self.viewer_url.rstrip("/") + compare_address(*names, task_id)

    def _goal_table(self) -> TextTable:
        table = TextTable(
            "by goal: paired runs only (unpaired runs counted beside, not compared)",
            ["domain", "goal", "paired tasks", "A", "B", "A - B [95% CI]", "p over tasks", "unpaired runs"],
        )
        for (domain, goal), (rates, unpaired) in paired_by_goal(
            self.outcomes_a, self.outcomes_b, self.seed
        ).items():
            difference = rates.difference
            table.add_row(
                [
                    domain,
                    goal,
                    str(rates.paired_tasks),
                    percent(rates.a.rate),
                    percent(rates.b.rate),
                    "-"
                    if difference is None
                    else f"{100 * difference:+.2f} {interval_text(rates.difference_ci95)}",
                    _p_text(rates.mcnemar_p) if rates.paired_tasks else "-",
                    str(unpaired),
                ]
            )
        return table

    def notes(self) -> list[str]:
        r = self.result
        k = r.overall.runs_per_task
        runs = "one run per task" if k <= 1 else f"{k} runs per task"
        lines = [
            f"unit: the task ({r.overall.paired_tasks} paired tasks, {runs}). Pass rates over the paired "
            "runs, 95% intervals "
            + ("Wilson's" if k <= 1 else "Wilson's clustered by task (effective number of tasks)")
            + "; A - B with a paired bootstrap 95% interval over tasks (2,000 resamples, seed 0); "
            "p over tasks: exact two-sided sign test of the tasks where A passed more of the paired runs "
            "than B against those where B did"
            + (" (McNemar's exact test, each task having run once)" if k <= 1 else "")
            + "; A only / B only count runs"
        ]
        if r.different_tasks:
            shown = ", ".join(r.different_tasks[:10]) + (", ..." if len(r.different_tasks) > 10 else "")
            lines.append(
                f"{len(r.different_tasks)} task ids name other tasks on the two sides (digests differ; "
                f"not compared): {shown}"
            )
        for side, unpaired in (("A", r.unpaired_a), ("B", r.unpaired_b)):
            if unpaired:
                shown = ", ".join(unpaired[:10]) + (", ..." if len(unpaired) > 10 else "")
                lines.append(
                    f"{len(unpaired)} runs of {side} have no partner in the other side (not compared): {shown}"
                )
        return lines


def _p_text(p: float) -> str:
    # Below the smallest float the exact p-value underflows to 0: say so rather than print 0.
    return "<1e-300" if p == 0 else f"{p:.4g}"


def render_compare(report: CompareReport, output_format: str) -> str:
    if output_format == "json":
        return json.dumps(report.as_dict(), indent=2) + "\n"
    if output_format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(
            [
                "domain",
                "paired_tasks",
                "a_pass_rate",
                "b_pass_rate",
                "difference",
                "difference_ci95_low",
                "difference_ci95_high",
                "mcnemar_p",
                "a_only_passed",
                "b_only_passed",
            ]
        )
        for name, rates in [*report.result.domains.items(), ("all", report.result.overall)]:
            data = rates.as_dict()
            ci = data["difference_ci95"] or ["", ""]
            writer.writerow(
                [
                    name,
                    data["paired_tasks"],
                    data["a"]["pass_rate"],
                    data["b"]["pass_rate"],
                    data["difference"],
                    ci[0],
                    ci[1],
                    data["mcnemar_p"],
                    data["a_only_passed_count"],
                    data["b_only_passed_count"],
                ]
            )
        return buffer.getvalue()
    if output_format == "markdown":
        return "\n".join(t.markdown() for t in report.tables()) + "\n" + "\n".join(report.notes()) + "\n"
    raise ValueError(f"unknown format {output_format!r} (expected {', '.join(COMPARE_FORMATS)})")


def read_scores(
    paths: Sequence[Path],
    protocol: Protocol,
    *,
    selector: str | None = None,
    progress: Callable[[str], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
) -> list[RunScore]:
    """Every score of ``paths``: run folders' stored verdicts and trajectory files scored (only the
    files whose name matches ``selector``: the others would be filtered out after scoring)."""
    folders, others = split_sources(paths)
    if others:
        others = [
            f
            for f in outside_run_folders(iter_trajectory_files(others), folders)
            if matches(file_configuration(f.as_posix()), selector)
        ]
    scores = scores_of_run_folders(folders, protocol, on_problem, progress=progress)
    if others:
        scoring = ScoringReport()

        def told(path: Path, _position: int, _scored: int) -> None:
            if progress is not None:
                progress(f"{path.parent.name}/{path.name}")

        scores += list(score_paths(others, protocol, report=scoring, progress=told))
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


def compare_sources(
    a: Sequence[Path],
    b: Sequence[Path],
    protocol: Protocol,
    *,
    config_a: str | None = None,
    config_b: str | None = None,
    by: Sequence[str] = (),
    seed: int = 0,
    runs: str = "all",
    allow_different_tasks: bool = False,
    progress: Callable[[str], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
) -> CompareReport:
    """Compare the one configuration of ``a`` with the one of ``b`` (``CompareError`` otherwise,
    and when the sides ran tasks a different number of times, or hold other tasks under the same
    ids unless ``allow_different_tasks``). ``runs="first"``: each task's first run only."""
    config_of_a, scores_a = one_configuration(
        read_scores(a, protocol, selector=config_a, progress=progress, on_problem=on_problem), config_a, "A"
    )
    config_of_b, scores_b = one_configuration(
        read_scores(b, protocol, selector=config_b, progress=progress, on_problem=on_problem), config_b, "B"
    )
    if runs == "first":
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
    floors = source_baselines(
        [s for s in scores_a if s.task_key in paired and s.run == 0],
        split_sources(a)[0],
        protocol,
    )
    return CompareReport(
        str(protocol), config_of_a, config_of_b, result, outcomes_a, outcomes_b, by, seed, floors
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
