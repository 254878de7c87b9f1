"""The ``sopbench`` Typer application and its global options (``--debug``, ``--version``); each verb
module registers its commands on ``app``."""

from __future__ import annotations

from typing import Annotated

import typer

from ._contract import set_debug
from ._job import out_console

app = typer.Typer(
    name="sopbench",
    help="Measure whether tool-using LLM agents follow standard operating procedures (SOPBench).",
    no_args_is_help=True,
    add_completion=False,
    # Plain click help: it wraps to the terminal and never cuts option names or defaults.
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


@app.callback(
    epilog="Exit codes: 0 everything asked was done; 1 finished, but some input was skipped (each "
    "one named) or there was nothing to do; 2 usage error (bad option, or a path that cannot be "
    "used); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM)."
)
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of any error.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=lambda on: _print_version(on),
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Evaluate agent traces against SOPs: diagnose, replay, evaluate, leaderboard, quirks."""
    set_debug(debug)


def _print_version(on: bool) -> None:
    if on:
        from sopbench import __version__

        out_console().print(f"sopbench {__version__}", markup=False)
        raise typer.Exit()
