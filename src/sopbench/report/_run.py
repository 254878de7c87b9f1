"""``sopbench run``: the summary of a run folder, beside the two trivial baselines on the same tasks."""

from __future__ import annotations

from typing import Protocol

from sopbench.scoring import Summary
from sopbench.statistics import UsageSummary

from ._breakdowns import usage_table
from ._table import TextTable, rate_cells, summary_table


class RunResult(Protocol):
    """What ``sopbench.runner.run`` reports (only what the tables show)."""

    episodes: int
    completed: int
    ran: int
    skipped: int
    infra_errors: int
    summary: Summary
    baselines: dict[str, Summary]
    usage: UsageSummary | None


def run_tables(report: RunResult, agent: str, *, wide: bool = False) -> list[TextTable]:
    """The per-domain table of the agent's scored episodes, then the agent (``agent``: its model,
    or the agent's name) next to the baselines. Narrow (100 columns) unless ``wide``; each table's
    caption, printed under it, says what its cells are."""
    title = (
        f"{agent}: {report.completed} of {report.episodes} episodes scored (sound protocol), "
        f"{report.ran} run now, {report.skipped} already stored"
    )
    tables = [summary_table(report.summary, title, wide=wide)]
    if report.baselines:
        columns = ["agent", "episodes", "pass rate", "must succeed", "must refuse", "balanced"]
        side = TextTable(
            "next to the two trivial baselines on the same tasks (first run)",
            columns if wide else ["agent", "episodes", "pass %", "succeed %", "refuse %", "balanced"],
            caption="" if wide else "succeed / refuse: pass % on the tasks that must succeed / be refused",
        )
        for name, summary in [(agent, report.summary), *report.baselines.items()]:
            side.add_row([name, *rate_cells(summary.overall, wide=wide)])
        tables.append(side)
    if report.usage is not None:
        tables.append(usage_table(report.usage, agent))
    return tables
