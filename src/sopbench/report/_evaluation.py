"""``sopbench evaluate``: score trajectory files and read run folders to JSON lines, then the summary
per configuration and domain (never pooled over configurations)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sopbench.runner.baselines import Baselines, source_baselines
from sopbench.scoring import ARTEFACTS, Protocol, RunScore, ScoringReport, Summary, summarize
from sopbench.statistics import Configuration, Outcome, breakdown, summarize_usage

from ._breakdowns import breakdown_tables, usage_table
from ._cards import CardChoice
from ._floors import floors_json, floors_table
from ._leaderboard import floor_sources
from ._sources import score_files, scores_of_run_folders
from ._table import TextTable, records_without_trajectory, summary_table

Progress = Callable[[str], None]  # called with each file's (or run folder's) name once it is done
ProblemSink = Callable[[str], None]
Prices = Mapping[str, tuple[float, float]]


@dataclass
class ConfigurationReport:
    """The summary of one configuration: per domain and overall, breakdowns, tokens and latency."""

    configuration: Configuration
    summary: Summary
    outcomes: list[Outcome]
    prices: Prices | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            **self.configuration.as_dict(),
            "label": self.configuration.label,
            "domains": self.summary.as_dict(),
            "breakdowns": {by: breakdown(self.outcomes, by) for by in ("goal", "judgement", "constraint")},
        }
        usage = summarize_usage(self.outcomes, self.prices)
        if usage is not None:
            out["usage"] = usage.as_dict()
        return out


def configuration_reports(
    scores: Iterable[RunScore], prices: Prices | None = None
) -> list[ConfigurationReport]:
    """One report per configuration of ``scores``, in a fixed order."""
    groups: dict[Configuration, list[RunScore]] = {}
    for score in scores:
        groups.setdefault(score.config, []).append(score)
    ordered = sorted(groups, key=lambda c: (c.label, c.agent))
    return [
        ConfigurationReport(c, summarize(groups[c]), [s.outcome() for s in groups[c]], prices)
        for c in ordered
    ]


@dataclass
class EvaluationReport:
    """What ``evaluate_files`` scored: a summary per configuration and what was met besides scores."""

    protocol: str
    configurations: list[ConfigurationReport]
    scoring: ScoringReport
    justified: bool = False
    records_without_runs: list[tuple[str, int]] = field(default_factory=list)  # ("<domain>/<file>", record)
    from_run_folders: int = 0  # runs read from run folders (not in ``scoring``)
    by: Sequence[str] = ()  # breakdowns the tables show
    floors: Baselines | None = None  # refuse-all and no-verify on the sources' own tasks
    artefacts: dict[str, int] = field(default_factory=dict)  # verdicts per recording artefact met

    @property
    def runs_scored(self) -> int:
        return self.scoring.scored + self.from_run_folders

    def as_dict(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "report": {**self.scoring.as_dict(), "runs_from_run_folders": self.from_run_folders},
            "configurations": [c.as_dict() for c in self.configurations],
            "records_without_trajectory": [
                {"file": name, "record": index} for name, index in self.records_without_runs
            ],
            "floors": floors_json(self.floors),
            "artefacts": dict(self.artefacts),
        }

    def tables(self) -> list[TextTable]:
        out = []
        for item in self.configurations:
            runs = item.summary.overall.runs
            out.append(
                summary_table(
                    item.summary,
                    f"{item.configuration.label}: {runs} runs scored with protocol {self.protocol}",
                    justified=self.justified,
                )
            )
            out += breakdown_tables(item.outcomes, self.by, item.configuration.label)
            usage = summarize_usage(item.outcomes, item.prices)
            if usage is not None:
                out.append(usage_table(usage, item.configuration.label))
        floors = floors_table(self.floors, "the sources' own tasks")
        return out if floors is None else [*out, floors]

    def notes(self) -> list[str]:
        """Lines to print under the tables."""
        lines = [
            "failures by judgement count failed runs; a run can fail several judgements",
            "[lo-hi]: 95% interval whose unit is the task: Wilson's, clustered by task (effective number "
            "of tasks) when tasks ran several times (balanced: Newcombe's interval of the mean of the two rates)",
        ]
        for name, count in self.artefacts.items():
            lines.append(
                f"{count} verdicts account for a recording artefact, {name}: {ARTEFACTS.get(name, name)}"
            )
        named = records_without_trajectory(self.records_without_runs)
        return lines if named is None else [*lines, named]


def evaluate_files(
    files: Iterable[Path],
    protocol: Protocol,
    write: Callable[[RunScore], None],
    *,
    run_folders: Sequence[Path] = (),
    runs: str = "all",
    credit_cards: CardChoice | None = None,
    justify_refusal: bool = False,
    by: Sequence[str] = (),
    prices: Prices | None = None,
    progress: Progress | None = None,
    on_problem: ProblemSink | None = None,
) -> EvaluationReport:
    """Score every run of ``files`` (as listed by ``sopbench.traces.iter_trajectory_files``) and read
    the stored verdicts of ``run_folders``, hand each score to ``write`` as soon as it is made, and
    summarize per configuration. Problems (unreadable files, bad records, runs that cannot be
    scored, infra_error episodes) go to ``on_problem`` and the rest goes on."""
    scoring = ScoringReport()
    scores: list[RunScore] = []
    without_runs: list[tuple[str, int]] = []
    from_folders = 0
    for folder in run_folders:  # folder by folder: each one's lines are written once it is read
        for score in scores_of_run_folders(
            [folder], protocol, on_problem, progress=progress, first_runs_only=runs == "first"
        ):
            scores.append(score)
            write(score)
            from_folders += 1
    for _file, score in score_files(
        files,
        protocol,
        scoring,
        without_runs,
        runs=runs,
        credit_cards=credit_cards,
        justify_refusal=justify_refusal,
        progress=progress,
        on_problem=on_problem,
    ):
        scores.append(score)
        write(score)
    floors = None
    if scores:
        first_runs = [s for s in floor_sources(scores) if s.run == 0]
        # Beside the verdicts asked for, not one of them: a floor without its tasks says why in its
        # table, and is not a problem of the run.
        floors = source_baselines(first_runs, run_folders, protocol, justify_refusal=justify_refusal)
    artefacts = Counter(name for score in scores for name in score.artefacts)
    return EvaluationReport(
        floors=floors,
        artefacts=dict(sorted(artefacts.items())),
        protocol=str(protocol),
        configurations=configuration_reports(scores, prices),
        scoring=scoring,
        justified=justify_refusal,
        records_without_runs=without_runs,
        from_run_folders=from_folders,
        by=by,
    )
