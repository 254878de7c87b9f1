"""``sopbench mcp serve``: the episodes of a run folder, one per MCP session, over stdio or HTTP.

A session is bound to its episode at its first request (``initialize`` in the handshake era): the
next episode of the plan that the store does not hold as completed and that no other session is
playing, in plan order. Its tools are ``run``'s offered tools plus ``ask_user``; its instructions
and its prompt ``task`` are the SOP instructions (``run``'s system prompt) and the user's opening
message. The episode ends at the exit tool, at the published limits, when the user ends it, at the
episode timeout, or when the session closes (an ``infra_error``, retried by a later session); it is
then scored and stored at once. Over HTTP, sessions are the handshake era's (``Mcp-Session-Id``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from sopbench.runner import RunSpec
from sopbench.runner.episode import Episode
from sopbench.runner.frontend import RunFolder

from ._episode import Answer, ServedEpisode
from ._tools import ARGUMENTS_META, ASK_USER, ENDED_META, listed_tools

SERVER_NAME = "sopbench"
PROMPT = "task"


@dataclass
class ServeReport:
    """What a server did: sessions served, episodes stored (by end reason), requests refused."""

    sessions: int = 0
    stored: dict[str, int] = field(default_factory=dict)
    late_requests: int = 0
    idle_sessions: int = 0  # sessions that came when every episode was done

    def line(self) -> str:
        ends = ", ".join(f"{n} {end}" for end, n in sorted(self.stored.items())) or "none"
        line = f"{self.sessions} sessions; episodes stored: {ends}"
        if self.late_requests:
            line += f"; {self.late_requests} requests after their episode ended were refused"
        if self.idle_sessions:
            line += f"; {self.idle_sessions} sessions found no episode left"
        return line


class EpisodeServer:
    """Hands out a run folder's episodes to MCP sessions and stores each when it ends."""

    def __init__(
        self,
        config: RunSpec,
        folder: RunFolder,
        episodes: Iterable[Episode],
        *,
        on_stored: Callable[[ServedEpisode], None] | None = None,
    ) -> None:
        self.config = config
        self.folder = folder
        self.episodes = list(episodes)
        self.playing: dict[tuple[str, int], ServedEpisode] = {}
        self.sessions: dict[object, ServedEpisode | None] = {}
        self.report = ServeReport()
        self.on_stored = on_stored
        self.server = self._server()

    # ---- handing out episodes -------------------------------------------------------------------
    def left(self) -> list[Episode]:
        """The episodes still to play (not completed in the store, not being played), in plan order."""
        done = self.folder.done()
        return [
            e
            for e in self.episodes
            if (e.task_id, e.run) not in done and (e.task_id, e.run) not in self.playing
        ]

    async def bind(self, key: object) -> ServedEpisode | None:
        """The episode of session ``key``, claimed at its first request (None: none is left)."""
        if key in self.sessions:
            return self.sessions[key]
        self.sessions[key] = None  # claimed once, even while its episode starts
        self.report.sessions += 1
        left = self.left()
        if not left:
            self.report.idle_sessions += 1
            return None
        episode = left[0]
        finished = self.folder.store.finished().get((episode.task_id, episode.run))
        served = ServedEpisode(self.config, episode, (finished.attempts if finished else 0) + 1, self._store)
        self.playing[(episode.task_id, episode.run)] = served
        self.sessions[key] = served
        await served.start()
        return served

    def _store(self, served: ServedEpisode) -> None:
        self.folder.store.put(served.row, served.shown())
        self.playing.pop((served.task_id, served.episode.run), None)
        end = served.row.end_reason
        self.report.stored[end] = self.report.stored.get(end, 0) + 1
        if served.row.status != "completed":
            print(
                f"sopbench mcp: {served.task_id} run {served.episode.run}: {served.row.reason}",
                file=sys.stderr,
            )
        if self.on_stored is not None:
            self.on_stored(served)

    async def release(self, key: object) -> None:
        """Session ``key`` closed: its episode, if still running, is stored as dropped."""
        served = self.sessions.pop(key, None)
        if served is not None:
            await served.close()
            self.report.late_requests += served.late_requests

    async def release_all(self) -> None:
        for key in list(self.sessions):
            await self.release(key)

    # ---- the MCP server -------------------------------------------------------------------------
    def _server(self) -> Server[Any]:
        server: Server[Any] = Server(
            SERVER_NAME,
            version=_version(),
            instructions="sopbench: one episode per session (docs/mcp.md).",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        server.middleware.append(self._bind_session)
        return server

    async def _bind_session(self, ctx: Any, call_next: Any) -> Any:
        """Bind the session to its episode at its first request; the handshake's answer carries the
        episode's instructions."""
        key = session_key(ctx)
        fresh = key not in self.sessions
        served = await self.bind(key)
        if fresh:
            connection = getattr(ctx.session, "_connection", None)
            stack = getattr(connection, "exit_stack", None)
            if stack is not None and key is connection:
                stack.push_async_callback(self.release, key)
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            result["instructions"] = instructions(served)
        return result

    def _episode(self, ctx: Any) -> ServedEpisode | None:
        return self.sessions.get(session_key(ctx))

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        served = self._episode(ctx)
        tools = listed_tools(served.tools) if served is not None else []
        return types.ListToolsResult.model_validate({"tools": tools})

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        served = self._episode(ctx)
        if served is None:
            return _result(
                Answer("No episode is left to play on this server: every one is stored.", error=True)
            )
        arguments = params.arguments or {}
        if params.name == ASK_USER:
            message = arguments.get("message")
            text = message if isinstance(message, str) else "" if message is None else json.dumps(message)
            return _result(await served.submit(ASK_USER, text))
        meta = (
            params.meta if isinstance(params.meta, dict) else getattr(params.meta, "model_extra", None) or {}
        )
        raw = meta.get(ARGUMENTS_META)
        text = raw if isinstance(raw, str) else json.dumps(arguments)
        return _result(await served.submit(params.name, text))

    async def _list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        served = self._episode(ctx)
        prompts = (
            [
                {
                    "name": PROMPT,
                    "description": f"Episode {served.task_id}: the SOP instructions and the user's opening message.",
                }
            ]
            if served is not None
            else []
        )
        return types.ListPromptsResult.model_validate({"prompts": prompts})

    async def _get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        served = self._episode(ctx)
        if served is None or params.name != PROMPT:
            raise MCPError(code=types.INVALID_PARAMS, message=f"no prompt {params.name!r} in this session")
        return types.GetPromptResult.model_validate(
            {
                "description": f"Episode {served.task_id}",
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": served.instructions}},
                    {"role": "user", "content": {"type": "text", "text": served.opening}},
                ],
            }
        )


def session_key(ctx: Any) -> object:
    """The session a request belongs to: its connection (stdio serves one; over HTTP, one per
    ``Mcp-Session-Id``). A 2026-era request without a session over HTTP is refused."""
    connection = getattr(ctx.session, "_connection", None)
    if connection is None:
        raise MCPError(code=types.INTERNAL_ERROR, message="sopbench mcp: this request has no connection")
    if getattr(connection, "session_id", None) is None and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        if getattr(ctx, "request", None) is not None:  # HTTP without a session: no episode to bind
            raise MCPError(
                code=types.INVALID_REQUEST,
                message="sopbench mcp serve plays one episode per session: connect with the initialize handshake",
            )
        return STDIO
    return connection


STDIO = "stdio"  # the one session of a stdio server


def instructions(served: ServedEpisode | None) -> str:
    if served is None:
        return "sopbench: every episode of this server is stored; no episode is left to play."
    return (
        f"{served.instructions}\n\n"
        f"# The user's opening message\n{served.opening}\n\n"
        f"# How this session works\nThis session is one sopbench episode ({served.task_id}). Talk to the "
        f"user only with the tool {ASK_USER}: its result is the user's reply."
    )


def _result(answer: Answer) -> types.CallToolResult:
    content = [{"type": "text", "text": answer.text}]
    if answer.ended is not None:
        content.append(
            {
                "type": "text",
                "text": f"[sopbench] The episode has ended ({answer.ended}); further calls are refused.",
            }
        )
    return types.CallToolResult.model_validate(
        {
            "content": content,
            "isError": answer.error,
            **({"_meta": {ENDED_META: answer.ended}} if answer.ended is not None else {}),
        }
    )


def _version() -> str:
    from sopbench import __version__

    return __version__


# ---- transports ---------------------------------------------------------------------------------------
async def serve_stdio(server: EpisodeServer) -> None:
    """Serve one session over this process's stdin and stdout, then store its episode."""
    from mcp.server.stdio import stdio_server

    try:
        async with stdio_server() as (read, write):
            await server.server.run(read, write, server.server.create_initialization_options())
    finally:
        await server.release_all()


async def serve_http(server: EpisodeServer, sock: Any) -> None:
    """Serve sessions on the bound socket (127.0.0.1) until the process is stopped; episodes still
    running then are stored as dropped."""
    import uvicorn

    app = server.server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        await server.release_all()


def run_server(server: EpisodeServer, transport: str, sock: Any = None) -> None:
    """Serve until done (stdio: the one session; HTTP: until Ctrl-C or SIGTERM)."""
    if transport == "stdio":
        asyncio.run(serve_stdio(server))
    else:
        asyncio.run(serve_http(server, sock))
