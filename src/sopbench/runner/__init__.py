"""Running agents on tasks: the episode runner, its SQLite store, resume and export.

>>> from sopbench.runner import RunSpec, run
>>> spec = RunSpec(agent="openai", agent_options={"model": "qwen2.5"}, domains="bank", output="runs/q")
>>> report = run(spec)  # doctest: +SKIP
>>> report.summary.overall.pass_rate  # doctest: +SKIP

Each episode follows the published loop (SPEC §6.1) on a lenient system, is scored with the sound
protocol (and the published checks), and is stored in ``<output>/results.sqlite`` in one
transaction; running the same configuration again skips finished episodes and retries
``infra_error`` ones. See docs/runner.md.
"""

from sopbench._outputs import LOCK_NAME, STORE_NAME, store_files
from sopbench.domains import TOOL_LISTS

from ._baselines import (
    BASELINE_AGENTS,
    Baselines,
    TaskSetMissing,
    baseline_rows,
    baseline_scores,
    play_baselines,
    run_folder_tasks,
    source_baselines,
    source_tasks,
    stored_verdict_name,
)
from ._desk import ExecutedCall
from ._episode import EpisodeResult, Limits, run_episode
from ._export import export_jsonl, export_line, export_shown, export_sopbench, trajectory_file_name
from ._lock import RunLock, run_in_progress
from ._manifest import Manifest, TaskSet, TaskSetProvenance, sopbench_revision, task_digest, task_set_digest
from ._outcome import Progress, ProtocolCounts, RunInterrupted, RunReport
from ._plan import Episode, episode_seed, select_tasks
from ._progress import PROGRESS_INTERVAL_S, PROGRESS_STEP, PlainProgress, progress_line
from ._read import StoredEpisode, StoredRun, read_run
from ._record import episode_record, record_json
from ._row import (
    COLUMN_TYPES,
    DERIVED,
    DERIVED_FIELDS,
    END_REASONS,
    EXPORT_FIELDS,
    EXPORTED_SETTINGS,
    NOT_EXPORTED,
    SCORE_COLUMNS,
    SETTINGS_AFTER,
    STATUSES,
    TIMING_FIELDS,
    EndReason,
    EpisodeRow,
    Status,
    never_replied,
    passed_by_default,
    protocol_breaks,
    row_of_score,
    score_metadata,
)
from ._run import NoTaskToPlay, RunRefused, run, run_many
from ._scored import EpisodePlayer, PlayedEpisode, play, play_row, row_score, verdict_column
from ._scoring import EpisodeScores, score_finished_episode
from ._setup import episode_setup, tool_schema
from ._spec import (
    EPISODE_TIMEOUT_S,
    MAX_RUNS,
    MAX_SEED,
    RunSpec,
    RunSpecError,
    import_plugins,
    spec_options,
)
from ._store import (
    SCHEMA_VERSION,
    Store,
    StoreError,
    default_tasks_path,
    open_existing,
    shown_notes,
)

__all__ = [
    "COLUMN_TYPES",
    "EXPORT_FIELDS",
    "DERIVED",
    "DERIVED_FIELDS",
    "passed_by_default",
    "protocol_breaks",
    "EXPORTED_SETTINGS",
    "NOT_EXPORTED",
    "SETTINGS_AFTER",
    "TIMING_FIELDS",
    "END_REASONS",
    "STATUSES",
    "EndReason",
    "EpisodeRow",
    "Status",
    "BASELINE_AGENTS",
    "Baselines",
    "TaskSetMissing",
    "baseline_rows",
    "play_baselines",
    "run_folder_tasks",
    "source_baselines",
    "source_tasks",
    "stored_verdict_name",
    "EPISODE_TIMEOUT_S",
    "LOCK_NAME",
    "MAX_RUNS",
    "MAX_SEED",
    "spec_options",
    "NoTaskToPlay",
    "RunInterrupted",
    "RunRefused",
    "RunLock",
    "TaskSet",
    "TaskSetProvenance",
    "Manifest",
    "sopbench_revision",
    "PlayedEpisode",
    "never_replied",
    "row_of_score",
    "score_metadata",
    "SCORE_COLUMNS",
    "store_files",
    "task_digest",
    "task_set_digest",
    "SCHEMA_VERSION",
    "STORE_NAME",
    "TOOL_LISTS",
    "Episode",
    "EpisodePlayer",
    "EpisodeScores",
    "EpisodeResult",
    "ExecutedCall",
    "Limits",
    "PROGRESS_INTERVAL_S",
    "PROGRESS_STEP",
    "PlainProgress",
    "Progress",
    "progress_line",
    "RunSpec",
    "RunSpecError",
    "RunReport",
    "ProtocolCounts",
    "baseline_scores",
    "Store",
    "StoreError",
    "StoredEpisode",
    "StoredRun",
    "default_tasks_path",
    "episode_seed",
    "episode_setup",
    "export_jsonl",
    "export_line",
    "export_shown",
    "export_sopbench",
    "import_plugins",
    "open_existing",
    "play",
    "play_row",
    "read_run",
    "run_in_progress",
    "episode_record",
    "record_json",
    "row_score",
    "run",
    "run_many",
    "run_episode",
    "score_finished_episode",
    "select_tasks",
    "shown_notes",
    "tool_schema",
    "trajectory_file_name",
    "verdict_column",
]
