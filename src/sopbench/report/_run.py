"""``sopbench run``: the summary of a run folder, beside the two trivial baselines on the same tasks."""

from __future__ import annotations

from collections.abc import Mapping
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

    @property
    def protocol(self) -> Mapping[str, ProtocolKept]: ...


class ProtocolKept(Protocol):
    """How the agent kept the protocol in a domain (``sopbench.runner.ProtocolCounts``)."""

    passed: int
    passed_by_default: int
    protocol_breaks: int
    malformed_calls: int


# Appended to the per-domain table: passes in which the agent made no well-formed action (of all
# passes), replies that broke the text protocol (react, act-only), malformed tool calls.
PROTOCOL_COLUMNS = ["passed by default", "protocol breaks", "malformed calls"]


def run_tables(report: RunResult, agent: str) -> list[TextTable]:
    """The per-domain table of the agent's scored episodes, then the agent next to the baselines."""
    title = (
        f"{agent}: {report.completed} of {report.episodes} episodes scored (sound protocol), "
        f"{report.ran} run now, {report.skipped} already stored"
    )
    table = summary_table(report.summary, title)
    table.columns = [*table.columns, *PROTOCOL_COLUMNS]
    for row in table.rows:
        kept = report.protocol.get(row[0])
        row += (
            ["-"] * 3
            if kept is None
            else [
                f"{kept.passed_by_default}/{kept.passed}",
                str(kept.protocol_breaks),
                str(kept.malformed_calls),
            ]
        )
    tables = [table]
    if report.baselines:
        side = TextTable(
            "next to the two trivial baselines on the same tasks (first run)",
            ["agent", "episodes", "pass rate", "must succeed", "must refuse", "balanced"],
        )
        for name, summary in [(agent, report.summary), *report.baselines.items()]:
            side.add_row([name, *rate_cells(summary.overall)])
        tables.append(side)
    if report.usage is not None:
        tables.append(usage_table(report.usage, agent))
    return tables
