"""``sopbench replay``: re-execute recorded tool calls and compare with the recordings."""

from __future__ import annotations

from ._app import app
from ._contract import verb
from ._job import current_job
from ._options import AsJson, Output, Paths
from ._sources import runs_to_jsonl


@verb(app, epilog="Example: sopbench replay ../shared/sopbench/trajectories --output replay.jsonl")
def replay(paths: Paths, output: Output, as_json: AsJson = False) -> None:
    """Re-execute recorded tool calls on fresh lenient systems and compare with the recordings.

    Writes one JSON line per run (source, domain, record, run, tool_outputs, final_database,
    errors, ...) and prints, per domain, how many tool outputs and final databases match the
    recorded ones. Runs whose conversation belongs to another task are counted as misaligned.
    Records without a trajectory are counted and named, not replayed.
    """
    from sopbench.report import replay_files

    def produce(files, write, advance):
        result = replay_files(files, write, progress=advance, on_problem=current_job().problem)
        return result, result.runs

    runs_to_jsonl(
        paths,
        output,
        as_json,
        "replayed",
        lambda sources, write, advance: produce(sources.files, write, advance),
    )
