"""sopbench over the Model Context Protocol (the optional extra ``pip install 'sopbench[mcp]'``).

``sopbench mcp serve`` serves a run folder's episodes to any MCP client, one episode per session:
the session's tools are ``run``'s offered tools (same names, schemas, descriptions) plus
``ask_user``, through which the agent talks to the simulated user; its instructions and its prompt
``task`` are the SOP instructions and the user's opening message. Each episode is played by the
runner's own loop, scored by the same evaluator and stored in the folder's store under the same
manifest, lock and resume rules as ``sopbench run`` (docs/mcp.md).

``sopbench run --via mcp`` drives one of sopbench's agents through a real MCP client session
against ``sopbench mcp serve`` over stdio (``mcp_player``): the parity proof.

Only this package imports ``mcp``: the names below that need it load on first use (an
``ImportError`` naming the extra when it is absent); the rest load without it.
"""

from __future__ import annotations

from sopbench._extras import lazy_names

from ._episode import AGENT_NAME, Answer, ServedEpisode, SessionAgent
from ._tools import ASK_USER, ASK_USER_SCHEMA, listed_tools, mcp_tool, openai_schema

_LAZY = {
    "EpisodeServer": "_server",
    "ServeReport": "_server",
    "run_server": "_server",
    "session_key": "_server",
    "mcp_player": "_client",
    "play_via_mcp": "_client",
    "server_argv": "_client",
    "guard_argv": "_client",
    "guard_refusals": "_client",
}


__getattr__ = lazy_names(__name__, _LAZY, "mcp", ("mcp", "mcp_types", "uvicorn"))


def available() -> bool:
    """Whether the MCP SDK (the extra ``mcp``) is installed."""
    import importlib.util

    # A folder named mcp on the path (a checkout's tests/mcp) is a namespace package, not the SDK.
    for name in ("mcp", "mcp_types"):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            return False
    return True


__all__ = [
    "AGENT_NAME",
    "ASK_USER",
    "ASK_USER_SCHEMA",
    "Answer",
    "ServedEpisode",
    "SessionAgent",
    "available",
    "listed_tools",
    "mcp_tool",
    "openai_schema",
    *_LAZY,
]
