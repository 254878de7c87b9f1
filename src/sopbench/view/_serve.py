"""Serving the viewer with uvicorn on a socket bound before it starts, so its URL can be printed."""

from __future__ import annotations

import gc
import ipaddress
import socket
from collections.abc import Callable

import uvicorn
from starlette.applications import Starlette

__all__ = ["LOCAL_HOST", "bind", "is_loopback", "serve", "url_of"]

LOCAL_HOST = "127.0.0.1"


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free port); raises ``OSError``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if not self.should_exit:
            self._on_ready()


def serve(app: Starlette, sock: socket.socket, on_ready: Callable[[], None]) -> None:
    """Serve ``app`` on ``sock`` until Ctrl-C or SIGTERM; ``on_ready`` once it accepts requests.

    uvicorn handles the signal (finishing requests in flight) and raises it again once stopped, so
    the caller sees ``KeyboardInterrupt`` after a clean shutdown.
    """
    # The loaded episodes are millions of long-lived objects: without this, the cyclic collector
    # walks them all now and then while serving (a full collection took about a second on the
    # published dev set, landing on whichever request triggered it).
    gc.collect()
    gc.freeze()
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    _Server(config, on_ready).run(sockets=[sock])
