"""The page of the HTML report: its templates, style sheet and Content-Security-Policy, and the
episodes drawn inside it (as the viewer draws them) or as the pages of a static site."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sopbench.scoring import Protocol, RunScore, protocol_by_name

if TYPE_CHECKING:
    import jinja2

    from sopbench.view import Episode

    from ._html_numbers import EpisodeGroup
    from ._site import SitePage

# Sorts the per-goal table by the clicked header (numbers by their data-v value). The only script:
# the page's Content-Security-Policy allows it by its hash and nothing else.
SORT_SCRIPT = (
    "document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',"
    "function(){var t=th.closest('table'),b=t.tBodies[0],i=th.cellIndex,d=th.dataset.dir==='asc'?-1:1;"
    "t.querySelectorAll('th').forEach(function(h){delete h.dataset.dir});th.dataset.dir=d>0?'asc':'desc';"
    "function v(r){var c=r.cells[i];return c.dataset.v!==undefined?parseFloat(c.dataset.v):c.textContent}"
    "Array.from(b.rows).sort(function(x,y){var p=v(x),q=v(y);return d*(typeof p==='number'?p-q:"
    "p.localeCompare(q))}).forEach(function(r){b.appendChild(r)})})});"
)


def episodes_to_embed(
    scores: list[RunScore], run_folders: Sequence[Path], on_problem: Callable[[str], None] | None
) -> list[Episode]:
    """The agents' runs as the viewer's episodes (records of trajectory files read when drawn)."""
    from sopbench.runner import StoreError, read_run
    from sopbench.view import Episode, configuration_name, failing_constraint_kinds

    stored: dict[tuple[str, str, int], Any] = {}
    for folder in run_folders:
        try:
            run = read_run(folder)
        except StoreError as exc:
            if on_problem is not None:
                on_problem(f"{folder}: its episodes cannot be embedded ({exc})")
            continue
        for item in run.episodes:
            if item.record is not None:
                stored[(folder.as_posix(), item.row.task_id, item.row.run)] = item.record
    episodes: list[Episode] = []
    for score in scores:
        record = stored.get((score.source, score.task_id, score.run))
        from_folder = score.configuration is not None
        if from_folder and record is None:
            continue
        episodes.append(
            Episode(
                len(episodes),
                score.source,
                configuration_name(score.config),
                0 if from_folder else score.run,  # a stored episode's record holds its one run
                score,
                failing_constraint_kinds(score),
                record,
                scored_with=_protocol_of(score) if record is None else None,
            )
        )
    return episodes


def _protocol_of(score: RunScore) -> Protocol | None:
    """The protocol a trajectory file's score read from the verdict cache was made under (its page
    scores the run again for what the cache does not keep); None for a score made here."""
    if score.episode is not None:
        return None
    try:
        return protocol_by_name(score.protocol)
    except ValueError:
        return None


def episode_title(episode: Episode) -> str:
    outcome = "passed" if episode.passed else "failed " + ", ".join(episode.failing)
    return f"{episode.configuration} · {episode.score.task_key} run {episode.score.run} · {outcome}"


def jinja_environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(
            [
                jinja2.PackageLoader("sopbench.report", "templates"),
                jinja2.PackageLoader("sopbench.view", "templates"),
            ]
        ),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def page_stylesheet() -> str:
    """The viewer's style sheet (episodes are drawn as it draws them), then the report's."""
    from sopbench.view import stylesheet

    return stylesheet() + (Path(__file__).with_name("templates") / "report.css").read_text(encoding="utf-8")


def policy(*, linked_styles: bool = False) -> str:
    """The Content-Security-Policy: nothing from the network, and only ``SORT_SCRIPT`` may run
    (``linked_styles``: a page of a site, which also takes the site's style sheet)."""
    digest = base64.b64encode(hashlib.sha256(SORT_SCRIPT.encode()).digest()).decode()
    styles = "'self' 'unsafe-inline'" if linked_styles else "'unsafe-inline'"
    return (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src {styles}; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


def site_pages(
    first: list[SitePage],
    episodes: list[Episode],
    groups: Sequence[EpisodeGroup],
    environment: jinja2.Environment,
    protocol: str,
) -> Iterator[SitePage]:
    """The pages of ``report --site``: ``first`` (the index and the report's other pages), the style
    sheet, a list per linked number, then each episode (drawn when its turn comes, so that a large
    site is never held in memory)."""
    from sopbench.view import episode_view

    from ._site import SITE_POLICY, SitePage, episode_page_path, href_of

    yield from first
    yield SitePage("style.css", page_stylesheet())
    paths = {e.id: episode_page_path(e) for e in episodes}
    listing = environment.get_template("site_list.html")
    for group in groups:
        items = [(href_of(paths[i], 1), episode_title(episodes[i])) for i in group.episodes]
        yield SitePage(
            f"lists/{group.anchor}.html",
            listing.render(group=group, items=items, policy=SITE_POLICY, root="../"),
        )
    page = environment.get_template("site_episode.html")
    for episode in episodes:
        path = paths[episode.id]
        depth = path.count("/")
        yield SitePage(
            path,
            page.render(
                view=episode_view(episode),
                anchor="",
                protocol=protocol,
                policy=SITE_POLICY,
                root="../" * depth,
                title=episode_title(episode),
            ),
        )
