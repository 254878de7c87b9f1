"""``sopbench report``: one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._contract import verb
from ._job import UserError, current_job, err_console
from ._options import ProtocolName, Sources, choice, chosen_protocol, price_table_of, rank_choices
from ._sources import baseline_tasks, find_sources, nothing_found, run_folder_errors

OutputOption = Annotated[Path, typer.Option("--output", "-o", metavar="FILE", help="The HTML file to write.")]
PricesOption = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        show_default=False,
        help="TOML or JSON: USD per million input/output tokens per model.",
    ),
]
EmbedEpisodes = Annotated[
    bool,
    typer.Option("--embed-episodes", help="Draw the episodes inside the file; numbers link to them there."),
]
TasksDir = Annotated[
    Path | None,
    typer.Option(
        metavar="DIR",
        show_default=False,
        help="Task files to play the refuse-all and no-verify floors on "
        "(default: the sources' own tasks: a run folder's manifest, the tasks inside trajectory files).",
    ),
]
RankBy = Annotated[
    str,
    typer.Option(
        metavar="pass|balanced",
        help="Rank by the Overall pass rate, or by the balanced score (mean of the must-succeed and "
        "must-refuse rates).",
    ),
]
ViewerUrl = Annotated[
    str, typer.Option(metavar="URL", help="Where sopbench view serves the same sources (the numbers' links).")
]


@verb(
    app,
    epilog="Example: sopbench report ../shared/sopbench/trajectories runs/reference --output report.html",
)
def report(
    sources: Sources,
    output: OutputOption,
    protocol: ProtocolName = "sound",
    prices: PricesOption = None,
    embed_episodes: EmbedEpisodes = False,
    tasks_dir: TasksDir = None,
    viewer_url: ViewerUrl = "http://127.0.0.1:8765/",
    rank_by: RankBy = "pass",
) -> None:
    """One self-contained HTML file: leaderboard, figures, paired comparisons, per-goal table.

    Works offline from a file:// URL (no network request); every number links to the episodes
    behind it in sopbench view, or, with --embed-episodes, inside the file. The refuse-all and
    no-verify floors are played on the sources' own tasks and ranked where they score; the unit of
    every interval and test is the task.
    """
    try:
        from sopbench.report import build_html_report
    except ImportError as exc:
        raise UserError(
            f"sopbench report needs the optional extra: pip install 'sopbench[report]' ({exc})"
        ) from None

    job = current_job()
    chosen = chosen_protocol(choice("--protocol", protocol, ("sound", "sopbench")), None, None)
    price_table = price_table_of(prices)
    choice("--rank-by", rank_by, rank_choices())
    found = find_sources(sources)
    target = job.output(output, stdout_ok=False)
    tasks = baseline_tasks(tasks_dir)
    if not len(found):
        nothing_found(sources, target)
        return
    with job.progress(len(found), "read") as advance, run_folder_errors():
        built = build_html_report(
            found.files, chosen, run_folders=found.run_folders, tasks=tasks,
            tasks_source="the task files given" if tasks is not None else "", prices=price_table,
            embed_episodes=embed_episodes, viewer_url=viewer_url, rank_by=rank_by, progress=advance,
            on_problem=job.problem,
        )
    job.finish(f"{built.episodes} runs reported in {target}")
    job.write_text(target, built.html)
    err_console().print(f"wrote {target} ({len(built.html.encode()) // 1024} KiB)", markup=False)
