"""What a message or a stored setting may show of an endpoint URL: no user information, no values of
query parameters that look like credentials."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit, urlunsplit

_SECRET_QUERY = re.compile(r"key|token|secret|sig|pass|auth", re.IGNORECASE)


def _host(url: str) -> tuple[str, ...]:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return parts.scheme, host, parts.path, parts.query, parts.fragment


def redact_url(url: str) -> str:
    """``url`` without user information, and with the values of query parameters that look like
    credentials (``api-key``, ``token``, ...) replaced by ``***``: safe to store, still the same
    endpoint for everything else (path, other parameters)."""
    scheme, host, path, query, fragment = _host(url)
    query = "&".join(
        f"{name}=***" if _SECRET_QUERY.search(name) and sep else pair
        for pair in query.split("&")
        if pair
        for name, sep, _value in [pair.partition("=")]
    )
    return urlunsplit((scheme, host, path, query, fragment))


def public_url(url: str) -> str:
    """``url`` without user information, query or fragment: safe to print."""
    scheme, host, path, _query, _fragment = _host(url)
    return urlunsplit((scheme, host, path, "", ""))


def url_credentials(url: str) -> list[str]:
    """The credentials ``url`` carries (decoded): its password and the values of query parameters
    that look like credentials. A scrubber takes them as secrets: a server may echo its own URL."""
    parts = urlsplit(url)
    found = [unquote(parts.password)] if parts.password else []
    for pair in parts.query.split("&"):
        name, sep, value = pair.partition("=")
        if sep and value and _SECRET_QUERY.search(name):
            found.append(unquote(value))
    return found
