"""What an export line holds: its fields in order, the derived and timing ones, and how one line is
made. ``sopbench.runner.export_jsonl``/``export_sopbench`` write whole exports; ``export_cache``
ships the recorded replies a run used.
"""

from ._export import export_cache, export_line, export_shown, trajectory_file_name
from ._row import (
    DERIVED,
    DERIVED_FIELDS,
    EXPORT_FIELDS,
    EXPORTED_SETTINGS,
    NOT_EXPORTED,
    SETTINGS_AFTER,
    TIMING_FIELDS,
    passed_by_default,
    protocol_breaks,
)

__all__ = [
    "export_cache",
    "export_line",
    "export_shown",
    "trajectory_file_name",
    "EXPORT_FIELDS",
    "DERIVED",
    "DERIVED_FIELDS",
    "NOT_EXPORTED",
    "SETTINGS_AFTER",
    "TIMING_FIELDS",
    "EXPORTED_SETTINGS",
    "passed_by_default",
    "protocol_breaks",
]
