"""The runtime guard as an MCP proxy, in front of any MCP server (``sopbench guard proxy``).

>>> from sopbench.guard import Guard
>>> from sopbench.guard_proxy import run_proxy  # doctest: +SKIP
>>> with open("decisions.jsonl", "ab") as log:  # doctest: +SKIP
...     run_proxy(Guard.from_file("sop.json"), ["python", "my_server.py"], log)

The client talks to the proxy as it would to the server (stdio); each ``tools/call`` is judged by
the guard before the server sees it (see ``_proxy``). Needs the optional extra ``mcp``
(``pip install 'sopbench[mcp]'``): importing this package without it raises ``ImportError`` with
that hint.
"""

try:
    import mcp.types  # noqa: F401 - a module of the SDK: a folder named mcp on the path is not it
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        "sopbench.guard_proxy needs the optional extra mcp: pip install 'sopbench[mcp]'", name=exc.name
    ) from exc

from ._log import CANCELLED, OK, PROTOCOL_ERROR, TOOL_ERROR, UPSTREAM_EXITED, Counts, DecisionLog
from ._proxy import MAX_LINE_BYTES, UPSTREAM_GONE, ProxyReport, UpstreamFailed, run_proxy

__all__ = [
    "CANCELLED",
    "MAX_LINE_BYTES",
    "OK",
    "PROTOCOL_ERROR",
    "TOOL_ERROR",
    "UPSTREAM_EXITED",
    "UPSTREAM_GONE",
    "Counts",
    "DecisionLog",
    "ProxyReport",
    "UpstreamFailed",
    "run_proxy",
]
