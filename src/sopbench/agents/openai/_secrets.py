"""What a message or a stored setting may show of an endpoint: URLs without credentials, texts
without the API key (some servers echo the key they rejected)."""

from __future__ import annotations

import re
from urllib.parse import quote, quote_plus, urlsplit, urlunsplit

_SECRET_QUERY = re.compile(r"key|token|secret|sig|pass|auth", re.IGNORECASE)


def redact_url(url: str) -> str:
    """``url`` without user information, and with the values of query parameters that look like
    credentials (``api-key``, ``token``, ...) replaced by ``***``: safe to store, still the same
    endpoint for everything else (path, other parameters)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    query = "&".join(
        f"{name}=***" if _SECRET_QUERY.search(name) and sep else pair
        for pair in parts.query.split("&")
        if pair
        for name, sep, _value in [pair.partition("=")]
    )
    return urlunsplit((parts.scheme, host, parts.path, query, parts.fragment))


def public_url(url: str) -> str:
    """``url`` without user information, query or fragment: safe to print."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def scrub_secret(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` replaced by ``***`` in every form a server or URL may show it:
    as set, stripped of surrounding white space, and percent-encoded."""
    if not secret:
        return text
    forms = {secret, secret.strip(), quote(secret, safe=""), quote(secret.strip(), safe="")}
    forms |= {quote_plus(form) for form in list(forms)}
    for form in sorted((f for f in forms if len(f) >= 4), key=len, reverse=True):
        text = text.replace(form, "***")
    return text
