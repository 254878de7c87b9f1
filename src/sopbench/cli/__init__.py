"""The ``sopbench`` command line. Each verb module parses its options, checks its paths and calls one
library function (the verbs that read results: ``sopbench.results``), then prints what it returns
(the renderers of ``sopbench.report``); ``_contract.verb`` keeps the contract shared by every verb
(outputs written whole or not at all, exit codes, one-line errors, ``--problems``).

One module per verb or family of verbs: ``_diagnose``, ``_replay``, ``_score`` (evaluate,
leaderboard, compare, quirks), ``_generate``, ``_run``, ``_sweep``, ``_export``, ``_report``,
``_view``, ``_local`` (serve-local), ``_data`` (data fetch), ``_mcp`` (mcp serve), ``_next`` (what a verb suggests next); shared option types and checks in ``_options``, what verbs
read and the JSON Lines they write in ``_sources``, progress of the long verbs in ``_progress``, the
contract in ``_job`` and ``_contract``.
"""

from __future__ import annotations

import sys

import typer

# isort: off
# Each verb module registers its commands on import: the help lists them in this order.
from . import _diagnose, _replay, _score  # noqa: F401
from . import _generate, _run, _sweep  # noqa: F401
from . import _export, _report, _view, _local, _data, _mcp, _guard, _cache  # noqa: F401

# isort: on
from ._app import app
from ._contract import process_ends_after_verb
from ._job import err_console, out_console

__all__ = ["app", "main"]


def main() -> None:
    """The console script: click's own usage errors (a missing option, a bad value) become one line
    like every other user mistake; exit codes are those of the verbs."""
    process_ends_after_verb()
    try:
        code = app(standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):  # Ctrl-C outside any verb (while options are parsed)
        err_console().print("interrupted: nothing was started", markup=False)
        sys.exit(130)
    except typer.TyperException as exc:  # typer's parsing errors: usage errors, exit 2
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare ``sopbench``: the help itself
            out_console().print(exc.format_message(), markup=False, highlight=False)
            sys.exit(0)
        ctx = getattr(exc, "ctx", None)
        where = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
        err_console().print(f"error: {exc.format_message()}{where}", markup=False, soft_wrap=True)
        sys.exit(getattr(exc, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)
