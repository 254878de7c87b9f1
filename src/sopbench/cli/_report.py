"""``sopbench report``: one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._contract import verb
from ._job import UserError, current_job, err_console
from ._options import DEFAULT_TASKS_DIR, ProtocolName, Sources, chosen_protocol, price_table_of
from ._sources import find_sources, nothing_found, read_tasks


# ---- report --------------------------------------------------------------------------------------
@verb(
    app,
    epilog="Example: sopbench report ../shared/sopbench/trajectories runs/reference --output report.html",
)
def report(
    sources: Sources,
    output: Annotated[Path, typer.Option("--output", "-o", metavar="FILE", help="The HTML file to write.")],
    protocol: ProtocolName = "sound",
    prices: Annotated[
        Path | None,
        typer.Option(metavar="FILE", show_default=False, help="TOML or JSON: USD per million input/output tokens per model."),
    ] = None,
    embed_episodes: Annotated[
        bool, typer.Option("--embed-episodes", help="Draw the episodes inside the file; numbers link to them there.")
    ] = False,
    tasks_dir: Annotated[
        Path | None,
        typer.Option(metavar="DIR", show_default=False, help="Task files for the refuse-all and no-verify rows "
                     "(default: ../shared/sopbench/tasks when it exists, else the tasks inside the records)."),
    ] = None,
    viewer_url: Annotated[
        str, typer.Option(metavar="URL", help="Where sopbench view serves the same sources (the numbers' links).")
    ] = "http://127.0.0.1:8765/",
) -> None:
    """One self-contained HTML file: leaderboard, figures, paired comparisons, per-goal table.

    Works offline from a file:// URL (no network request); every number links to the episodes
    behind it in sopbench view, or, with --embed-episodes, inside the file.
    """
    try:
        from sopbench.report import build_html_report
    except ImportError as exc:
        raise UserError(f"sopbench report needs the optional extra: pip install 'sopbench[report]' ({exc})") from None
    from sopbench.report import RunFolderError
    from sopbench.tasks import iter_all_tasks

    job = current_job()
    if protocol not in ("sound", "sopbench"):
        raise UserError(f"--protocol {protocol}: choose sound or sopbench")
    chosen = chosen_protocol(protocol, None, None)
    price_table = price_table_of(prices)
    found = find_sources(sources)
    target = job.output(output, stdout_ok=False)
    folder = tasks_dir if tasks_dir is not None else DEFAULT_TASKS_DIR
    if tasks_dir is not None:
        job.inputs([tasks_dir], "--tasks-dir")
    tasks = None
    if tasks_dir is not None or folder.is_dir():
        tasks = read_tasks("--tasks-dir", folder, lambda: list(iter_all_tasks(folder)))
    if not len(found):
        nothing_found(sources, target)
        return
    with job.progress(len(found), "read") as advance:
        try:
            built = build_html_report(
                found.files, chosen, run_folders=found.run_folders, tasks=tasks,
                tasks_source="the task files" if tasks is not None else "", prices=price_table,
                embed_episodes=embed_episodes, viewer_url=viewer_url, progress=advance, on_problem=job.problem,
            )
        except RunFolderError as exc:
            raise UserError(str(exc)) from None
    job.finish(f"{built.episodes} runs reported in {target}")
    job.write_text(target, built.html)
    err_console().print(f"wrote {target} ({len(built.html.encode()) // 1024} KiB)", markup=False)
