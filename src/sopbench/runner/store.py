"""A run folder's SQLite store: opening it, its schema, lock and columns, and the task set
provenance its manifest records. ``sopbench.runner.read_run`` is how a run folder is read; this is
for tools that inspect or repair the store itself.
"""

from sopbench._outputs import LOCK_NAME, STORE_NAME, store_files

from ._lock import RunLock, run_in_progress
from ._manifest import TaskSet, TaskSetProvenance, sopbench_revision, task_digest, task_set_digest
from ._row import COLUMN_TYPES, END_REASONS, SCORE_COLUMNS, STATUSES, EndReason, Status
from ._store import SCHEMA_VERSION, Store, default_tasks_path, open_existing, shown_notes

__all__ = [
    "Store",
    "open_existing",
    "SCHEMA_VERSION",
    "STORE_NAME",
    "LOCK_NAME",
    "store_files",
    "RunLock",
    "run_in_progress",
    "default_tasks_path",
    "shown_notes",
    "COLUMN_TYPES",
    "SCORE_COLUMNS",
    "END_REASONS",
    "STATUSES",
    "EndReason",
    "Status",
    "TaskSet",
    "TaskSetProvenance",
    "task_digest",
    "task_set_digest",
    "sopbench_revision",
]
