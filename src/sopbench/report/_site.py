"""``sopbench report --site DIR``: the report as a static folder any static host serves, or a
browser opens from ``file://``.

    DIR/index.html                                  the report; each number links to a list page
    DIR/lists/<group>.html                          the episodes behind one number
    DIR/episode/<digest>/<domain>/<task>/<run>.html one episode, drawn as the viewer draws it
    DIR/style.css                                   the one style sheet every page links

Nothing is loaded until it is opened: the index stays the size of the report without episodes,
and an episode page is a few kilobytes. Episode pages sit at the same address as in the viewer
(``/episode/<source-digest>/<domain>/<task>/<run>``, plus ``.html``; ``sopbench.view.score_address``),
so a link into the site names the same run wherever the sources were read from. Every page carries the report's
Content-Security-Policy: no script at all, styles only from the site itself.

The folder is written beside its final place and moved there when complete: an interrupted build
leaves no half site. An existing folder is replaced only when it is an earlier site (it holds
``SITE_MARK``) or empty; anything else is refused.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

if TYPE_CHECKING:
    from sopbench.view import Episode

__all__ = ["SITE_MARK", "SitePage", "SiteError", "episode_page_path", "write_site"]

SITE_MARK = ".sopbench-site"  # the file that says a folder is a site this verb wrote
SITE_POLICY = (
    "default-src 'none'; script-src 'none'; style-src 'self' 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)


class SiteError(ValueError):
    """A site folder that cannot be written (the message names the folder and why)."""


@dataclass(frozen=True)
class SitePage:
    path: str  # relative to the site's folder, with forward slashes
    text: str


def _file_part(text: str) -> str:
    """A part of a path as a file name: no separator, no control character, no leading dot."""
    cleaned = "".join("_" if c in '/\\:*?"<>|' or ord(c) < 32 else c for c in text)
    return cleaned.lstrip(".") or "_"


def episode_page_path(episode: Episode) -> str:
    """``episode/<source-digest>/<domain>/<task>/<run>.html``: the viewer's stable address of the
    episode (``sopbench.view.score_address``), as a file of the site."""
    from sopbench.view import score_address

    parts = score_address(episode.score).strip("/").split("/")
    return "/".join(_file_part(unquote(part)) for part in parts) + ".html"


def href_of(path: str, depth: int) -> str:
    """``path`` (relative to the site) as a link from a page ``depth`` folders down."""
    return "../" * depth + quote(path)


def write_site(target: Path, pages: Iterator[SitePage], progress: Callable[[str], None] | None = None) -> int:
    """Write ``pages`` into a new folder beside ``target``, then put it in ``target``'s place.
    Returns the number of pages; ``SiteError`` when ``target`` holds something not a site."""
    target = Path(target)
    if target.exists():
        if not target.is_dir():
            raise SiteError(f"{target}: is not a folder")
        if any(target.iterdir()) and not (target / SITE_MARK).is_file():
            raise SiteError(
                f"{target}: is a folder that holds other files than a site; name a new or empty folder"
            )
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".building", dir=parent))
    try:
        count = 0
        made: set[Path] = set()
        for page in pages:
            file = building / page.path
            if file.parent not in made:
                file.parent.mkdir(parents=True, exist_ok=True)
                made.add(file.parent)
            file.write_text(page.text, encoding="utf-8")
            count += 1
            if progress is not None and page.path.startswith("episode/"):
                progress(page.path)
        (building / SITE_MARK).write_text("written by sopbench report --site\n", encoding="utf-8")
        os.chmod(building, 0o755)  # mkdtemp makes it private; a site is for sharing
        old = None
        if target.exists():
            old = parent / f".{target.name}.{os.getpid()}.old"
            target.rename(old)
        building.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return count
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
