"""``sopbench report``: one self-contained HTML file, or a static site (``--site``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from sopbench.report import HtmlReport

from ._app import app
from ._contract import verb, verb_ends_the_process
from ._job import Job, OutputTarget, UserError, current_job, err_console
from ._options import (
    NoCache,
    ProtocolName,
    RankBy,
    Sources,
    choice,
    chosen_protocol,
    price_table_of,
    rank_choices,
)
from ._sources import (
    baseline_tasks,
    find_sources,
    no_episode,
    nothing_found,
    run_folder_errors,
    scoring_options,
)

OutputOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", metavar="FILE", show_default=False, help="The HTML file to write."),
]
SiteOption = Annotated[
    Path | None,
    typer.Option(
        "--site",
        metavar="DIR",
        show_default=False,
        help="Write a static site instead: DIR/index.html (the report) and a page per episode, opened "
        "on demand; serve DIR from any static host or open index.html from disk. Replaces an earlier site.",
    ),
]
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
    typer.Option(
        "--embed-episodes",
        help="Draw the episodes inside the file; numbers link to them there (a few hundred at most: "
        "above that, --site).",
    ),
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
ViewerUrl = Annotated[
    str, typer.Option(metavar="URL", help="Where sopbench view serves the same sources (the numbers' links).")
]


@verb(
    app,
    epilog="Examples: sopbench report ../shared/sopbench/trajectories runs/reference --output report.html ; "
    "sopbench report ../shared/sopbench/trajectories --site report-site",
)
def report(
    sources: Sources,
    output: OutputOption = None,
    protocol: ProtocolName = "sound",
    prices: PricesOption = None,
    embed_episodes: EmbedEpisodes = False,
    site: SiteOption = None,
    tasks_dir: TasksDir = None,
    viewer_url: ViewerUrl = "http://127.0.0.1:8765/",
    rank_by: RankBy = "pass",
    no_cache: NoCache = False,
) -> None:
    """One self-contained HTML file: leaderboard, figures, paired comparisons, per-goal table; or,
    with --site, a static folder of it and of every episode.

    Works offline from a file:// URL (no network request); every number links to the episodes
    behind it in sopbench view, or, with --embed-episodes, inside the file, or, with --site, to
    pages of the site. The refuse-all and no-verify floors are played on the sources' own tasks and
    ranked where they score; the unit of every interval and test is the task.
    """
    try:
        from sopbench.report import build_html_report
    except ImportError as exc:
        raise UserError(
            f"sopbench report needs the optional extra: pip install 'sopbench[report]' ({exc})"
        ) from None

    from sopbench.results import report_leaderboard

    job = current_job()
    _check_viewer_url(viewer_url)
    chosen = chosen_protocol(choice("--protocol", protocol, ("sound", "sopbench")), None, None)
    price_table = price_table_of(prices)
    choice("--rank-by", rank_by, rank_choices())
    found = find_sources(sources)
    target, folder = _targets(job, output, site, embed_episodes)
    tasks = baseline_tasks(tasks_dir)
    if not len(found):
        nothing_found(sources, target)
        return
    options = scoring_options(chosen, tasks, rank_by=rank_by, prices=price_table, no_cache=no_cache)
    with ExitStack() as frozen:
        with job.progress(len(found), "read") as advance, run_folder_errors():
            board = report_leaderboard(found, options, progress=advance, on_problem=job.problem)
            frozen.enter_context(_collector_passing_over_what_lives())
            built = build_html_report(
                board,
                found,
                prices=options.prices,
                embed_episodes=embed_episodes,
                site=folder is not None,
                viewer_url=viewer_url,
                on_problem=job.problem,
                on_warning=lambda text: err_console().print(text, markup=False),
                cache=options.cache,
            )
        _write_report(job, built, sources, target, folder)


def _write_report(
    job: Job, built: HtmlReport, sources: list[Path], target: OutputTarget | None, folder: Path | None
) -> None:
    """The page to ``target``, or the site to ``folder``; nothing but a one-line error when no
    episode was found to report."""
    if built.episodes == 0:
        no_episode(sources, target if target is not None else folder)
        return
    if target is None:
        assert folder is not None  # _targets gives one of the two
        _write_site(job, folder, built)
        return
    job.finish(f"{built.episodes} runs reported in {target}")
    job.write_text(target, built.html)
    err_console().print(f"wrote {target} ({len(built.html.encode()) // 1024} KiB)", markup=False)


@contextmanager
def _collector_passing_over_what_lives() -> Iterator[None]:
    """What is alive now (the scored runs: some 350,000 objects on the published set) is left out
    of the cyclic collector's full collections (``gc.freeze``). It outlives the report, and walking
    it is most of what a full collection costs: pairing the rows, drawing the figures (matplotlib's
    many small objects) and laying out the page set off three, 0.2 to 0.35 s each. Cycles already
    garbage now (none on the published set) wait. In the console script it stays so to the end: the
    collection at exit would walk it all once more (0.3 s) to free what the process gives back
    anyway; a caller in process gets its collector back as it was. Skipped when the program froze
    objects itself, so as not to unfreeze them."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        if not verb_ends_the_process():
            gc.unfreeze()


def _targets(
    job: Job, output: Path | None, site: Path | None, embed: bool
) -> tuple[OutputTarget | None, Path | None]:
    """The file (--output) or the folder (--site) to write: exactly one of them."""
    if (output is None) == (site is None):
        raise UserError("name where to write: --output FILE or --site DIR (one of them)")
    if site is None:
        return job.output(output, stdout_ok=False), None
    if embed:
        raise UserError("--embed-episodes and --site: a site already holds every episode as a page; drop one")
    return None, job.output_folder(site, "--site", new_folders=True)


def _write_site(job: Job, folder: Path, built: HtmlReport) -> None:
    from sopbench.report import SiteError, write_site

    assert built.pages is not None
    job.finish(f"{built.episodes} runs reported in the site {folder}")
    with job.progress(built.embedded, "drew", unit="episodes") as advance:
        try:
            pages = write_site(folder, built.pages, advance)
        except SiteError as exc:
            raise UserError(f"--site {exc}") from None
    err_console().print(f"wrote {folder}: {pages} pages; open {folder / 'index.html'}", markup=False)


def _check_viewer_url(url: str) -> None:
    """Every number of the report links there: an http(s) address only (a ``javascript:`` or
    ``data:`` link would run or show whatever it holds when a reader clicks a number)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise UserError(f"--viewer-url {url}: not a URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise UserError(
            f"--viewer-url {url}: give an http:// or https:// address (where sopbench view serves the sources)"
        )
