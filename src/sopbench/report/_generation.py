"""``sopbench generate``: the coverage of each generated domain, as one table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._table import TextTable

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
