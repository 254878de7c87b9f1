"""Figures over many scores: per-domain summaries, the refuse-all baseline, the leaderboard, and the
side-by-side comparison of the two protocols with the effect of every quirk."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sopbench._io import StrPath
from sopbench.statistics import RateInterval, RepeatedRuns, balanced_interval, repeated_runs, wilson_interval
from sopbench.tasks import Task
from sopbench.traces import (
    PUBLISHED_CHECKS,
    Message,
    Record,
    Run,
    Setup,
    parse_trajectory_file_name,
    read_trajectory_file,
)
from sopbench.traces import iter_trajectory_files as _files

from ._api import RunScore, ScoringError, score_run
from ._protocol import QUIRKS, SOPBENCH, SOUND, Protocol

__all__ = [
    "ALL_DOMAINS",
    "Comparison",
    "DomainSummary",
    "LeaderboardCell",
    "LeaderboardRow",
    "Rate",
    "Summary",
    "compare",
    "leaderboard",
    "refuse_all_baseline",
    "refuse_all_record",
    "refuse_all_scores",
    "summarize",
]

ALL_DOMAINS = "all"
JUDGEMENTS = ("database", "permission", "procedure")


# A rate with its count and 95% Wilson interval (``as_dict`` gives passed, total, rate, ci95).
Rate = RateInterval

# Published checks a correct refusal is not expected to pass: it calls no goal, so counting it as a
# failure of ``action_successfully_called`` would count every correct refusal.
_ONLY_WHEN_SHOULD_SUCCEED = frozenset({"action_successfully_called"})


@dataclass
class DomainSummary:
    """Runs of one domain (or of all, ``domain == "all"``)."""

    domain: str
    runs: int = 0
    passed: int = 0
    failures: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys((*JUDGEMENTS, *PUBLISHED_CHECKS[:-1]), 0)
    )
    should_succeed: list[int] = field(default_factory=lambda: [0, 0])  # passed, runs
    should_refuse: list[int] = field(default_factory=lambda: [0, 0])
    justified: list[int] = field(default_factory=lambda: [0, 0])  # justified refusals, refusal runs judged
    task_runs: dict[str, list[tuple[int, bool]]] = field(default_factory=dict, repr=False)
    _repeated: RepeatedRuns | None = field(default=None, repr=False, compare=False)

    def add(self, score: RunScore) -> None:
        self._repeated = None
        self.runs += 1
        self.passed += score.passed
        self.task_runs.setdefault(score.task_key, []).append((score.run, score.passed))
        for key in self.failures:
            if not score.verdict[key] and (score.should_succeed or key not in _ONLY_WHEN_SHOULD_SUCCEED):
                self.failures[key] += 1
        bucket = self.should_succeed if score.should_succeed else self.should_refuse
        bucket[0] += score.passed
        bucket[1] += 1
        if score.justified_refusal is not None:
            self.justified[0] += score.justified_refusal
            self.justified[1] += 1

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.runs if self.runs else None

    @property
    def succeed_rate(self) -> Rate:
        return Rate(*self.should_succeed)

    @property
    def refuse_rate(self) -> Rate:
        return Rate(*self.should_refuse)

    @property
    def balanced(self) -> float | None:
        """Mean of the should-succeed and should-refuse pass rates (50% for an agent that refuses all)."""
        rates = [r.rate for r in (self.succeed_rate, self.refuse_rate) if r.rate is not None]
        return sum(rates) / len(rates) if rates else None

    @property
    def pass_rate_ci95(self) -> tuple[float, float] | None:
        return wilson_interval(self.passed, self.runs)

    @property
    def balanced_ci95(self) -> tuple[float, float] | None:
        return balanced_interval(tuple(self.should_succeed), tuple(self.should_refuse))  # type: ignore[arg-type]

    @property
    def repeated(self) -> RepeatedRuns:
        """pass^k, pass@k and the published first-k pass@k over the tasks' runs (kept until the
        next ``add``)."""
        if self._repeated is None:
            self._repeated = repeated_runs(self.task_runs)
        return self._repeated

    @property
    def justified_refusal_rate(self) -> Rate | None:
        return Rate(*self.justified) if self.justified[1] else None

    @property
    def pass_rate_with_justified_refusals(self) -> float | None:
        """Pass rate when a correct refusal must also be justified (None unless it was judged)."""
        if not self.justified[1] or not self.runs:
            return None
        return (self.should_succeed[0] + self.justified[0]) / self.runs

    def as_dict(self) -> dict[str, Any]:
        justified = self.justified_refusal_rate
        out = {
            "domain": self.domain,
            "runs": self.runs,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "pass_rate_ci95": _listed(self.pass_rate_ci95),
            "failures": dict(self.failures),
            "should_succeed": self.succeed_rate.as_dict(),
            "should_refuse": self.refuse_rate.as_dict(),
            "balanced": self.balanced,
            "balanced_ci95": _listed(self.balanced_ci95),
            "justified_refusal": None if justified is None else justified.as_dict(),
            "pass_rate_with_justified_refusals": self.pass_rate_with_justified_refusals,
        }
        repeated = self.repeated
        if repeated.max_runs >= 2:
            out.update(repeated.as_dict())
        return out


def _listed(interval: tuple[float, float] | None) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


@dataclass
class Summary:
    """Per-domain summaries and the pooled one (``domains["all"]``)."""

    domains: dict[str, DomainSummary] = field(default_factory=dict)

    @property
    def overall(self) -> DomainSummary:
        return self.domains.get(ALL_DOMAINS, DomainSummary(ALL_DOMAINS))

    def as_dict(self) -> dict[str, Any]:
        return {name: summary.as_dict() for name, summary in self.domains.items()}


def summarize(scores: Iterable[RunScore]) -> Summary:
    """Runs, pass rate, failures by judgement, rates split by expected outcome, balanced score."""
    per_domain: dict[str, DomainSummary] = {}
    pooled = DomainSummary(ALL_DOMAINS)
    for score in scores:
        per_domain.setdefault(score.domain, DomainSummary(score.domain)).add(score)
        pooled.add(score)
    ordered = {name: per_domain[name] for name in sorted(per_domain)}
    ordered[ALL_DOMAINS] = pooled
    return Summary(ordered)


# ---- the refuse-all baseline ---------------------------------------------------------------------
REFUSAL_TEXT = "I am sorry, but I cannot help with this request."


def refuse_all_record(task: Task, index: int = 0) -> Record:
    """A record of the agent that calls no tool and refuses: the database is left as it was."""
    messages = (Message("user", task.user_prompt), Message(f"{task.domain} assistant", REFUSAL_TEXT))
    run = Run(0, "", messages, task.initial_database)
    return Record(None, index, task.domain, Setup(), task, (run,), (), None)


def refuse_all_scores(
    tasks: Iterable[Task], protocol: Protocol = SOUND, *, justify_refusal: bool = False
) -> list[RunScore]:
    """The score of the agent that does nothing and refuses, on each task (source ``refuse-all``)."""
    scores = []
    for index, task in enumerate(tasks):
        score = score_run(
            refuse_all_record(task, index), 0, protocol, output_format="value", justify_refusal=justify_refusal
        )
        scores.append(replace(score, source=REFUSE_ALL_MODEL))
    return scores


def refuse_all_baseline(tasks: Iterable[Task], protocol: Protocol = SOUND) -> dict[str, Rate]:
    """Pass rate per domain (and ``"all"``, pooled) of the agent that does nothing and refuses."""
    summary = summarize(refuse_all_scores(tasks, protocol))
    if summary.overall.runs == 0:
        return {}
    return {key: Rate(domain.passed, domain.runs) for key, domain in summary.domains.items()}


# ---- the leaderboard -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LeaderboardCell:
    passed: int
    cases: int

    @property
    def rate(self) -> float:
        return self.passed / self.cases if self.cases else 0.0

    @property
    def ci95(self) -> tuple[float, float] | None:
        return wilson_interval(self.passed, self.cases)


@dataclass
class LeaderboardRow:
    """One (model, mode, tool list, user) configuration of one folder: a cell per domain and ``Overall``.

    ``pooled`` summarizes the row's counted runs: the rates on tasks that must succeed and must be
    refused, their balanced mean and, when judged, justified refusals (None for a row built from
    rates alone). ``folder`` is what sets apart files of the same configuration found in different
    places (``expA/bank/x.json`` and ``expB/bank/x.json``): the folders above the domain folder.
    ``files`` lists the trajectory files behind each domain's cell. ``coverage_differs``: the row
    covers other domains than the agents' rows of the table together; ``below_min_cases``: it has fewer cases than the table requires
    (listed apart, not ranked).
    """

    model: str
    mode: str
    tool_list: str
    user: str | None
    cells: dict[str, LeaderboardCell] = field(default_factory=dict)
    pooled: DomainSummary | None = None
    folder: str = ""
    files: dict[str, list[str]] = field(default_factory=dict)
    coverage_differs: bool = False
    below_min_cases: bool = False

    @property
    def overall(self) -> LeaderboardCell:
        """Pooled over every case of every domain (the published "Overall")."""
        return LeaderboardCell(
            sum(c.passed for c in self.cells.values()), sum(c.cases for c in self.cells.values())
        )

    def as_dict(self) -> dict[str, Any]:
        cells = {d: _cell(c) for d, c in self.cells.items()}
        cells["Overall"] = _cell(self.overall)
        pooled = self.pooled
        justified = None if pooled is None else pooled.justified_refusal_rate
        overall = self.overall
        out = {
            "model": self.model,
            "mode": self.mode,
            "tool_list": self.tool_list,
            "user": self.user,
            "cells": cells,
            "pass_rate": overall.rate if overall.cases else None,
            "pass_rate_ci95": _listed(overall.ci95),
            "should_succeed": None if pooled is None else pooled.succeed_rate.as_dict(),
            "should_refuse": None if pooled is None else pooled.refuse_rate.as_dict(),
            "balanced": None if pooled is None else pooled.balanced,
            "justified_refusal": None if justified is None else justified.as_dict(),
            "folder": self.folder,
            "files": {d: list(names) for d, names in self.files.items()},
            "domains_covered": sorted(self.cells),
            "coverage_differs": self.coverage_differs,
            "below_min_cases": self.below_min_cases,
        }
        if pooled is not None and pooled.repeated.max_runs >= 2:
            out.update(pooled.repeated.as_dict())
        return out


def _cell(cell: LeaderboardCell) -> dict[str, Any]:
    return {"passed": cell.passed, "cases": cell.cases, "rate": cell.rate, "ci95": _listed(cell.ci95)}


REFUSE_ALL_MODEL = "refuse-all"
RowKey = tuple[str, str, str, str | None, str]  # model, mode, tool list, user, folder


def leaderboard(
    scores: Iterable[RunScore],
    *,
    baseline: Mapping[str, Rate] | Iterable[RunScore] | None = None,
    first_run_only: bool = True,
    min_cases: int = 0,
) -> list[LeaderboardRow]:
    """One row per configuration and folder, ranked so that only comparable rows compete.

    Rows come from the trajectory file names (``RunScore.source``): files of one configuration
    pool into one row when they sit in the same place (``<folder>/<domain>/<file>``); the same
    configuration in two folders gives two rows. The published table counts each task's first run
    (``first_run_only``). ``baseline`` adds the refuse-all row: its scores (``refuse_all_scores``,
    then the row has the split rates too) or its rates per domain (``refuse_all_baseline``).

    Ranking: rows covering every domain of the table come first, best Overall first; then rows
    covering fewer domains (``coverage_differs``), grouped by the domains they cover (most first)
    and ranked by Overall within a group, so that no row is ranked by a pooled rate over other
    domains than its neighbours'. Agents' rows with fewer than ``min_cases`` cases are set apart
    (``below_min_cases``) after all others.
    """
    groups: dict[RowKey, list[RunScore]] = {}
    for score in scores:
        if not first_run_only or score.run == 0:
            groups.setdefault(_row_key(score), []).append(score)
    out = [_row(key, group) for key, group in groups.items()]
    if isinstance(baseline, Mapping):
        rates = {d: LeaderboardCell(r.passed, r.total) for d, r in baseline.items() if d != ALL_DOMAINS}
        out.append(LeaderboardRow(REFUSE_ALL_MODEL, "-", "-", None, rates))
    elif baseline is not None:
        out.append(_row((REFUSE_ALL_MODEL, "-", "-", None, ""), list(baseline)))
    # The table's coverage is what the agents' rows cover; the baseline covers whatever task files
    # it was given, so it does not widen it.
    agents = [row for row in out if row.model != REFUSE_ALL_MODEL] or out
    table_domains = {d for row in agents for d in row.cells}
    for row in out:
        row.coverage_differs = set(row.cells) != table_domains
        # The baseline covers the task files given, whatever their size: it stays in the table.
        row.below_min_cases = row.model != REFUSE_ALL_MODEL and row.overall.cases < min_cases
    out.sort(key=_rank)
    return out


def _rank(row: LeaderboardRow) -> tuple[Any, ...]:
    coverage = (-len(row.cells), tuple(sorted(row.cells))) if row.coverage_differs else ()
    names = (row.model, row.mode, row.tool_list, row.user or "", row.folder)
    return (row.below_min_cases, row.coverage_differs, coverage, -row.overall.rate, names)


def _row(key: RowKey, scores: list[RunScore]) -> LeaderboardRow:
    summary = summarize(scores)
    cells = {d: LeaderboardCell(part.passed, part.runs) for d, part in summary.domains.items() if d != ALL_DOMAINS}
    files: dict[str, list[str]] = {}
    for score in scores:
        names = files.setdefault(score.domain, [])
        if score.source not in names:
            names.append(score.source)
    model, mode, tool_list, user, folder = key
    return LeaderboardRow(model, mode, tool_list, user, cells, pooled=summary.overall, folder=folder, files=files)


def _row_key(score: RunScore) -> RowKey:
    config = score.configuration
    if config is not None:  # a run folder's episode: the folder sets its rows apart
        return (config.model or config.agent, config.tool_mode or "-", config.tool_list or "-", config.user, score.source)
    path = Path(score.source)
    folder = path.parent.parent if path.parent.name == score.domain else path.parent
    return (*_configuration(path), "" if str(folder) == "." else folder.as_posix())


def _configuration(path: Path) -> tuple[str, str, str, str | None]:
    try:
        parsed = parse_trajectory_file_name(path)
    except Exception:  # noqa: BLE001 - a file named otherwise is its own configuration
        return (path.name or "(unnamed)", "?", "?", None)
    return (parsed.assistant_model, parsed.tool_call_mode, parsed.tool_list, parsed.user_model)


# ---- sound vs compat, and what each quirk does ---------------------------------------------------
@dataclass
class Comparison:
    """Pass rates under both protocols and, per quirk, how many verdicts it flips.

    ``off_from_compat[q]``: runs whose ``passed`` changes when ``q`` alone is switched off in the
    compat protocol; ``on_from_sound[q]``: when ``q`` alone is switched on in the sound protocol.
    ``field_flips_*`` count runs where any verdict field changes.
    """

    runs: int = 0
    sound: DomainSummary = field(default_factory=lambda: DomainSummary(ALL_DOMAINS))
    compat: DomainSummary = field(default_factory=lambda: DomainSummary(ALL_DOMAINS))
    sound_by_domain: dict[str, DomainSummary] = field(default_factory=dict)
    compat_by_domain: dict[str, DomainSummary] = field(default_factory=dict)
    protocol_flips: int = 0
    off_from_compat: dict[str, int] = field(default_factory=dict)
    on_from_sound: dict[str, int] = field(default_factory=dict)
    field_flips_off_from_compat: dict[str, int] = field(default_factory=dict)
    field_flips_on_from_sound: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "sound": {d: s.as_dict() for d, s in {**self.sound_by_domain, ALL_DOMAINS: self.sound}.items()},
            "sopbench": {
                d: s.as_dict() for d, s in {**self.compat_by_domain, ALL_DOMAINS: self.compat}.items()
            },
            "verdicts_that_differ": self.protocol_flips,
            "quirk_flips": {
                q: {
                    "off_from_compat": self.off_from_compat.get(q, 0),
                    "on_from_sound": self.on_from_sound.get(q, 0),
                    "any_field_off_from_compat": self.field_flips_off_from_compat.get(q, 0),
                    "any_field_on_from_sound": self.field_flips_on_from_sound.get(q, 0),
                }
                for q in QUIRKS
            },
            "errors": list(self.errors),
        }


def compare(
    paths: StrPath | Iterable[StrPath],
    *,
    quirks: Iterable[str] | None = None,
    credit_cards: Callable[[Path], str | None] | None = None,
    first_run_only: bool = False,
) -> Comparison:
    """Score every run under sound, compat, and each quirk toggled alone in both directions."""
    names = list(quirks) if quirks is not None else list(QUIRKS)
    variants_off = {q: SOPBENCH.with_quirks(disable=[q]) for q in names}
    variants_on = {q: SOUND.with_quirks(enable=[q]) for q in names}
    result = Comparison()
    for path in _files(paths):
        records = read_trajectory_file(path, lambda error: result.errors.append(str(error)))
        if not records:
            continue
        from sopbench.traces import detect_output_format

        fmt = detect_output_format(records)
        cards = credit_cards(path) if credit_cards is not None else None
        for record in records:
            for run in range(1 if first_run_only else len(record.runs)):
                _compare_run(result, record, run, fmt, cards, variants_off, variants_on)
    return result


def _compare_run(
    result: Comparison,
    record: Record,
    run: int,
    fmt: str,
    cards: str | None,
    variants_off: Mapping[str, Protocol],
    variants_on: Mapping[str, Protocol],
) -> None:
    def score(protocol: Protocol) -> RunScore:
        # The per-file card reading applies to the compat side only; the sound side reads lists.
        chosen = cards if protocol.has("credit_cards_as_shipped") else None
        return score_run(record, run, protocol, output_format=fmt, credit_cards=chosen)

    try:
        sound, compat = score(SOUND), score(SOPBENCH)
        toggled_off = {q: score(p) for q, p in variants_off.items()}
        toggled_on = {q: score(p) for q, p in variants_on.items()}
    except ScoringError as error:
        result.errors.append(str(error))
        return
    result.runs += 1
    result.sound.add(sound)
    result.compat.add(compat)
    result.sound_by_domain.setdefault(sound.domain, DomainSummary(sound.domain)).add(sound)
    result.compat_by_domain.setdefault(compat.domain, DomainSummary(compat.domain)).add(compat)
    result.protocol_flips += sound.passed != compat.passed
    for q, other in toggled_off.items():
        result.off_from_compat[q] = result.off_from_compat.get(q, 0) + (other.passed != compat.passed)
        result.field_flips_off_from_compat[q] = result.field_flips_off_from_compat.get(q, 0) + (
            other.verdict != compat.verdict
        )
    for q, other in toggled_on.items():
        result.on_from_sound[q] = result.on_from_sound.get(q, 0) + (other.passed != sound.passed)
        result.field_flips_on_from_sound[q] = result.field_flips_on_from_sound.get(q, 0) + (
            other.verdict != sound.verdict
        )
