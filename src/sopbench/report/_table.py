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
from sopbench.statistics import wilson_interval


@dataclass
class TextTable:
    """Columns and rows of text cells; columns of numbers are right-aligned."""

    title: str
    columns: Sequence[str]
    rows: list[list[str]] = field(default_factory=list)
    bold_rows: set[int] = field(default_factory=set)  # indexes of rows shown in bold (totals)
    caption: str = ""  # printed under the table (what its columns mean)

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
        if self.caption:
            lines += ["", self.caption]
        return "\n".join(lines) + "\n"

    def rich(self) -> Table:
        table = Table(
            title=escape(self.title) if self.title else None,
            caption=escape(self.caption) if self.caption else None,
            caption_justify="left",
        )
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


def interval_text(interval: tuple[float, float] | None) -> str:
    """A 95% interval, compactly: ``[35.4-58.8]`` (percent, one decimal); "" when there is none."""
    return "" if interval is None else f"[{100 * interval[0]:.1f}-{100 * interval[1]:.1f}]"


def rate_text(passed: int, total: int, ci95: tuple[float, float] | None = None) -> str:
    """``46.97% (31/66) [35.4-58.8]``: the rate, its count and its 95% interval (``ci95``, clustered
    by task when given; else Wilson's over the counts)."""
    if not total:
        return "-"
    interval = ci95 if ci95 is not None else wilson_interval(passed, total)
    return f"{100 * passed / total:.2f}% ({passed}/{total}) {interval_text(interval)}"


def percent_with_interval(value: float | None, interval: tuple[float, float] | None) -> str:
    return "-" if value is None else f"{percent(value)} {interval_text(interval)}".rstrip()


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


def rate_cells(domain: DomainSummary, *, wide: bool = True) -> list[str]:
    """The cells every summary row starts with: runs, pass rate, the rates on tasks that must
    succeed and must be refused, and their balanced mean. ``wide``: each with its count and 95%
    interval; else the pass rate with its interval, the others bare (so that a table of the longest
    domain name, pass^k and the failures fits 100 columns)."""
    if wide:
        return [
            str(domain.runs),
            percent_with_interval(domain.pass_rate, domain.pass_rate_ci95),
            rate_text(domain.succeed_rate.passed, domain.succeed_rate.total, domain.succeed_rate.ci95),
            rate_text(domain.refuse_rate.passed, domain.refuse_rate.total, domain.refuse_rate.ci95),
            percent_with_interval(domain.balanced, domain.balanced_ci95),
        ]
    return [
        str(domain.runs),
        short_rate(domain.pass_rate, domain.pass_rate_ci95),
        short_rate(domain.succeed_rate.rate, None),
        short_rate(domain.refuse_rate.rate, None),
        short_rate(domain.balanced, None),
    ]


def short_rate(value: float | None, interval: tuple[float, float] | None) -> str:
    """``47.0 [35-59]``: a percentage and its 95% interval rounded to whole points (narrow tables)."""
    if value is None:
        return "-"
    text = f"{100 * value:.1f}"
    return text if interval is None else f"{text} [{100 * interval[0]:.0f}-{100 * interval[1]:.0f}]"


def pass_hat_text(domain: DomainSummary, *, wide: bool = True) -> str:
    """pass^K at the most runs K every task of the row has, e.g. ``pass^3 27.27% (44 tasks)``
    (narrow: ``^3 27.3``)."""
    repeated = domain.repeated
    if repeated.max_runs < 2:
        return "-"
    k = max(repeated.pass_hat_k)
    if not wide:
        return f"^{k} {100 * repeated.pass_hat_k[k]:.1f}"
    return f"pass^{k} {percent(repeated.pass_hat_k[k])} ({repeated.tasks_with_k[k]} tasks)"


def summary_table(
    summary: Summary, title: str, *, justified: bool = False, first: str = "domain", wide: bool = True
) -> TextTable:
    """The per-domain summary every scoring verb prints (evaluate, run): pass rate (and pass^k next
    to it when tasks have several runs), the rates on tasks that must succeed and must be refused,
    their balanced mean, failures by judgement. ``wide``: every rate with its count and 95% interval
    and a column per judgement; else short cells that fit 100 columns (the caption says which)."""
    repeated = any(domain.repeated.max_runs >= 2 for domain in summary.domains.values())
    if wide:
        columns = [first, "runs", "pass rate", *(["pass^k"] if repeated else [])]
        columns += ["must succeed", "must refuse", "balanced", *JUDGEMENTS]
        caption = f"{' / '.join(JUDGEMENTS)}: failed runs per judgement"
    else:
        columns = [first, "runs", "pass %", *(["pass^k %"] if repeated else [])]
        columns += ["succeed %", "refuse %", "balanced", "failed"]
        caption = (
            "pass % with its 95% interval; succeed / refuse: pass % on the tasks that must succeed / be "
            "refused; balanced: their mean; failed: runs failed by the database / permission / procedure "
            "judgement; --wide shows every count and interval"
        )
    table = TextTable(title, columns + (["justified refusals"] if justified else []), caption=caption)
    for name, domain in summary.domains.items():
        cells = rate_cells(domain, wide=wide)
        if repeated:
            cells.insert(2, pass_hat_text(domain, wide=wide))
        failures = [str(domain.failures.get(judgement, 0)) for judgement in JUDGEMENTS]
        row = [name, *cells, *(failures if wide else ["/".join(failures)])]
        if justified:
            rate = domain.justified_refusal_rate
            row.append("-" if rate is None else rate_text(rate.passed, rate.total))
        table.add_row(row, bold=name == "all")
    return table
