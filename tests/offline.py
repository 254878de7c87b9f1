"""No network inside a test: connections and name look-ups beyond loopback are refused.

``block_network(monkeypatch)`` patches the socket layer every client goes through (``connect``,
``connect_ex``, ``getaddrinfo``, ``create_connection``), in every thread of the test process, for the
rest of the test; loopback stays open for the servers tests start on 127.0.0.1.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest

REFUSED = "network blocked by the test (only loopback is allowed)"


def _is_loopback(host: Any) -> bool:
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def block_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Refuse every non-loopback connection or look-up; returns the list of refused hosts."""
    refused: list[str] = []
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def check(host: Any) -> None:
        if not _is_loopback(host):
            refused.append(str(host))
            raise OSError(f"{REFUSED}: {host}")

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        check(host)
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            check(address[0])
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            check(address[0])
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    return refused
