"""What the front ends (the command line, the sweep file, the Inspect task) share beyond
``RunSpec``: its bounds, option validation and plugin import, several runs at once, the refusals
of a run, the progress line, and a run folder claimed by a front end that plays its own episodes.
"""

from ._folder import RunFolder, open_run_folder
from ._outcome import ProtocolCounts
from ._progress import PROGRESS_INTERVAL_S, PROGRESS_STEP, PlainProgress, progress_line
from ._run import NoTaskToPlay, RunRefused, run_many
from ._spec import EPISODE_TIMEOUT_S, MAX_RUNS, MAX_SEED, import_plugins, spec_options

__all__ = [
    "run_many",
    "open_run_folder",
    "RunFolder",
    "RunRefused",
    "NoTaskToPlay",
    "ProtocolCounts",
    "MAX_RUNS",
    "MAX_SEED",
    "EPISODE_TIMEOUT_S",
    "spec_options",
    "import_plugins",
    "PlainProgress",
    "progress_line",
    "PROGRESS_INTERVAL_S",
    "PROGRESS_STEP",
]
