"""``sopbench diagnose``: the evaluator's self-check on constructed traces with known verdicts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sopbench.diagnosis import diagnose_tasks
from sopbench.evaluation import diagnostic
from sopbench.tasks import Task, load_tasks, task_file

from ._table import TextTable


@dataclass
class DiagnosisReport:
    """Counts over the built-in SOP and, when asked for, over published tasks."""

    seed: int
    builtin: dict[str, Any]
    over_tasks: dict[str, Any] | None = None

    @property
    def surprises(self) -> list[str]:
        return list(self.over_tasks["surprises"]) if self.over_tasks else []

    def as_dict(self) -> dict[str, Any]:
        return (
            {**self.builtin, "tasks": self.over_tasks} if self.over_tasks is not None else dict(self.builtin)
        )

    def tables(self) -> list[TextTable]:
        tables = [_kinds(f"built-in SOP, seed {self.seed} (traces {self.builtin['digest']})", self.builtin)]
        if self.over_tasks is not None:
            tables.append(_kinds(f"published tasks, seed {self.seed}", self.over_tasks))
        return tables

    def notes(self) -> list[str]:
        if self.over_tasks is None:
            return []
        return [
            f"{len(self.over_tasks['unreachable_goals'])} tasks skipped: their goal is never offered to an agent; "
            f"{len(self.over_tasks['unverifiable_tasks'])} tasks no agent can verify (see --json)"
        ]


def _kinds(title: str, totals: dict[str, Any]) -> TextTable:
    columns = ["fixtures", "accepted", "rejected"] + (["unexpected"] if "unexpected" in totals else [])
    table = TextTable(title, ["kind", *columns])
    for kind, counts in totals["kinds"].items():
        table.add_row([kind, *(str(counts[c]) for c in columns)])
    table.add_row(["total", *(str(totals[c]) for c in columns)], bold=True)
    return table


def load_domain_tasks(tasks_dir: Path, domains: list[str]) -> list[Task]:
    """The tasks of each domain's task file in ``tasks_dir`` (raises ``LoadError``)."""
    return [task for domain in domains for task in load_tasks(task_file(tasks_dir, domain), domain=domain)]


def run_diagnosis(
    seed: int,
    *,
    per_kind: int = 5,
    tasks: list[Task] | None = None,
    progress: Callable[[str], None] | None = None,
) -> DiagnosisReport:
    """The built-in self-check (raises ``DiagnosticFailure`` on a surprise) and, with ``tasks``, the
    reference traces and mutants over them (surprises are counted, not raised)."""
    builtin = diagnostic(seed, per_kind=per_kind)
    over_tasks = None
    if tasks is not None:
        diagnosis = diagnose_tasks(
            tasks, seed=seed, progress=(lambda task: progress(task.goal)) if progress else None
        )
        over_tasks = diagnosis.as_dict()
    return DiagnosisReport(seed, builtin, over_tasks)
