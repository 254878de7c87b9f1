"""Running agents on tasks: the episode runner, its SQLite store, resume and export.

>>> from sopbench.runner import RunSpec, run
>>> spec = RunSpec(agent="openai", agent_options={"model": "qwen2.5"}, domains="bank", output="runs/q")
>>> report = run(spec)  # doctest: +SKIP
>>> report.summary.overall.pass_rate  # doctest: +SKIP

Each episode follows the published loop (SPEC §6.1) on a lenient system, is scored with the sound
protocol (and the published checks), and is stored in ``<output>/results.sqlite`` in one
transaction; running the same configuration again skips finished episodes and retries
``infra_error`` ones. See docs/runner.md.

These are the names a user of the runner needs. The parts the front ends and tools build on are
in public submodules: ``sopbench.runner.episode`` (one episode in process), ``.store`` (the run
folder's store), ``.export`` (export lines), ``.baselines`` and ``.frontend`` (what the command
line, the sweep and the Inspect task share).
"""

from ._episode import Limits
from ._export import export_jsonl, export_sopbench
from ._manifest import Manifest
from ._outcome import Progress, RunInterrupted, RunReport
from ._read import StoredEpisode, StoredRun, read_run
from ._row import EpisodeRow
from ._run import run
from ._spec import RunSpec, RunSpecError
from ._store import StoreError

__all__ = [
    "run",
    "RunSpec",
    "RunSpecError",
    "RunReport",
    "RunInterrupted",
    "Progress",
    "Limits",
    "read_run",
    "StoredRun",
    "StoredEpisode",
    "EpisodeRow",
    "Manifest",
    "StoreError",
    "export_jsonl",
    "export_sopbench",
]
