"""Sweeps: many run configurations from one TOML file, each in its own run folder.

>>> from sopbench.sweep import expand, read_sweep, run_sweep
>>> configurations = expand(read_sweep(Path("examples/sweeps/builtin.toml")), Path("sweeps/builtin"))  # doctest: +SKIP
>>> report = run_sweep(configurations)  # doctest: +SKIP

The file's matrix (agents, tool modes, tool lists, users) with ``[[include]]`` and ``[[exclude]]``
entries names the configurations (``[[override]]`` entries change the runs, seed or limits of some);
each runs into ``<output>/<name>/`` with its manifest, so that the same command resumes them all and
a changed configuration is refused. The configurations run side by side within the sweep's
``concurrency``, and an agent's ``concurrency`` bounds its endpoint over all of them. See the README, "Sweeps and
clusters".
"""

from ._file import (
    AgentEntry,
    Configuration,
    Entry,
    Limits,
    Matrix,
    Override,
    SweepError,
    SweepFile,
    configuration_name,
    expand,
    read_sweep,
)
from ._progress import SweepDisplay
from ._ray import RayUnavailable, ray_player
from ._run import (
    SweepProgress,
    SweepReport,
    changed_configurations,
    planned_episodes,
    run_sweep,
    stored_when_interrupted,
)

__all__ = [
    "AgentEntry",
    "Configuration",
    "Entry",
    "Limits",
    "Matrix",
    "Override",
    "RayUnavailable",
    "SweepError",
    "SweepFile",
    "SweepDisplay",
    "SweepProgress",
    "SweepReport",
    "changed_configurations",
    "configuration_name",
    "expand",
    "planned_episodes",
    "stored_when_interrupted",
    "ray_player",
    "read_sweep",
    "run_sweep",
]
