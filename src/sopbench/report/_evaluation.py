"""``sopbench evaluate``: score trajectory files to JSON lines, then the summary per domain."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sopbench.scoring import Protocol, RunScore, ScoringReport, Summary, score_paths, summarize

from ._cards import CardChoice
from ._table import TextTable, records_without_trajectory, summary_table

Progress = Callable[[str], None]  # called with each file's name once it is done
ProblemSink = Callable[[str], None]


@dataclass
class EvaluationReport:
    """What ``evaluate_files`` scored: the summary per domain and what was met besides scores."""

    protocol: str
    summary: Summary
    scoring: ScoringReport
    justified: bool = False
    records_without_runs: list[tuple[str, int]] = field(default_factory=list)  # ("<domain>/<file>", record)

    @property
    def runs_scored(self) -> int:
        return self.scoring.scored

    def as_dict(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "report": self.scoring.as_dict(),
            "domains": self.summary.as_dict(),
            "records_without_trajectory": [
                {"file": name, "record": index} for name, index in self.records_without_runs
            ],
        }

    def table(self) -> TextTable:
        return summary_table(
            self.summary,
            f"{self.runs_scored} runs scored with protocol {self.protocol}",
            justified=self.justified,
        )

    def notes(self) -> list[str]:
        """Lines to print under the table."""
        lines = ["failures by judgement count failed runs; a run can fail several judgements"]
        named = records_without_trajectory(self.records_without_runs)
        return lines if named is None else [*lines, named]


def evaluate_files(
    files: Iterable[Path],
    protocol: Protocol,
    write: Callable[[RunScore], None],
    *,
    runs: str = "all",
    credit_cards: CardChoice | None = None,
    justify_refusal: bool = False,
    progress: Progress | None = None,
    on_problem: ProblemSink | None = None,
) -> EvaluationReport:
    """Score every run of ``files`` (as listed by ``sopbench.traces.iter_trajectory_files``), hand
    each score to ``write`` as soon as it is made, and summarize. Problems (unreadable files, bad
    records, runs that cannot be scored) go to ``on_problem`` and the rest goes on."""
    scoring = ScoringReport()
    scores: list[RunScore] = []
    without_runs: list[tuple[str, int]] = []
    for file in files:
        before, before_empty = len(scoring.errors), len(scoring.records_without_runs)
        for score in score_paths(
            [file],
            protocol,
            report=scoring,
            credit_cards=credit_cards,
            runs=runs,
            justify_refusal=justify_refusal,
        ):
            scores.append(score)
            write(score)
        if on_problem is not None:
            for problem in scoring.errors[before:]:
                on_problem(problem)
        label = f"{file.parent.name}/{file.name}"
        without_runs += [(label, index) for _name, index in scoring.records_without_runs[before_empty:]]
        if progress is not None:
            progress(label)
    return EvaluationReport(
        protocol=str(protocol),
        summary=summarize(scores),
        scoring=scoring,
        justified=justify_refusal,
        records_without_runs=without_runs,
    )
