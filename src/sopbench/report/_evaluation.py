"""``sopbench evaluate``'s summary as shown: per configuration and domain (never pooled over
configurations), the breakdowns asked for, tokens and latency, and the floors; as tables with
notes, or one JSON document. What it shows is computed by ``sopbench.results.evaluate``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sopbench.results import BREAKDOWN_ORDER, ConfigurationSummary, Evaluation, breakdowns
from sopbench.scoring import ARTEFACTS

from ._breakdowns import breakdown_tables, usage_table
from ._floors import floors_json, floors_table
from ._table import TextTable, records_without_trajectory, summary_table

__all__ = ["EvaluationReport", "configuration_json"]


def configuration_json(item: ConfigurationSummary) -> dict[str, Any]:
    """One configuration's summary as a JSON object: per domain, every breakdown, and usage."""
    out: dict[str, Any] = {
        **item.configuration.as_dict(),
        "label": item.configuration.label,
        "domains": item.summary.as_dict(),
        "breakdowns": breakdowns(item.outcomes, BREAKDOWN_ORDER),
    }
    usage = item.usage
    if usage is not None:
        out["usage"] = usage.as_dict()
    return out


@dataclass(frozen=True)
class EvaluationReport:
    """An evaluation as the verb shows it: one JSON document (``as_dict``), or its tables (with the
    breakdowns of ``by``) and the notes under them."""

    evaluation: Evaluation
    by: Sequence[str] = ()  # breakdowns the tables show (the JSON document holds them all)

    def as_dict(self) -> dict[str, Any]:
        evaluation = self.evaluation
        return {
            "protocol": evaluation.protocol,
            "report": {**evaluation.scoring.as_dict(), "runs_from_run_folders": evaluation.from_run_folders},
            "configurations": [configuration_json(c) for c in evaluation.configurations],
            "records_without_trajectory": [
                {"file": name, "record": index} for name, index in evaluation.records_without_runs
            ],
            "floors": floors_json(evaluation.floors),
            "artefacts": dict(evaluation.artefacts),
        }

    def tables(self) -> list[TextTable]:
        out = []
        for item in self.evaluation.configurations:
            runs = item.summary.overall.runs
            out.append(
                summary_table(
                    item.summary,
                    f"{item.configuration.label}: {runs} runs scored with protocol {self.evaluation.protocol}",
                    justified=self.evaluation.justified,
                )
            )
            out += breakdown_tables(item.outcomes, self.by, item.configuration.label)
            usage = item.usage
            if usage is not None:
                out.append(usage_table(usage, item.configuration.label))
        floors = floors_table(self.evaluation.floors, "the sources' own tasks")
        return out if floors is None else [*out, floors]

    def notes(self) -> list[str]:
        """Lines to print under the tables."""
        lines = [
            "failures by judgement count failed runs; a run can fail several judgements",
            "[lo-hi]: 95% interval whose unit is the task: Wilson's, clustered by task (effective number "
            "of tasks) when tasks ran several times (balanced: Newcombe's interval of the mean of the two rates)",
        ]
        for name, count in self.evaluation.artefacts.items():
            lines.append(
                f"{count} verdicts account for a recording artefact, {name}: {ARTEFACTS.get(name, name)}"
            )
        named = records_without_trajectory(self.evaluation.records_without_runs)
        return lines if named is None else [*lines, named]
