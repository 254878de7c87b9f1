"""Results as data frames (the optional extra ``frames``: pandas and pyarrow): the episodes and the
leaderboard's configurations of some sources, one ``pandas.DataFrame`` each, with fixed columns
and dtypes. The only module of sopbench that imports pandas; ``sopbench.results`` loads it on first
use. Each frame is made by the use case the verbs call (``evaluate``, ``leaderboard``), so it holds
the same values as ``sopbench evaluate``'s lines and ``sopbench leaderboard``'s rows.

This module loads only when the extra is installed (it checks, without importing, so that
``sopbench.results`` names the extra when it is not), and imports pandas once the scores are made:
pandas and pyarrow take about 100 MB, which then come after the peak of scoring, not on top of it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sopbench.cache import VerdictCache
from sopbench.scoring import Protocol, RunScore, ScoringReport, protocol_by_name

from ._evaluate import Evaluation, evaluate, scored_runs
from ._frame_rows import (
    CONFIGURATION_COLUMNS,
    EPISODE_COLUMNS,
    EpisodeColumns,
    configuration_rows,
    domain_columns,
    environment_settings,
    episode_rows,
)
from ._leaderboard import leaderboard
from ._options import Prices, ScoringOptions
from ._sources import Sources

if TYPE_CHECKING:
    import pandas as pd

for _library in ("pandas", "pyarrow"):  # the extra, checked as this module loads (see above)
    if importlib.util.find_spec(_library) is None:
        raise ImportError(f"No module named {_library!r}", name=_library)

__all__ = ["configurations_frame", "episodes_frame", "evaluate_to_frame", "scores_frame", "write_parquet"]

Progress = Callable[[str], None]
ProblemSink = Callable[[str], None]
SourcesLike = Sources | str | Path | Iterable[str | Path]
HowScored = str | Protocol | ScoringOptions


def episodes_frame(
    sources: SourcesLike,
    protocol: HowScored = "sound",
    *,
    progress: Progress | None = None,
    on_problem: ProblemSink | None = None,
) -> pd.DataFrame:
    """One row per scored episode of ``sources`` (an episode is one task played once: task x run),
    in the order of ``sopbench evaluate``'s lines, with these columns in this order:

    - the configuration: ``agent`` (``recorded`` for a trajectory file), ``model``, ``tool_mode``,
      ``tool_list``, ``user`` (string);
    - the run's environment settings ``env_mode``, ``shuffle_tools`` (boolean),
      ``constraint_format``, ``default_sop`` (string): a run folder's; <NA> for trajectory files
      and Inspect logs, which do not record them;
    - ``source`` (the file or run folder read), ``domain``, ``goal``, ``task_id`` (string),
      ``record``, ``run`` (int64), ``protocol`` (string), ``should_succeed`` (bool: False for a task
      that must be refused);
    - the verdict: ``database``, ``permission``, ``procedure``, ``passed`` (bool), then the seven
      published checks ``no_tool_call_error``, ``constraint_not_violated``, ``database_match``,
      ``action_successfully_called``, ``action_called_correctly``, ``dirgraph_satisfied``,
      ``success`` (boolean; <NA> where the published evaluator crashes on the episode);
    - ``justified_refusal`` (boolean; <NA> unless asked for on a task that must be refused),
      ``passed_by_default`` (boolean: a pass with no well-formed action; <NA> when not known);
    - what a live episode cost: ``prompt_tokens``, ``completion_tokens`` (the agent's),
      ``user_prompt_tokens``, ``user_completion_tokens`` (the simulated user's) (Int64),
      ``latency_s`` and ``cost_usd`` (Float64; with prices only): <NA> for trajectory files.

    ``sources``: a ``Sources``, or paths found as the verbs find them (``Sources.of``).
    ``protocol``: ``"sound"``, ``"sopbench"``, a ``Protocol``, or the whole ``ScoringOptions`` of
    ``evaluate`` (runs, bank card reading, justified refusals, prices). Given a name or a
    ``Protocol``, the frame reads and fills the user's verdict cache (``VerdictCache.default()``, as
    the command line does: a frame is asked for again and again from a notebook); a
    ``ScoringOptions`` is taken as it is (its ``cache`` None: no cache). Problems go to
    ``on_problem``, each source's name once read to ``progress``; a run folder that cannot be read
    raises ``RunFolderError``.
    """
    # the scores alone: the per-configuration summaries and the floors of ``evaluate`` are not in
    # the frame (a third of a warm frame's time)
    found, options = _sources(sources), _options(protocol)
    rows = EpisodeColumns(options.prices, environment_settings(found.run_folders))
    for score, _from_folder in scored_runs(
        found, options, ScoringReport(), [], progress=progress, on_problem=on_problem
    ):
        rows.add(score)
    return _frame(rows.columns, EPISODE_COLUMNS)


def evaluate_to_frame(
    sources: Sources,
    options: ScoringOptions,
    *,
    progress: Progress | None = None,
    on_problem: ProblemSink | None = None,
) -> tuple[Evaluation, pd.DataFrame]:
    """``evaluate(sources, options)`` and its scores as ``episodes_frame`` lays them out (each score
    kept only as its row's values, as soon as it is made)."""
    rows = EpisodeColumns(options.prices, environment_settings(sources.run_folders))
    evaluation = evaluate(sources, options, rows.add, progress=progress, on_problem=on_problem)
    return evaluation, _frame(rows.columns, EPISODE_COLUMNS)


def scores_frame(
    scores: Iterable[RunScore], prices: Prices | None = None, run_folders: Iterable[Path] = ()
) -> pd.DataFrame:
    """``scores`` as ``episodes_frame`` lays them out (the environment settings of the episodes
    read from ``run_folders``; the cost at ``prices``)."""
    columns = episode_rows(scores, prices, environment_settings(run_folders))
    return _frame(columns, EPISODE_COLUMNS)


def configurations_frame(
    sources: SourcesLike,
    protocol: HowScored = "sound",
    *,
    progress: Progress | None = None,
    on_problem: ProblemSink | None = None,
) -> pd.DataFrame:
    """One row per row of the leaderboard of ``sources`` (``leaderboard``: one per configuration and
    folder, the refuse-all floor among them), in the table's order, with these columns:

    ``rank`` (string, <NA> when not ranked), ``model``, ``mode``, ``tool_list``, ``user``,
    ``folder`` (string), ``floor``, ``below_min_cases``, ``coverage_differs`` (bool),
    ``unavailable`` (string: why a floor has no figure); Overall: ``cases``, ``passed`` (Int64),
    ``pass_rate``, ``pass_rate_ci_low``, ``pass_rate_ci_high`` (Float64: the 95% interval),
    ``ci95_method`` (string); ``should_succeed_cases``, ``should_succeed_rate`` and its
    ``_ci_low``/``_ci_high``, the same for ``should_refuse``, ``balanced`` and its
    ``_ci_low``/``_ci_high``; then for each domain of the table (published domains first)
    ``<domain>_cases``, ``<domain>_passed`` (Int64), ``<domain>_rate``, ``<domain>_ci_low``,
    ``<domain>_ci_high`` (Float64; <NA> where the row does not cover the domain).

    ``sources`` and ``protocol`` as for ``episodes_frame`` (``ScoringOptions`` also sets
    ``min_cases``, ``rank_by`` and the floors' tasks).
    """
    board = leaderboard(_sources(sources), _options(protocol), progress=progress, on_problem=on_problem)
    domains = board.domains
    columns = configuration_rows(board.rows, domains)
    return _frame(columns, (*CONFIGURATION_COLUMNS, *domain_columns(domains)))


def write_parquet(frame: pd.DataFrame, sink: IO[bytes]) -> None:
    """``frame`` as a Parquet file into the binary file ``sink`` (read back by ``pandas.read_parquet``
    with the same columns and dtypes)."""
    try:
        import pyarrow  # noqa: F401 - the engine pandas writes Parquet with
    except ImportError as exc:
        raise ImportError(
            "sopbench.results.write_parquet needs the frames extra: pip install 'sopbench[frames]'",
            name=exc.name,
        ) from exc
    frame.to_parquet(sink, engine="pyarrow", index=False)


def _frame(columns: dict[str, list[Any]], layout: Iterable[tuple[str, str]]) -> pd.DataFrame:
    import pandas as pd

    data = {name: pd.array(columns[name], dtype=dtype) for name, dtype in layout}
    return pd.DataFrame(data, index=pd.RangeIndex(len(next(iter(columns.values()), []))))


def _sources(sources: SourcesLike) -> Sources:
    if isinstance(sources, Sources):
        return sources
    if isinstance(sources, str | Path):
        return Sources.of([Path(sources)])
    return Sources.of([Path(path) for path in sources])


def _options(how: HowScored) -> ScoringOptions:
    if isinstance(how, ScoringOptions):
        return how
    protocol = protocol_by_name(how) if isinstance(how, str) else how
    return ScoringOptions(protocol=protocol, cache=VerdictCache.default())
