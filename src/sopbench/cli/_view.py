"""``sopbench view``: a local web viewer of episodes."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._app import app
from ._contract import show_problems, verb
from ._job import Job, UserError, current_job, err_console, out_console
from ._options import NoCache, ProtocolName, chosen_protocol, price_table_of, published_sources
from ._sources import verdict_cache

if TYPE_CHECKING:
    import socket

    from sopbench.view import EpisodeIndex, LiveSources

SourcesOption = Annotated[
    list[Path],
    typer.Argument(
        metavar="SOURCE",
        help="Run folders of sopbench run (or folders holding them, as a sweep writes), Inspect logs "
        "(.eval, .json), trajectory files (.json, .json.gz) or folders of them.",
        show_default=False,
        callback=published_sources,
    ),
]
PortOption = Annotated[int, typer.Option(metavar="P", min=0, max=65535, help="Port (0: any free one).")]
HostOption = Annotated[
    str,
    typer.Option(metavar="ADDRESS", help="Address to listen on; anything but 127.0.0.1 is warned about."),
]

ViewPrices = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        show_default=False,
        help="TOML or JSON: USD per million input/output tokens per model; shows each live episode's cost.",
    ),
]


@verb(
    app,
    epilog="Example: sopbench view ../shared/sopbench/trajectories runs/reference  (then open the printed URL; "
    "Ctrl-C stops it, exit code 130)",
)
def view(
    sources: SourcesOption,
    port: PortOption = 8765,
    host: HostOption = "127.0.0.1",
    protocol: ProtocolName = "sound",
    prices: ViewPrices = None,
    no_cache: NoCache = False,
) -> None:
    """A local web viewer of episodes: filter the list, read an episode next to its SOP's graph.

    Every episode of every SOURCE is read and scored under --protocol at start-up; the list filters
    by domain, goal, configuration, outcome, failing judgement and constraint kind; an episode shows
    the conversation, the goal's constraint graph marked at the goal call, the first failing step
    and the database difference against the oracle. Each episode has a stable address
    (/episode/<source-digest>/<domain>/<task>/<run>); /compare?a=<configuration>&b=<configuration>&task=<id>
    shows one task under two configurations side by side. Sources that a run or sweep is still
    writing are read again as the page polls. Stop it with Ctrl-C (exit code 130).
    """
    try:
        from sopbench.view import LiveSources, SourceError, source_files
        from sopbench.view.server import bind, create_app, is_loopback, serve, url_of
    except ImportError as exc:
        raise UserError(
            f"sopbench view needs the optional extra: pip install 'sopbench[view]' ({exc})"
        ) from None
    job = current_job()
    job.inputs(sources, "SOURCE")
    chosen = chosen_protocol(protocol, None, None)
    price_table = price_table_of(prices)
    try:
        units = source_files(sources)
        job.inputs(units, "SOURCE", must_exist=False)  # each file read: no output may replace it
        sock = bind(host, port)
    except SourceError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"--host {host} --port {port}: cannot listen there ({exc.strerror or exc})") from None
    live = LiveSources(
        sources,
        chosen,
        price_table,
        lambda line: err_console().print(line, markup=False),
        cache=None if no_cache else verdict_cache(),
    )
    index = _read_and_score(job, units, live, sock)
    if not is_loopback(host):
        err_console().print(
            f"warning: --host {host} lets other machines on the network read these episodes", markup=False
        )
    url = url_of(sock)

    def ready() -> None:
        job.finish(f"the viewer served {len(index.episodes)} episodes at {url}")
        out_console().print(f"sopbench view: {url}  (Ctrl-C to stop)", markup=False)
        sys.stdout.flush()

    serve(
        create_app(
            index, chosen.name, f"{len(index.episodes)} episodes at start · protocol {chosen.name}", live
        ),
        sock,
        ready,
    )


def _read_and_score(job: Job, units: list[Path], live: LiveSources, sock: socket.socket) -> EpisodeIndex:
    """Every episode of the sources, scored and indexed (the socket is closed if that fails); the
    problems are shown now: the viewer ends with Ctrl-C, after which the contract lists none."""
    from sopbench.view import EpisodeIndex, SourceError

    chosen = live.protocol
    errors = err_console()
    started = time.perf_counter()
    errors.print(f"reading and scoring {len(units)} sources ...", markup=False)
    try:
        with job.progress(len(units), "read and scored") as advance:
            loaded = live.load(units, advance)
    except BaseException as exc:
        sock.close()
        if isinstance(exc, SourceError):
            raise UserError(str(exc)) from None
        raise
    for problem in loaded.problems:
        job.problem(problem)
    show_problems(errors, job.problems, None)
    index = EpisodeIndex(loaded.episodes)
    errors.print(
        f"{len(index.episodes)} episodes from {loaded.files} sources, scored ({chosen.name}) and indexed "
        f"in {time.perf_counter() - started:.1f} s",
        markup=False,
    )
    return index
