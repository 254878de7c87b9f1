"""``sopbench data fetch``: the published task files and recorded trajectories, into the user cache."""

from __future__ import annotations

from typing import Annotated

import typer

from ._app import app
from ._contract import verb
from ._job import EXIT_PARTIAL, UserError, current_job, err_console, out_console

data_app = typer.Typer(
    name="data",
    help="The published SOPBench data: fetch it once, then name it `published` (--tasks published).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(data_app)

FromOption = Annotated[
    str | None,
    typer.Option(
        "--from",
        metavar="URL",
        show_default=False,
        help="A mirror of the repository's files at the pinned commit (default: $SOPBENCH_DATA_MIRROR, "
        "else the original repository).",
    ),
]
DomainOption = Annotated[str, typer.Option(metavar="NAME", help="A domain, comma-separated domains, or all.")]


@verb(
    data_app,
    name="fetch",
    epilog="Examples: sopbench data fetch ; sopbench data fetch --domain bank,dmv ; "
    "sopbench data fetch --from http://127.0.0.1:8000",
)
def fetch(source: FromOption = None, domain: DomainOption = "all") -> None:
    """Download the task files and recorded trajectories of the original SOPBench repository (pinned
    commit 8cd43276845fb25a760a6fcd1090e5aae3a36273) into the user cache, each checked against the
    sha256 list kept in sopbench; files already there are checked and kept (a second fetch resumes).

    Then `--tasks published` (run, diagnose --tasks-dir) and `published` as a source (evaluate,
    leaderboard, report, view) name them from any folder. On any error: one line, exit 1, and the
    file being fetched leaves nothing behind.
    """
    from sopbench.domains import PUBLISHED_DOMAINS
    from sopbench.published import FetchError, fetch_published, published_files

    job = current_job()
    names = (
        list(PUBLISHED_DOMAINS) if domain == "all" else [d.strip() for d in domain.split(",") if d.strip()]
    )
    unknown = sorted(set(names) - set(PUBLISHED_DOMAINS))
    if unknown or not names:
        raise UserError(f"--domain {domain}: not a published domain ({', '.join(PUBLISHED_DOMAINS)} or all)")
    items = published_files(names)
    err_console().print(
        f"fetching {len(items)} published files ({sum(i.size for i in items) / 1e6:.0f} MB before compression)",
        markup=False,
    )
    with job.progress(len(items), "checked", unit="files") as advance:
        try:
            report = fetch_published(source, names, lambda item, _: advance(item.source_path))
        except FetchError as exc:
            raise UserError(f"data fetch: {exc}", EXIT_PARTIAL) from None
    out = out_console()
    out.print(
        f"{len(report.downloaded)} files downloaded ({report.bytes / 1e6:.1f} MB), "
        f"{len(report.present)} already in the cache, all checked against their sha256",
        markup=False,
    )
    out.print(f"published data: {report.folder}", markup=False)
    out.print("next: sopbench run --agent reference --tasks published --output runs/published", markup=False)
    out.print("      sopbench evaluate published --output published-verdicts.jsonl", markup=False)
