"""The viewer's web application: server-side pages and a small JSON API over the episode index.

An episode's page is at its stable address (``episode_address``); the old positional
``/episode/<n>`` redirects there. Every filter of the list is a query parameter, carried to the
episodes it links to, whose previous/next links walk the same filtered list.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._address import episode_address, task_part
from ._compare import side_by_side
from ._episode import episode_view
from ._index import FACETS, EpisodeIndex, Filters
from ._live import LiveSources
from ._sources import Episode
from ._templates import CONTENT_SECURITY_POLICY, STATIC_DIR, template_environment

__all__ = ["PAGE_SIZE", "create_app", "episode_json"]

PAGE_SIZE = 50


def _page_number(request: Request) -> int:
    try:
        return int(request.query_params.get("page", "1"))
    except ValueError:
        return 1


def episode_json(episode: Episode) -> dict[str, Any]:
    """One episode in the list, as the API gives it."""
    facts = episode.facts
    return {
        "id": episode.id,
        "address": episode.address,
        "task_id": episode.task_id,
        "domain": episode.domain,
        "goal": episode.goal,
        "configuration": episode.configuration,
        "source": episode.source,
        "record": episode.score.record,
        "run": episode.number,
        "outcome": episode.outcome,
        "passed": episode.passed,
        "failing": list(episode.failing),
        "verdict": episode.score.verdict if episode.judged else None,
        "explanations": list(episode.score.explanations),
        "facts": None if facts is None else asdict(facts),
    }


def _episode_by_address(index: EpisodeIndex, request: Request) -> Episode | None:
    """The episode at the requested address (its path, decoded, encoded again as addresses are)."""
    params = request.path_params
    task, _, run = params["rest"].rpartition("/")
    if not task or not run.isdigit():
        return None
    return index.by_address.get(episode_address(params["digest"], params["domain"], task, int(run)))


def create_app(
    index: EpisodeIndex, protocol: str, note: str = "", live: LiveSources | None = None
) -> Starlette:
    """The viewer over ``index`` (episodes scored under ``protocol``); with ``live``, the sources are
    read again as they grow (each poll of ``/api/status``, and each list page)."""
    templates = template_environment()
    for name in ("list.html", "episode.html", "compare.html"):  # compiled now, not on the first request
        templates.get_template(name)
    common = {
        "root": "/",
        "static_prefix": "/static",
        "protocol": protocol,
        "header_note": note,
        "live": live is not None,
    }
    refreshing = asyncio.Lock()

    async def refresh() -> None:
        if live is None or refreshing.locked() or not live.due():
            return
        async with refreshing:
            found = await run_in_threadpool(live.collect, len(index.episodes))
            live.apply(found, index)  # here, between requests: no page sees a half-grown index

    def html(name: str, **values: Any) -> HTMLResponse:
        page = templates.get_template(name).render(**common, episodes_total=len(index.episodes), **values)
        return HTMLResponse(page)

    async def list_page(request: Request) -> Response:
        await refresh()
        filters = Filters.from_query(request.query_params)
        page = index.page(filters, _page_number(request), PAGE_SIZE)
        facets = []
        for name, label in FACETS.items():
            counts = index.counts(name, filters)
            options = [(value, counts.get(value, 0)) for value in index.options(name)]
            facets.append(
                {"name": name, "label": label, "chosen": filters.values.get(name, ""), "options": options}
            )
        query = urlencode(filters.values)

        def page_link(number: int) -> str:
            return "/?" + urlencode({**filters.values, "page": number})

        judged = page.total - page.infra_errors
        rate = f"{100 * page.passed / judged:.1f}%" if judged else "no judged episodes"
        return html(
            "list.html",
            page=page,
            facets=facets,
            page_link=page_link,
            pass_rate=rate,
            filters=filters.values,
            query=query,
        )

    async def episode_page(request: Request) -> Response:
        episode = _episode_by_address(index, request)
        if episode is None:
            return HTMLResponse("no such episode", status_code=404)
        filters = Filters.from_query(request.query_params)
        previous, following, position, total = index.neighbours(episode, filters)
        query = urlencode(filters.values)
        return html(
            "episode.html",
            view=episode_view(episode, shown=True),
            previous=previous,
            following=following,
            position=position,
            matching=total,
            query=query,
        )

    async def positional(request: Request) -> Response:
        episode = index.get(request.path_params["id"])
        if episode is None:
            return HTMLResponse("no such episode", status_code=404)
        target = episode.address if request.url.path.startswith("/episode/") else "/api" + episode.address
        query = request.url.query
        return RedirectResponse(target + (f"?{query}" if query else ""), status_code=307)

    async def api_episodes(request: Request) -> Response:
        await refresh()
        filters = Filters.from_query(request.query_params)
        page = index.page(filters, _page_number(request), PAGE_SIZE)
        return JSONResponse(
            {
                "total": page.total,
                "passed": page.passed,
                "infra_errors": page.infra_errors,
                "page": page.number,
                "pages": page.pages,
                "filters": dict(filters.values),
                "episodes": [episode_json(e) for e in page.episodes],
            }
        )

    async def api_episode(request: Request) -> Response:
        episode = _episode_by_address(index, request)
        if episode is None:
            return JSONResponse({"error": "no such episode"}, status_code=404)
        view = episode_view(episode)
        return JSONResponse(
            {
                **episode_json(episode),
                "first_failing_step": view.failing_step,
                "goal_step": view.goal_step,
                "constraints": [{"text": c.text, "state": c.state} for c in view.constraints],
                "database_diff": view.database_diff if view.database_kept else None,
                "problems": [{"text": p.text, "step": p.step} for p in view.problems],
            }
        )

    async def api_status(request: Request) -> Response:
        await refresh()
        sources = [asdict(s) for s in live.status()] if live is not None else []
        return JSONResponse(
            {"episodes": len(index.episodes), "live": live is not None, "polling_s": 3, "sources": sources}
        )

    async def compare_page(request: Request) -> Response:
        query = request.query_params
        a, b, task = (query.get(name, "").strip() for name in ("a", "b", "task"))
        configurations = index.options("configuration")
        pairs = side_by_side(index, a, b, task) if a and b and task else []
        tasks = index.options("task") if not task else []
        return html(
            "compare.html",
            a=a,
            b=b,
            task=task,
            pairs=pairs,
            configurations=configurations,
            tasks=tasks[:2000],
            task_short=task_part(task.split("/")[0], task) if task else "",
        )

    return Starlette(
        routes=[
            Route("/", list_page),
            Route("/episode/{id:int}", positional),
            Route("/episode/{digest}/{domain}/{rest:path}", episode_page),
            Route("/compare", compare_page),
            Route("/api/episodes", api_episodes),
            Route("/api/episode/{id:int}", positional),
            Route("/api/episode/{digest}/{domain}/{rest:path}", api_episode),
            Route("/api/status", api_status),
            Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
        ],
        middleware=[Middleware(_SecurityHeaders)],
    )


_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]


class _SecurityHeaders:
    """Every response carries the escaping rule's second line of defence (no inline script runs)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)
