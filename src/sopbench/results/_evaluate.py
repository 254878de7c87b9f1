"""Evaluation: score trajectory files and read run folders, each score handed on as soon as it is
made, then the summary per configuration and domain (never pooled over configurations)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from sopbench.runner.baselines import Baselines
from sopbench.scoring import RunScore, ScoringReport, Summary, summarize
from sopbench.statistics import Configuration, Outcome, UsageSummary, summarize_usage

from ._floors import floor_sources, floors_beside
from ._options import Prices, ScoringOptions
from ._sources import Sources, score_files, scores_of_run_folders

__all__ = ["ConfigurationSummary", "Evaluation", "configuration_summaries", "evaluate"]

Progress = Callable[[str], None]  # called with each file's (or run folder's) name once it is done
ProblemSink = Callable[[str], None]


@dataclass(frozen=True)
class ConfigurationSummary:
    """One configuration: per domain and overall, the outcomes of its runs, and their prices."""

    configuration: Configuration
    summary: Summary
    outcomes: list[Outcome]
    prices: Prices | None = None

    @property
    def usage(self) -> UsageSummary | None:
        """Tokens, latency and (with prices) cost of its live episodes; None when it has none."""
        return summarize_usage(self.outcomes, self.prices)


def configuration_summaries(
    scores: Iterable[RunScore], prices: Prices | None = None
) -> list[ConfigurationSummary]:
    """One summary per configuration of ``scores``, in a fixed order."""
    groups: dict[Configuration, list[RunScore]] = {}
    for score in scores:
        groups.setdefault(score.config, []).append(score)
    ordered = sorted(groups, key=lambda c: (c.label, c.agent))
    return [
        ConfigurationSummary(c, summarize(groups[c]), [s.outcome() for s in groups[c]], prices)
        for c in ordered
    ]


@dataclass(frozen=True)
class Evaluation:
    """What ``evaluate`` scored: a summary per configuration, the floors on the sources' own tasks,
    and what was met besides scores."""

    protocol: str
    configurations: list[ConfigurationSummary]
    scoring: ScoringReport  # files, records and runs scored, and every problem met in them
    justified: bool = False
    records_without_runs: list[tuple[str, int]] = field(default_factory=list)  # ("<domain>/<file>", record)
    from_run_folders: int = 0  # runs read from run folders (not in ``scoring``)
    floors: Baselines | None = None  # refuse-all and no-verify on the sources' own tasks
    artefacts: dict[str, int] = field(default_factory=dict)  # verdicts per recording artefact met

    @property
    def runs_scored(self) -> int:
        return self.scoring.scored + self.from_run_folders


def scored_runs(
    sources: Sources,
    options: ScoringOptions,
    scoring: ScoringReport,
    without_runs: list[tuple[str, int]],
    *,
    progress: Progress | None = None,
    on_problem: ProblemSink | None = None,
) -> Iterator[tuple[RunScore, bool]]:
    """Every score ``evaluate`` makes, in its order, each with whether it was read from a run folder
    (True) or scored from a trajectory file; what scoring met is added to ``scoring`` and
    ``without_runs``. The one loop of ``evaluate``, for what needs the scores and not the summaries
    (the episodes frame)."""
    for folder in sources.run_folders:  # folder by folder: each one's lines are written once it is read
        for score in scores_of_run_folders(
            [folder], options.protocol, on_problem, progress=progress, first_runs_only=options.first_runs_only
        ):
            yield score, True
    for _file, score in score_files(
        sources.files, options, scoring, without_runs, progress=progress, on_problem=on_problem
    ):
        yield score, False


def evaluate(
    sources: Sources,
    options: ScoringOptions,
    write: Callable[[RunScore], None] | None = None,
    *,
    progress: Progress | None = None,
    on_problem: ProblemSink | None = None,
) -> Evaluation:
    """Read the stored verdicts of ``sources.run_folders`` (folder by folder) and score every run of
    ``sources.files``, hand each score to ``write`` as soon as it is made, and summarize per
    configuration. Problems (unreadable files, bad records, runs that cannot be scored, infra_error
    episodes) go to ``on_problem`` and the rest goes on; a run folder that cannot be read raises
    ``RunFolderError``."""
    scoring = ScoringReport()
    scores: list[RunScore] = []
    without_runs: list[tuple[str, int]] = []
    from_folders = 0
    for score, from_folder in scored_runs(
        sources, options, scoring, without_runs, progress=progress, on_problem=on_problem
    ):
        scores.append(score)
        if write is not None:
            write(score)
        from_folders += from_folder
    floors = None
    if scores:
        first_runs = [s for s in floor_sources(scores) if s.run == 0]
        # Beside the verdicts asked for, not one of them: a floor without its tasks says why in its
        # table, and is not a problem of the run.
        floors = floors_beside(first_runs, sources, options)
    artefacts = Counter(name for score in scores for name in score.artefacts)
    return Evaluation(
        protocol=str(options.protocol),
        configurations=configuration_summaries(scores, options.prices),
        scoring=scoring,
        justified=options.justify_refusal,
        records_without_runs=without_runs,
        from_run_folders=from_folders,
        floors=floors,
        artefacts=dict(sorted(artefacts.items())),
    )
