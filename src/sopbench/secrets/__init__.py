"""Secrets never reach a file or a screen: the one scrubber, and URLs without credentials.

Everything that writes what a server or a model sent (the chat endpoint's replies and errors, a
model-call cache, an MCP bridge) passes it through a ``Scrubber`` built from the secrets in play::

    from sopbench.secrets import Scrubber
    scrub = Scrubber([os.environ.get("OPENAI_API_KEY")])
    safe_text = scrub(text)          # the key in any form (as sent, JSON-escaped, URL-encoded, base64)
    safe_value = scrub.value(reply)  # every string of a JSON-like value

``redact_url`` keeps an endpoint URL safe to store (no user information, credential-looking query
values masked), ``public_url`` safe to print, ``url_credentials`` names what a URL carries.
"""

from ._scrub import MASK, MIN_SECRET_LENGTH, Scrubber, scrub_secret
from ._urls import public_url, redact_url, url_credentials

__all__ = [
    "MASK",
    "MIN_SECRET_LENGTH",
    "Scrubber",
    "public_url",
    "redact_url",
    "scrub_secret",
    "url_credentials",
]
