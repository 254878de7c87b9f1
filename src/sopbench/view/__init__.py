"""Seeing where and why an agent failed: the episode viewer and the pieces the HTML report shares.

>>> from sopbench.view import EpisodeIndex, load_sources, source_files  # doctest: +SKIP
>>> loaded = load_sources(source_files([Path("runs/reference")]), SOUND)  # doctest: +SKIP
>>> EpisodeIndex(loaded.episodes).page(Filters({"outcome": "failed"})).total  # doctest: +SKIP

Shared with the report: ``template_environment`` (jinja2, autoescaping everywhere),
``constraint_graph_svg`` (a goal's SOP as its constraint graph, our own SVG layout),
``episode_view`` (an episode as the page shows it), ``first_failing_step``, and the escaping rule
(``_templates``; ``stylesheet`` for a file that inlines the CSS): everything a model or a task wrote is text, never markup. The web server
(Starlette, uvicorn) is the optional extra ``view``.
"""

from ._episode import EpisodeView, MessageView, episode_view, first_failing_step
from ._graph import STATE_LABELS, constraint_graph_svg, constraint_state_name
from ._index import FACETS, EpisodeIndex, Filters, Page
from ._sources import (
    JUDGEMENTS,
    Episode,
    LoadedSources,
    SourceError,
    configuration_name,
    failing_constraint_kinds,
    load_sources,
    source_files,
)
from ._templates import CONTENT_SECURITY_POLICY, STATIC_DIR, stylesheet, template_environment

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "FACETS",
    "JUDGEMENTS",
    "STATE_LABELS",
    "STATIC_DIR",
    "Episode",
    "EpisodeIndex",
    "EpisodeView",
    "Filters",
    "LoadedSources",
    "MessageView",
    "Page",
    "SourceError",
    "constraint_graph_svg",
    "configuration_name",
    "failing_constraint_kinds",
    "constraint_state_name",
    "episode_view",
    "first_failing_step",
    "load_sources",
    "source_files",
    "stylesheet",
    "template_environment",
]
