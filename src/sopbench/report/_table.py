"""A plain table that prints as a rich table on a terminal and as markdown anywhere else.

Rich tables shrink to the terminal (80 columns when there is none) and cut cells with an ellipsis;
piped or written to a file, every table is therefore plain markdown, full width.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sopbench.scoring import DomainSummary, Summary


@dataclass
class TextTable:
    """Columns and rows of text cells; columns of numbers are right-aligned."""

    title: str
    columns: Sequence[str]
    rows: list[list[str]] = field(default_factory=list)
    bold_rows: set[int] = field(default_factory=set)  # indexes of rows shown in bold (totals)

    def add_row(self, cells: Sequence[str], *, bold: bool = False) -> None:
        if bold:
            self.bold_rows.add(len(self.rows))
        self.rows.append([str(cell) for cell in cells])

    def _numeric(self, index: int) -> bool:
        """Right-aligned: a column (not the first) whose cells hold no letters (counts, rates)."""
        return index > 0 and not any(any(c.isalpha() for c in row[index]) for row in self.rows)

    def markdown(self) -> str:
        lines = [f"{self.title}", ""] if self.title else []
        lines.append("| " + " | ".join(self.columns) + " |")
        lines.append(
            "|" + "|".join("--:" if self._numeric(i) else "---" for i in range(len(self.columns))) + "|"
        )
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in self.rows]
        return "\n".join(lines) + "\n"

    def rich(self) -> Table:
        table = Table(title=escape(self.title) if self.title else None)
        for index, column in enumerate(self.columns):
            table.add_column(escape(column), justify="right" if self._numeric(index) else "left")
        for index, row in enumerate(self.rows):
            table.add_row(*(escape(cell) for cell in row), style="bold" if index in self.bold_rows else None)
        return table

    def print(self, console: Console) -> None:
        """Rich on a terminal (it fits the screen), markdown otherwise (never truncated)."""
        if console.is_terminal:
            console.print(self.rich())
        else:
            console.print(self.markdown(), markup=False, highlight=False, soft_wrap=True, end="")


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"


def rate_text(passed: int, total: int) -> str:
    return "-" if not total else f"{100 * passed / total:.2f}% ({passed}/{total})"


def records_without_trajectory(
    pairs: Sequence[tuple[str, int]], *, files_shown: int = 20, not_done: str = "not scored"
) -> str | None:
    """One line naming records that hold no run, grouped by file: ``None`` when there are none.

    ``not_done`` says what the verb could not do with them."""
    if not pairs:
        return None
    by_file: dict[str, list[int]] = {}
    for name, index in pairs:
        by_file.setdefault(name, []).append(index)
    parts = []
    for name, indexes in list(by_file.items())[:files_shown]:
        shown = ", ".join(str(i) for i in indexes[:10]) + (", ..." if len(indexes) > 10 else "")
        parts.append(f"{name}: {len(indexes)} (records {shown})")
    more = f"; and {len(by_file) - files_shown} more files" if len(by_file) > files_shown else ""
    return f"{len(pairs)} records have no trajectory ({not_done}): " + "; ".join(parts) + more


JUDGEMENTS = ("database", "permission", "procedure")


def rate_cells(domain: DomainSummary) -> list[str]:
    """The cells every summary row starts with: runs, pass rate, the rates on tasks that must
    succeed and must be refused, and their balanced mean."""
    return [
        str(domain.runs),
        percent(domain.pass_rate),
        rate_text(*domain.should_succeed),
        rate_text(*domain.should_refuse),
        percent(domain.balanced),
    ]


def summary_table(
    summary: Summary, title: str, *, justified: bool = False, first: str = "domain"
) -> TextTable:
    """The per-domain summary every scoring verb prints (evaluate, run): pass rate, the rates on
    tasks that must succeed and must be refused, their balanced mean, failures by judgement."""
    columns = [first, "runs", "pass rate", "must succeed", "must refuse", "balanced", *JUDGEMENTS]
    table = TextTable(title, columns + (["justified refusals"] if justified else []))
    for name, domain in summary.domains.items():
        row = [
            name,
            *rate_cells(domain),
            *(str(domain.failures.get(judgement, 0)) for judgement in JUDGEMENTS),
        ]
        if justified:
            rate = domain.justified_refusal_rate
            row.append("-" if rate is None else rate_text(rate.passed, rate.total))
        table.add_row(row, bold=name == "all")
    return table
