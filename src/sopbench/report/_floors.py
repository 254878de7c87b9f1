"""The floors (refuse-all, no-verify) beside a verb's own figures: one table, one JSON shape.

Played by the runner's baselines, on the sources' own tasks, when ``sopbench.results`` computes a
verb's figures; shown here by ``evaluate`` (beside each configuration) and ``compare`` (on the
paired tasks)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only read here: the floors are played by the runner, for sopbench.results
    from sopbench.runner.baselines import Baselines

from ._table import TextTable, rate_cells

__all__ = ["floors_json", "floors_table"]


def floors_json(baselines: Baselines | None) -> dict[str, Any] | None:
    """``{"refuse-all": summary, "no-verify": summary}`` or ``{"unavailable": why}`` (None: not played)."""
    if baselines is None:
        return None
    if baselines.unavailable is not None:
        return {"unavailable": baselines.unavailable}
    return {name: summary.overall.as_dict() for name, summary in baselines.summaries().items()}


def floors_table(baselines: Baselines | None, where: str) -> TextTable | None:
    """The floors' overall rates (first run), or the reason they have none."""
    if baselines is None:
        return None
    table = TextTable(
        f"floors on {where} (first run)",
        ["agent", "episodes", "pass rate", "must succeed", "must refuse", "balanced"],
    )
    if baselines.unavailable is not None:
        table.add_row(["refuse-all, no-verify", f"no figure: {baselines.unavailable}", "", "", "", ""])
        return table
    for name, summary in baselines.summaries().items():
        table.add_row([name, *rate_cells(summary.overall)])
    return table
