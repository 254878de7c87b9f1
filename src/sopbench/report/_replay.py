"""``sopbench replay``: re-execute recorded calls, one JSON line per run, counts per domain."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sopbench.replay import ReplaySummary, RunReplay, replay_paths
from sopbench.traces import Record

from ._table import TextTable, records_without_trajectory

REPLAY_COLUMNS = [
    "domain",
    "runs",
    "misaligned_runs",
    "tool_outputs",
    "tool_outputs_matching",
    "tool_outputs_matching_pct",
    "final_databases_matching",
    "final_databases_matching_pct",
]


@dataclass
class ReplayReport:
    files: int
    summary: ReplaySummary
    runs: int
    records_without_runs: list[tuple[str, int]] = field(default_factory=list)  # ("<domain>/<file>", record)

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "domains": self.summary.rows(),
            "records_without_trajectory": [
                {"file": name, "record": index} for name, index in self.records_without_runs
            ],
        }

    def notes(self) -> list[str]:
        named = records_without_trajectory(self.records_without_runs, not_done="not replayed")
        return [] if named is None else [named]

    def table(self) -> TextTable:
        table = TextTable(f"replay of {self.files} files", [c.replace("_", " ") for c in REPLAY_COLUMNS])
        for row in self.summary.rows():
            table.add_row(
                ["-" if row[c] is None else str(row[c]) for c in REPLAY_COLUMNS], bold=row["domain"] == "all"
            )
        return table


def replay_files(
    files: Iterable[Path],
    write: Callable[[RunReplay], None],
    *,
    progress: Callable[[str], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
) -> ReplayReport:
    """Replay every run of ``files``, hand each replay to ``write``, and count per domain."""
    summary = ReplaySummary()
    files = list(files)
    runs = 0
    pending: list[str] = []
    without_runs: list[tuple[str, int]] = []

    def started(path: Path) -> None:
        # replay_paths announces a file before replaying it: the previous one is then done.
        if pending and progress is not None:
            progress(pending.pop())
        pending.append(f"{path.parent.name}/{path.name}")

    def without_trajectory(record: Record) -> None:
        without_runs.append((pending[-1], record.index))

    for result in replay_paths(
        files,
        on_error=(lambda error: on_problem(str(error))) if on_problem else None,
        on_file=started,
        on_record_without_runs=without_trajectory,
    ):
        summary.add(result)
        runs += 1
        write(result)
    if pending and progress is not None:
        progress(pending.pop())
    return ReplayReport(files=len(files), summary=summary, runs=runs, records_without_runs=without_runs)
