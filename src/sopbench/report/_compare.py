"""``sopbench compare A B``: two configurations on the same tasks, paired by task and run."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from sopbench.scoring import Protocol, RunScore, ScoringReport, file_configuration, score_paths
from sopbench.statistics import Configuration, Outcome, PairedComparison, breakdown, compare_outcomes
from sopbench.traces import iter_trajectory_files

from ._breakdowns import breakdown_tables
from ._sources import outside_run_folders, scores_of_run_folders, split_sources
from ._table import TextTable, interval_text, percent

COMPARE_FORMATS = ("markdown", "csv", "json")
FLIPS_SHOWN = 20
DEFAULT_VIEWER_URL = "http://127.0.0.1:8765/"  # where ``sopbench view`` listens by default


def side_by_side_url(viewer_url: str, a: str, b: str, task: str) -> str:
    """The viewer's page of one task's episodes under configurations ``a`` and ``b`` (the viewer's
    names of them), next to each other: ``<viewer>/compare?a=<config>&b=<config>&task=<id>``."""
    return f"{viewer_url.rstrip('/')}/compare?{urlencode({'a': a, 'b': b, 'task': task})}"


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
    viewer_url: str = DEFAULT_VIEWER_URL  # where the flips open side by side (sopbench view on both sides)

    def side_by_side(self, task: str) -> str:
        from sopbench.view import configuration_name

        return side_by_side_url(self.viewer_url, configuration_name(self.a), configuration_name(self.b), task)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"protocol": self.protocol, "config_a": self.a.as_dict(), "config_b": self.b.as_dict()}
        out.update(self.result.as_dict())
        for rates in (out, *out["domains"].values()):
            for key in ("a_only_passed", "b_only_passed"):
                for flip in rates.get(key, []):
                    flip["side_by_side"] = self.side_by_side(flip["task_id"])
        out["breakdowns"] = {
            side: {by: breakdown(outcomes, by) for by in ("goal", "judgement", "constraint")}
            for side, outcomes in (("a", self.outcomes_a), ("b", self.outcomes_b))
        }
        return out

    def tables(self) -> list[TextTable]:
        rates = TextTable(
            f"A = {self.a.label}, B = {self.b.label} (protocol {self.protocol})",
            ["domain", "paired tasks", "A", "B", "A - B [95% CI]", "A only", "B only", "McNemar p"],
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
                    p_text(data["mcnemar_p"]),
                ],
                bold=name == "all",
            )
        tables = [rates]
        overall = self.result.overall
        for title, flips in (("A passed, B failed", overall.a_only_passed), ("B passed, A failed", overall.b_only_passed)):
            table = TextTable(
                f"{title}: {len(flips)} runs" + (f" (first {FLIPS_SHOWN} shown)" if len(flips) > FLIPS_SHOWN else ""),
                ["task", "run", "A's first failing judgement", "B's first failing judgement"],
                caption=f"side by side in sopbench view: {self.side_by_side('')}<task>" if flips else "",
            )
            for flip in flips[:FLIPS_SHOWN]:
                table.add_row([flip.task_id, str(flip.run), flip.a_failed or "-", flip.b_failed or "-"])
            tables.append(table)
        for side, outcomes, config in (("A", self.outcomes_a, self.a), ("B", self.outcomes_b, self.b)):
            tables += breakdown_tables(outcomes, self.by, f"{side} = {config.label}")
        return tables

    def notes(self) -> list[str]:
        r = self.result
        lines = [
            "pass rates over the paired runs; A - B with a paired bootstrap 95% interval over tasks "
            "(2,000 resamples, seed 0); McNemar: exact two-sided binomial test of the discordant runs"
        ]
        for side, unpaired in (("A", r.unpaired_a), ("B", r.unpaired_b)):
            if unpaired:
                shown = ", ".join(unpaired[:10]) + (", ..." if len(unpaired) > 10 else "")
                lines.append(f"{len(unpaired)} runs of {side} have no partner in the other side (not compared): {shown}")
        return lines


def p_text(p: float) -> str:
    # Below the smallest float the exact p-value underflows to 0: say so rather than print 0.
    return "<1e-300" if p == 0 else f"{p:.4g}"


def render_compare(report: CompareReport, output_format: str) -> str:
    if output_format == "json":
        return json.dumps(report.as_dict(), indent=2) + "\n"
    if output_format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(
            ["domain", "paired_tasks", "a_pass_rate", "b_pass_rate", "difference", "difference_ci95_low",
             "difference_ci95_high", "mcnemar_p", "a_only_passed", "b_only_passed"]
        )
        for name, rates in [*report.result.domains.items(), ("all", report.result.overall)]:
            data = rates.as_dict()
            ci = data["difference_ci95"] or ["", ""]
            writer.writerow(
                [name, data["paired_tasks"], data["a"]["pass_rate"], data["b"]["pass_rate"], data["difference"],
                 ci[0], ci[1], data["mcnemar_p"], data["a_only_passed_count"], data["b_only_passed_count"]]
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


def one_configuration(scores: list[RunScore], selector: str | None, side: str) -> tuple[Configuration, list[RunScore]]:
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
    progress: Callable[[str], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
) -> CompareReport:
    """Compare the one configuration of ``a`` with the one of ``b`` (``CompareError`` otherwise)."""
    config_of_a, scores_a = one_configuration(
        read_scores(a, protocol, selector=config_a, progress=progress, on_problem=on_problem), config_a, "A"
    )
    config_of_b, scores_b = one_configuration(
        read_scores(b, protocol, selector=config_b, progress=progress, on_problem=on_problem), config_b, "B"
    )
    outcomes_a = [s.outcome() for s in scores_a]
    outcomes_b = [s.outcome() for s in scores_b]
    result = compare_outcomes(outcomes_a, outcomes_b, seed=seed)
    return CompareReport(str(protocol), config_of_a, config_of_b, result, outcomes_a, outcomes_b, by)
