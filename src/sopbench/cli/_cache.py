"""``sopbench cache info`` and ``sopbench cache clear``: the verdict cache of the verbs that read
results (not the model-call cache of ``run --cache``, which is a file of its own)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from ._app import app
from ._contract import verb
from ._job import out_console

cache_app = typer.Typer(
    name="cache",
    help="The verdict cache of evaluate, leaderboard, compare, report and view: where it is, what it "
    "holds, and clearing it.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(cache_app)

InfoJson = Annotated[bool, typer.Option("--json", help="Print it as one JSON document.")]


@verb(cache_app, name="info", epilog="Examples: sopbench cache info ; sopbench cache info --json")
def info(as_json: InfoJson = False) -> None:
    """Where the verdict cache is ($SOPBENCH_CACHE_DIR, else $XDG_CACHE_HOME/sopbench or
    ~/.cache/sopbench), how many entries it holds (the verdicts of trajectory files, the floors of
    task sets) and their size on disk."""
    from sopbench.cache import VerdictCache

    found = VerdictCache.default().info()
    if as_json:
        sys.stdout.write(json.dumps(found.as_dict(), indent=2) + "\n")
        return
    out = out_console()
    out.print(f"verdict cache: {found.location}", markup=False)
    for kind in found.entries:
        out.print(f"  {kind}: {found.entries[kind]} entries, {_size(found.bytes[kind])}", markup=False)
    out.print(f"  total: {found.total_entries} entries, {_size(found.total_bytes)}", markup=False)


@verb(cache_app, name="clear", epilog="Example: sopbench cache clear")
def clear() -> None:
    """Remove every entry of the verdict cache (the next verbs score everything again)."""
    from sopbench.cache import VerdictCache

    cache = VerdictCache.default()
    removed = cache.clear()
    out_console().print(f"removed {removed} entries from {cache.root}", markup=False)


def _size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 100_000 else f"{count / 1e3:.1f} kB"
