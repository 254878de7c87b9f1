"""The viewer's web application: server-side pages and a small JSON API over the episode index."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._episode import episode_view
from ._index import FACETS, EpisodeIndex, Filters
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
    return {
        "id": episode.id,
        "domain": episode.domain,
        "goal": episode.goal,
        "configuration": episode.configuration,
        "source": episode.source,
        "record": episode.score.record,
        "run": episode.run,
        "passed": episode.passed,
        "failing": list(episode.failing),
        "verdict": episode.score.verdict,
        "explanations": list(episode.score.explanations),
    }


def create_app(index: EpisodeIndex, protocol: str, note: str = "") -> Starlette:
    """The viewer over ``index`` (episodes scored under ``protocol``)."""
    templates = template_environment()
    for name in ("list.html", "episode.html"):  # compiled now, not on the first request
        templates.get_template(name)
    common = {"root": "/", "static_prefix": "/static", "protocol": protocol, "header_note": note}

    def html(name: str, **values: Any) -> HTMLResponse:
        return HTMLResponse(templates.get_template(name).render(**common, **values))

    async def list_page(request: Request) -> Response:
        filters = Filters.from_query(request.query_params)
        page = index.page(filters, _page_number(request), PAGE_SIZE)
        facets = []
        for name, label in FACETS.items():
            counts = index.counts(name, filters)
            facets.append(
                {
                    "name": name,
                    "label": label,
                    "chosen": filters.values.get(name, ""),
                    "options": [(value, counts.get(value, 0)) for value in index.options(name)],
                }
            )

        def page_link(number: int) -> str:
            return "/?" + urlencode({**filters.values, "page": number})

        rate = f"{100 * page.passed / page.total:.1f}%" if page.total else "no episodes"
        return html("list.html", page=page, facets=facets, page_link=page_link, pass_rate=rate)

    async def episode_page(request: Request) -> Response:
        episode = index.get(request.path_params["id"])
        if episode is None:
            return HTMLResponse("no such episode", status_code=404)
        return html("episode.html", view=episode_view(episode, shown=True))

    async def api_episodes(request: Request) -> Response:
        filters = Filters.from_query(request.query_params)
        page = index.page(filters, _page_number(request), PAGE_SIZE)
        return JSONResponse(
            {
                "total": page.total,
                "passed": page.passed,
                "page": page.number,
                "pages": page.pages,
                "filters": dict(filters.values),
                "episodes": [episode_json(e) for e in page.episodes],
            }
        )

    async def api_episode(request: Request) -> Response:
        episode = index.get(request.path_params["id"])
        if episode is None:
            return JSONResponse({"error": "no such episode"}, status_code=404)
        view = episode_view(episode)
        return JSONResponse(
            {
                **episode_json(episode),
                "first_failing_step": view.failing_step,
                "goal_step": view.goal_step,
                "constraints": [{"text": c.text, "state": c.state} for c in view.constraints],
                "database_diff": view.database_diff,
            }
        )

    return Starlette(
        routes=[
            Route("/", list_page),
            Route("/episode/{id:int}", episode_page),
            Route("/api/episodes", api_episodes),
            Route("/api/episode/{id:int}", api_episode),
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
