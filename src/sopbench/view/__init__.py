"""Seeing where and why an agent failed: the episode viewer and the pieces the HTML report shares.

>>> from sopbench.view import EpisodeIndex, load_sources, source_files  # doctest: +SKIP
>>> loaded = load_sources(source_files([Path("runs/reference")]), SOUND)  # doctest: +SKIP
>>> EpisodeIndex(loaded.episodes).page(Filters({"outcome": "failed", "q": "verify"})).total  # doctest: +SKIP

Every episode has a stable address, ``episode_address(source_digest(source), domain, task_id, run)``
(``/episode/<source-digest>/<domain>/<task>/<run>``): the same in every viewer whatever the order of
its sources, so the report and an issue can link to it. ``LiveSources`` reads growing sources again
(the page polls); ``side_by_side`` pairs one task's runs under two configurations.

Shared with the report: ``template_environment`` (jinja2, autoescaping everywhere),
``constraint_graph_svg`` (a goal's SOP as its constraint graph, our own SVG layout),
``episode_view`` (an episode as the page shows it), ``first_failing_step``, and the escaping rule
(``_templates``; ``stylesheet`` for a file that inlines the CSS): everything a model or a task wrote is text, never markup. The web server
(Starlette, uvicorn) is the optional extra ``view``.
"""

from ._address import compare_address, episode_address, score_address, source_digest, task_part
from ._compare import Divergence, RunPair, divergence, side_by_side
from ._episode import EpisodeView, MessageView, episode_view, first_failing_step
from ._facts import EpisodeFacts, ProblemView, episode_facts, problem_steps
from ._graph import STATE_LABELS, constraint_graph_svg, constraint_state_name
from ._index import FACETS, FILTERS, EpisodeIndex, Filters, Page
from ._live import SETTLE_S, LiveSources, SourceStatus
from ._reading import load_sources, load_unit
from ._sources import (
    JUDGEMENTS,
    Episode,
    LoadedSources,
    SourceError,
    configuration_name,
    failing_constraint_kinds,
    source_files,
)
from ._templates import CONTENT_SECURITY_POLICY, STATIC_DIR, stylesheet, template_environment

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "FACETS",
    "FILTERS",
    "JUDGEMENTS",
    "SETTLE_S",
    "STATE_LABELS",
    "STATIC_DIR",
    "Divergence",
    "Episode",
    "EpisodeFacts",
    "EpisodeIndex",
    "EpisodeView",
    "Filters",
    "LiveSources",
    "LoadedSources",
    "MessageView",
    "Page",
    "ProblemView",
    "RunPair",
    "SourceError",
    "SourceStatus",
    "compare_address",
    "divergence",
    "episode_address",
    "episode_facts",
    "load_unit",
    "problem_steps",
    "score_address",
    "side_by_side",
    "source_digest",
    "task_part",
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
