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
    """How the agent kept the protocol in a domain (``sopbench.runner.frontend.ProtocolCounts``)."""

    passed: int
    passed_by_default: int
    protocol_breaks: int
    malformed_calls: int


# Appended to the per-domain table: passes in which the agent made no well-formed action (of all
# passes), replies that broke the text protocol (react, act-only), malformed tool calls.
PROTOCOL_COLUMNS = ["passed by default", "protocol breaks", "malformed calls"]


def protocol_cells(kept: ProtocolKept | None) -> list[str]:
    if kept is None:
        return ["-"] * len(PROTOCOL_COLUMNS)
    return [f"{kept.passed_by_default}/{kept.passed}", str(kept.protocol_breaks), str(kept.malformed_calls)]


def run_tables(report: RunResult, agent: str, *, wide: bool = False) -> list[TextTable]:
    """The per-domain table of the agent's scored episodes, then the agent (``agent``: its model,
    or the agent's name) next to the baselines. Narrow (100 columns) unless ``wide``; each table's
    caption, printed under it, says what its cells are."""
    title = (
        f"{agent}: {report.completed} of {report.episodes} episodes scored (sound protocol), "
        f"{report.ran} run now, {report.skipped} already stored"
    )
    table = summary_table(report.summary, title, wide=wide)
    kept_rows = [[row[0], *protocol_cells(report.protocol.get(row[0]))] for row in table.rows]
    if wide:
        table.columns = [*table.columns, *PROTOCOL_COLUMNS]
        for row, kept in zip(table.rows, kept_rows, strict=True):
            row += kept[1:]
        tables = [table]
    else:  # beside the rates they would take the table past 100 columns: a table of their own
        kept_table = TextTable(
            f"{agent}: how it kept the protocol",
            ["domain", *PROTOCOL_COLUMNS],
            caption="passed by default: passes with no well-formed action, of all passes; protocol breaks: "
            "replies that broke the text protocol (react, act-only); malformed calls: tool calls that could "
            "not be read",
        )
        for kept in kept_rows:
            kept_table.add_row(kept, bold=kept[0] == "all")
        tables = [table, kept_table]
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
