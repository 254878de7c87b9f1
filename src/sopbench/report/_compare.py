"""``sopbench compare A B`` as shown: the paired figures of two configurations per domain and
overall, the flipped runs, the floors and the breakdowns; as tables with notes, CSV or one JSON
document. What it shows is computed by ``sopbench.results.compare``."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sopbench.results import AgentComparison, breakdowns
from sopbench.statistics import Configuration, PairedComparison

from ._breakdowns import breakdown_tables
from ._floors import floors_json, floors_table
from ._table import TextTable, interval_text, percent

COMPARE_FORMATS = ("markdown", "csv", "json")
FLIPS_SHOWN = 20


@dataclass(frozen=True)
class CompareReport:
    """A comparison as the verb shows it: its tables (with the breakdowns of ``by``) and notes, or
    one JSON document (``as_dict``; ``render_compare`` for CSV)."""

    compared: AgentComparison
    by: Sequence[str] = ()  # breakdowns the tables show (the JSON document holds them all)
    viewer_url: str | None = None  # where sopbench view serves both sides: each flip links to /compare

    # The parts of the comparison the tables name most.
    @property
    def a(self) -> Configuration:
        return self.compared.a

    @property
    def b(self) -> Configuration:
        return self.compared.b

    @property
    def result(self) -> PairedComparison:
        return self.compared.result

    def as_dict(self) -> dict[str, Any]:
        compared = self.compared
        out: dict[str, Any] = {
            "protocol": compared.protocol,
            "config_a": self.a.as_dict(),
            "config_b": self.b.as_dict(),
        }
        out.update(self.result.as_dict())
        out["floors"] = floors_json(compared.floors)
        out["breakdowns"] = {
            side: breakdowns(outcomes, ("judgement", "constraint"))
            for side, outcomes in (("a", compared.outcomes_a), ("b", compared.outcomes_b))
        }
        out["breakdowns"]["goal"] = self.by_goal()
        return out

    def by_goal(self) -> list[dict[str, Any]]:
        """The paired figures per (domain, goal): only runs with a partner, the unpaired beside."""
        return [
            {"domain": domain, "goal": goal, **rates.as_dict(), "unpaired_runs": unpaired}
            for (domain, goal), (rates, unpaired) in self.compared.by_goal().items()
        ]

    def tables(self) -> list[TextTable]:
        rates = TextTable(
            f"A = {self.a.label}, B = {self.b.label} (protocol {self.compared.protocol})",
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
        floors = floors_table(self.compared.floors, "the paired tasks")
        if floors is not None:
            tables.append(floors)
        if "goal" in self.by:
            tables.append(self._goal_table())
        others = [name for name in self.by if name != "goal"]
        sides = (("A", self.compared.outcomes_a, self.a), ("B", self.compared.outcomes_b, self.b))
        for side, outcomes, config in sides:
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
        for (domain, goal), (rates, unpaired) in self.compared.by_goal().items():
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
