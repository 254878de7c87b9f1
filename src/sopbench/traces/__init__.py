"""Recorded agent runs: typed models and streaming loaders for ``output/<domain>/*.json[.gz]``.

>>> from sopbench.traces import iter_records
>>> for record in iter_records("../shared/sopbench/trajectories/bank"):  # doctest: +SKIP
...     for run in record.runs:
...         for call, output in run.tool_steps():
...             print(call.name, call.arguments, output)
"""

from sopbench._io import LoadError

from ._files import iter_trajectory_files, parse_trajectory_file_name
from ._load import (
    ErrorHandler,
    detect_output_format,
    is_tuple_output,
    iter_records,
    read_trajectory_file,
    record_from_json,
)
from ._model import (
    PUBLISHED_CHECKS,
    AgentConfig,
    Message,
    OutputFormat,
    Record,
    RecordedVerdict,
    Run,
    Setup,
    ToolCallRecord,
    ToolStep,
    TrajectoryFile,
    VerdictLayout,
)
from ._parse import decode_arguments

__all__ = [
    "PUBLISHED_CHECKS",
    "AgentConfig",
    "ErrorHandler",
    "LoadError",
    "Message",
    "OutputFormat",
    "Record",
    "RecordedVerdict",
    "Run",
    "Setup",
    "ToolCallRecord",
    "ToolStep",
    "TrajectoryFile",
    "VerdictLayout",
    "decode_arguments",
    "detect_output_format",
    "is_tuple_output",
    "iter_records",
    "iter_trajectory_files",
    "parse_trajectory_file_name",
    "read_trajectory_file",
    "record_from_json",
]
