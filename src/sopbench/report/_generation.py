"""``sopbench generate``: the coverage of each generated domain, as one table, and what could not be made."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._table import TextTable

if TYPE_CHECKING:  # only generate reads it: the other verbs do not load the generator
    from sopbench.generation import Generated

COMPARISON_COLUMNS = {
    "published combos": "covered_by_published",
    "ours": "covered_by_generated",
    "both": "covered_by_both",
    "published only": "published_only",
}


def generation_table(reports: Sequence[Mapping[str, Any]], *, compared: bool) -> TextTable:
    """One row per domain (a coverage report of ``sopbench.generation``); with ``compared``, how its
    combinations line up with the published task file's."""
    columns = ["domain", "goals", "variants", "assignments", "realised", "tasks", "must succeed", "seconds"]
    table = TextTable(
        "generated tasks (all verified on the strict oracle)",
        columns + (list(COMPARISON_COLUMNS) if compared else []),
    )
    for report in reports:
        row = [
            str(report[key]) for key in ("domain", "goals", "variants", "assignments", "realised", "tasks")
        ]
        row += [str(report["must_succeed"]), f"{report['seconds']:.1f}"]
        if compared:
            comparison = report.get("comparison")
            row += [str(comparison[key]) if comparison else "-" for key in COMPARISON_COLUMNS.values()]
        table.add_row(row)
    return table


@dataclass
class GenerationSummary:
    """What ``sopbench generate`` made: one coverage report per domain (without its combinations or
    comparison rows, which the coverage file holds), the combinations it could not realise and the
    ones excluded by design."""

    domains: list[dict[str, Any]]
    compared: bool

    @property
    def tasks(self) -> int:
        return sum(report["tasks"] for report in self.domains)

    @property
    def unrealisable(self) -> list[str]:
        """One line per combination that should have been realised and was not, with its reason."""
        return [
            f"{report['domain']} {u['goal']} variant {u['variant']} (must {_outcome(u)}): {u['reason']}"
            for report in self.domains
            for u in report["unrealisable"]
        ]

    def as_dict(self) -> dict[str, Any]:
        return {"domains": self.domains}

    def table(self) -> TextTable:
        return generation_table(self.domains, compared=self.compared)

    def notes(self) -> list[str]:
        notes = [
            f"excluded by design: {report['domain']} {u['goal']} variant {u['variant']} (must {_outcome(u)}): "
            "refused only for a hidden prerequisite"
            for report in self.domains
            for u in report["excluded"]
        ]
        made = sum(report["hidden_prerequisite_tasks"] for report in self.domains)
        if made:
            notes.append(f"{made} tasks refused only for a hidden prerequisite were made on request (marked)")
        return notes


def summarise_generation(done: Sequence[Generated], *, compared: bool) -> GenerationSummary:
    """The summary of ``sopbench.generation.generate``'s result (``compared``: a published task set
    was compared with)."""
    reports = []
    for item in done:
        report = item.result.report.as_dict()
        report.pop("combinations")
        if item.comparison is not None:
            comparison = item.comparison.as_dict()
            comparison.pop("rows")
            report["comparison"] = comparison
        report["tasks_file"] = str(item.tasks_file)
        reports.append(report)
    return GenerationSummary(reports, compared)


def _outcome(combination: Mapping[str, Any]) -> str:
    return "succeed" if combination["outcome"] else "fail"
