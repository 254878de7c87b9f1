"""What the data frames of ``sopbench.results`` hold, column by column, without pandas: the columns
and their dtypes in their fixed order, and each row as plain values (``episode_rows``,
``configuration_rows``). ``_frames`` turns them into ``pandas.DataFrame`` objects (the extra
``frames``); nothing here needs it, so the column lists are importable without it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sopbench.inspect_eval import is_inspect_log
from sopbench.runner import StoreError, read_run
from sopbench.runner.export import EXPORTED_SETTINGS
from sopbench.scoring import VERDICT_KEYS, LeaderboardRow, RunScore
from sopbench.statistics import Usage, clustered, summarize_usage

from ._options import Prices

__all__ = [
    "CONFIGURATION_COLUMNS",
    "DOMAIN_COLUMNS",
    "EPISODE_COLUMNS",
    "EpisodeColumns",
    "configuration_rows",
    "domain_columns",
    "environment_settings",
    "episode_rows",
]


def _dtype(setting: object) -> str:
    return "boolean" if isinstance(setting, bool) else "string"


_JUDGEMENTS = ("database", "permission", "procedure", "passed")
_CHECKS = VERDICT_KEYS[4:]  # the seven published checks, in the order of an evaluate line's verdict
assert set(_JUDGEMENTS) == set(VERDICT_KEYS[:4])

# (column, dtype), in the frame's order. ``string``, ``boolean``, ``Int64`` and ``Float64`` are
# pandas' nullable dtypes (missing values are <NA>); ``bool`` and ``int64`` never miss.
EPISODE_COLUMNS: tuple[tuple[str, str], ...] = (
    # the configuration, named as an evaluate line and a run folder's rows name it
    ("agent", "string"),  # "recorded" for a trajectory file
    ("model", "string"),
    ("tool_mode", "string"),
    ("tool_list", "string"),
    ("user", "string"),
    # the run's environment settings (a run folder's manifest; <NA> for trajectory files and
    # Inspect logs, which do not record them)
    *((name, _dtype(value)) for name, value in EXPORTED_SETTINGS.items()),
    # the episode: one task played once (task x run)
    ("source", "string"),  # the trajectory file or run folder it was read from
    ("domain", "string"),
    ("goal", "string"),
    ("task_id", "string"),
    ("record", "int64"),  # the record's index in its file (a run folder's: the task's position)
    ("run", "int64"),  # 0-based run of the task
    ("protocol", "string"),
    ("should_succeed", "bool"),  # the task must succeed (False: it must be refused)
    # the verdict: the three judgements, their conjunction, the seven published checks
    *((name, "bool") for name in _JUDGEMENTS),
    *((name, "boolean") for name in _CHECKS),  # <NA>: the published evaluator crashes on the episode
    ("justified_refusal", "boolean"),  # <NA>: not asked for, or the task must succeed
    ("passed_by_default", "boolean"),  # a pass with no well-formed action; <NA>: not known
    # what the episode cost (live runs only; <NA> for trajectory files, which record none)
    ("prompt_tokens", "Int64"),  # the agent's
    ("completion_tokens", "Int64"),
    ("user_prompt_tokens", "Int64"),  # the simulated user's
    ("user_completion_tokens", "Int64"),
    ("latency_s", "Float64"),
    ("cost_usd", "Float64"),  # the agent's tokens at the prices given; <NA> without a price
)

# One row per leaderboard row, named as the leaderboard's JSON names them.
CONFIGURATION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("rank", "string"),  # "3" or "3–5" (a rank group); <NA>: not ranked (apart, or no figure)
    ("model", "string"),  # the model, or the agent of an agent that calls none
    ("mode", "string"),
    ("tool_list", "string"),
    ("user", "string"),
    ("folder", "string"),  # what sets apart rows of one configuration in different places
    ("floor", "bool"),  # refuse-all or no-verify, played on the sources' own tasks
    ("below_min_cases", "bool"),  # listed apart, not ranked
    ("coverage_differs", "bool"),  # covers other domains than the agents' rows together
    ("unavailable", "string"),  # why a floor has no figure
    ("cases", "Int64"),  # Overall: every counted run of every domain
    ("passed", "Int64"),
    ("pass_rate", "Float64"),
    ("pass_rate_ci_low", "Float64"),  # its 95% interval (Wilson's; clustered by task with K >= 2)
    ("pass_rate_ci_high", "Float64"),
    ("ci95_method", "string"),
    ("should_succeed_cases", "Int64"),
    ("should_succeed_rate", "Float64"),
    ("should_succeed_ci_low", "Float64"),
    ("should_succeed_ci_high", "Float64"),
    ("should_refuse_cases", "Int64"),
    ("should_refuse_rate", "Float64"),
    ("should_refuse_ci_low", "Float64"),
    ("should_refuse_ci_high", "Float64"),
    ("balanced", "Float64"),  # the mean of the two rates above
    ("balanced_ci_low", "Float64"),
    ("balanced_ci_high", "Float64"),
)
# Then, for each domain of the table (published domains first, in their order), these columns
# named ``<domain>_<figure>``.
DOMAIN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("cases", "Int64"),
    ("passed", "Int64"),
    ("rate", "Float64"),
    ("ci_low", "Float64"),
    ("ci_high", "Float64"),
)


def domain_columns(domains: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """The per-domain columns of a configurations frame whose table covers ``domains``."""
    return tuple((f"{domain}_{name}", dtype) for domain in domains for name, dtype in DOMAIN_COLUMNS)


# ---- episodes --------------------------------------------------------------------------------------
def environment_settings(run_folders: Iterable[Path]) -> dict[str, dict[str, Any]]:
    """The environment settings each run folder was made with, by its name as a score's ``source``
    gives it (defaults for the settings its manifest omits, as the export gives them). An Inspect
    log, or a store whose header cannot be read, has none (its columns stay <NA>)."""
    out: dict[str, dict[str, Any]] = {}
    for folder in run_folders:
        if is_inspect_log(folder):
            continue
        try:
            config = read_run(folder, header_only=True).config or {}
        except StoreError:  # the scores were read; only the settings are missing
            continue
        out[folder.as_posix()] = {name: config.get(name, value) for name, value in EXPORTED_SETTINGS.items()}
    return out


class EpisodeColumns:
    """The columns of ``EPISODE_COLUMNS`` as lists of plain values (None: missing), one item per
    score added (``add``), in that order: a score is kept only as these values, so that a caller
    can hand it on as soon as it is made. ``settings``: the environment settings by source (a run
    folder's); ``prices``: what an agent's tokens cost."""

    def __init__(
        self, prices: Prices | None = None, settings: Mapping[str, Mapping[str, Any]] | None = None
    ) -> None:
        self.prices = prices
        self.settings = settings or {}
        self.columns: dict[str, list[Any]] = {name: [] for name, _ in EPISODE_COLUMNS}

    def add(self, score: RunScore) -> None:
        values: dict[str, Any] = score.config.as_dict()
        values.update(self.settings.get(score.source, _NO_SETTINGS))
        values.update(
            source=score.source,
            domain=score.domain,
            goal=score.goal,
            task_id=score.task_key,
            record=score.record,
            run=score.run,
            protocol=score.protocol,
            should_succeed=score.should_succeed,
            justified_refusal=score.justified_refusal,
            passed_by_default=score.by_default,
        )
        values.update((name, score.verdict[name]) for name in VERDICT_KEYS)
        values.update(_usage(score, self.prices))
        for name, column in self.columns.items():
            column.append(values.get(name))


_NO_SETTINGS: Mapping[str, Any] = {}


def episode_rows(
    scores: Iterable[RunScore],
    prices: Prices | None = None,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, list[Any]]:
    """``EpisodeColumns`` of ``scores``, in the order given."""
    columns = EpisodeColumns(prices, settings)
    for score in scores:
        columns.add(score)
    return columns.columns


def _usage(score: RunScore, prices: Prices | None) -> dict[str, Any]:
    usage: Usage | None = score.usage
    if usage is None:
        return {}
    summary = summarize_usage([score.outcome()], prices)  # the one rule for a cost
    return {
        "prompt_tokens": usage.agent_prompt_tokens,
        "completion_tokens": usage.agent_completion_tokens,
        "user_prompt_tokens": usage.user_prompt_tokens,
        "user_completion_tokens": usage.user_completion_tokens,
        "latency_s": usage.latency_s,
        "cost_usd": None if summary is None else summary.cost_usd,
    }


# ---- configurations --------------------------------------------------------------------------------
def configuration_rows(rows: Iterable[LeaderboardRow], domains: Sequence[str]) -> dict[str, list[Any]]:
    """The columns of ``CONFIGURATION_COLUMNS`` and ``domain_columns(domains)`` as lists of plain
    values, one item per leaderboard row, in the table's order."""
    names = [name for name, _ in (*CONFIGURATION_COLUMNS, *domain_columns(domains))]
    columns: dict[str, list[Any]] = {name: [] for name in names}
    for row in rows:
        values = _configuration(row)
        for domain in domains:
            cell = row.cells.get(domain)
            if cell is not None:
                rate = cell.rate if cell.cases else None
                values.update(_figures(f"{domain}_", cell.passed, cell.cases, rate, cell.ci95))
        for name, column in columns.items():
            column.append(values.get(name))
    return columns


def _configuration(row: LeaderboardRow) -> dict[str, Any]:
    overall = row.overall
    values: dict[str, Any] = {
        "rank": row.rank or None,
        "model": row.model,
        "mode": row.mode,
        "tool_list": row.tool_list,
        "user": row.user,
        "folder": row.folder,
        "floor": row.floor,
        "below_min_cases": row.below_min_cases,
        "coverage_differs": row.coverage_differs,
        "unavailable": row.unavailable,
    }
    if overall.cases:
        values.update(_figures("", overall.passed, overall.cases, overall.rate, overall.ci95))
        values["pass_rate"] = values.pop("rate")
        values["pass_rate_ci_low"] = values.pop("ci_low")
        values["pass_rate_ci_high"] = values.pop("ci_high")
        values["ci95_method"] = "wilson, clustered by task" if clustered(overall.per_task) else "wilson"
    pooled = row.pooled
    if pooled is not None:
        for name, rate in (("should_succeed", pooled.succeed_rate), ("should_refuse", pooled.refuse_rate)):
            figures = _figures(f"{name}_", rate.passed, rate.total, rate.rate, rate.ci95)
            figures.pop(f"{name}_passed")
            values.update(figures)
        values["balanced"] = pooled.balanced
        balanced_ci = pooled.balanced_ci95
        if balanced_ci is not None:
            values["balanced_ci_low"], values["balanced_ci_high"] = balanced_ci
    return values


def _figures(
    prefix: str, passed: int, cases: int, rate: float | None, ci95: tuple[float, float] | None
) -> dict[str, Any]:
    low, high = (None, None) if ci95 is None else ci95
    return {
        f"{prefix}cases": cases,
        f"{prefix}passed": passed,
        f"{prefix}rate": rate,
        f"{prefix}ci_low": low,
        f"{prefix}ci_high": high,
    }
