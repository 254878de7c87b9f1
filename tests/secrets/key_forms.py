"""The forms of a key a hostile server may echo, and a leak finder that knows them without the
scrubber's help (shared by the scrubber's tests and the end-to-end test of every artefact)."""

from __future__ import annotations

import base64
import html
import json
import re
from urllib.parse import quote, quote_plus, unquote

# a key with the characters that JSON and URLs escape ('/', '+', '=')
KEY = "sk-proj-Ab3/De+Fg9_hIjK-LmNoPq0RsTuVwXyZ12345678=="
# pieces of the key that are not the public "sk-proj-" prefix: none may survive a scrub
PIECES = ("Ab3", "hIjK", "LmNoPq", "RsTuVw", "12345678")


def json_escaped(text: str, upper: bool = False) -> str:
    return "".join(f"\\u{ord(c):04X}" if upper else f"\\u{ord(c):04x}" for c in text)


# bytes around the key in the base64 forms: (before, after) by form name
BASE64_SIDES: dict[str, tuple[bytes, bytes]] = {}


def base64_forms(key: str) -> dict[str, str]:
    """The key alone and inside longer base64 texts, at each of the 3 byte alignments, standard and
    URL-safe, with and without padding."""
    forms = {}
    for before in (b"", b"x", b"xy", b"Bearer ", b"user:", b'{"authorization": "'):
        for after in (b"", b"z", b"zz", b'", "more": "bytes"}'):
            raw = before + key.encode() + after
            for name, text in (
                (f"base64 {before!r}+key+{after!r}", base64.b64encode(raw).decode()),
                (
                    f"base64url {before!r}+key+{after!r} unpadded",
                    base64.urlsafe_b64encode(raw).decode().rstrip("="),
                ),
            ):
                forms[name] = text
                BASE64_SIDES[name] = (before, after)
    return forms


def forms_of(key: str) -> dict[str, str]:
    """Every form of ``key`` a reply may carry (the end-to-end test serves the same ones)."""
    return {
        "as sent": key,
        "bearer": f"Bearer {key}",
        "json-escaped": json_escaped(key),
        "json-escaped upper": json_escaped(key, upper=True),
        "escaped slashes": key.replace("/", "\\/"),
        "json string in a json string": json.dumps(json.dumps(key))[1:-1],
        "url-encoded": quote(key, safe=""),
        "url-encoded plus": quote_plus(key),
        "url-encoded every byte": "".join(f"%{b:02x}" for b in key.encode()),
        "url-encoded twice": quote(quote(key, safe=""), safe=""),
        "html entities": "".join(f"&#{ord(c)};" for c in key),
        "hex": key.encode().hex(),
        **base64_forms(key),
    }


def needles(key: str) -> list[str]:
    """What betrays ``key`` in a text once decoded (``views``): stretches of the key itself, and of
    its hex and its base64 at each byte alignment, in both alphabets."""
    raw = key.encode()
    found = [key[i : i + 10] for i in range(8, len(key) - 10, 6)]  # past a public "sk-" prefix
    hexed = raw.hex()
    found += [hexed[20:40], hexed[20:40].upper()]
    for skip in range(3):
        core = base64.b64encode(raw[skip : skip + (len(raw) - skip) // 3 * 3]).decode()
        middle = core[8:24]
        found += [middle, middle.translate(str.maketrans("+/", "-_"))]
    return found


_JSON_ESCAPE = re.compile(r"\\+u([0-9a-fA-F]{4})|\\+(/)")


def views(text: str) -> list[str]:
    """``text`` and what it says once unescaped: JSON escapes (at any depth), URL encoding (twice),
    HTML entities."""
    unescaped = text
    for _ in range(3):
        unescaped = _JSON_ESCAPE.sub(lambda m: m.group(2) or chr(int(m.group(1), 16)), unescaped)
    found = [text, unescaped, html.unescape(text), html.unescape(unescaped)]
    found += [unquote(unquote(form)) for form in list(found)]
    return found


def leaks(text: str, keys: list[str]) -> list[str]:
    """The needles of ``keys`` found in any view of ``text`` (empty: nothing betrays a key)."""
    seen = views(text)
    return sorted({needle for key in keys for needle in needles(key) for view in seen if needle in view})
