"""The one secret scrubber: a key out of any text, in every form a server or a model may carry it.

A reply is the server's to write: a hostile or broken server may echo the API key it was sent, and
not always as sent. The forms covered, each alone or mixed character by character:

- as sent (so ``Bearer <key>`` too), with or without surrounding white space;
- JSON-escaped: ``\\u0073\\u006b...`` (any case of hex digits, any number of backslashes, so a JSON
  string inside a JSON string too), ``\\/`` for a slash, ``\\"`` for a quote;
- URL-encoded (``%73`` in any case, twice-encoded ``%2573``) and HTML numeric entities (``&#115;``);
- hex (either case);
- base64, standard and URL-safe, with or without padding, alone or inside a longer base64 text
  (``Basic`` credentials, a JSON document encoded whole) at any of the three byte alignments; its
  ``+``/``/`` also JSON- or URL-escaped.

Base64 of a key embedded at byte offset ``o`` encodes the key's bytes from the next multiple of 3 on
in whole 4-character groups that depend on the key alone: that core (all of the key but at most 2
bytes at each end) is what is searched for; the up to 3 characters on each side that mix key bits
with other bytes go too, so that no bit of the key is left. Those neighbours are base64 characters
of the same (now broken) encoded text, never other words: nothing else is lost.

A value shorter than ``MIN_SECRET_LENGTH`` characters is a placeholder, not a credential (local
servers accept any key, and people set ``none`` or ``EMPTY``): scrubbing it would rewrite every
reply that says "none".
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

MASK = "***"
MIN_SECRET_LENGTH = 8
# base64 cores shorter than this (keys under 9 bytes at the worst alignment) would match by chance
_MIN_CORE = 8
_B64_CHAR = r"[A-Za-z0-9+/_\-]"


def _hex_digit(digit: str) -> str:
    return f"[{digit.lower()}{digit.upper()}]" if digit.isalpha() else digit


def _hex(value: int, width: int) -> str:
    return "".join(_hex_digit(d) for d in f"{value:0{width}x}")


def _json_escape(char: str) -> list[str]:
    """How JSON may escape ``char``: ``\\uXXXX`` (a surrogate pair above the BMP), and the short
    escapes; any number of backslashes (an escaped text escaped again)."""
    point = ord(char)
    if point > 0xFFFF:
        high, low = 0xD800 + ((point - 0x10000) >> 10), 0xDC00 + ((point - 0x10000) & 0x3FF)
        forms = [rf"\\+u{_hex(high, 4)}\\+u{_hex(low, 4)}"]
    else:
        forms = [rf"\\+u{_hex(point, 4)}"]
    if char in '/"\\':
        forms.append(r"\\+" + re.escape(char))
    return forms


def _char_pattern(char: str) -> str:
    """Every form one character of a key may take in a text (module docstring)."""
    forms = [re.escape(char), *_json_escape(char)]
    # URL-encoded: each UTF-8 byte as %XX, %25XX when encoded twice
    forms.append("".join(rf"%(?:25)*{_hex(byte, 2)}" for byte in char.encode()))
    forms.append(rf"&#0*{ord(char)};|&#[xX]0*{_hex(ord(char), 1)};")
    if html.escape(char) != char:
        forms.append(re.escape(html.escape(char)))
    return "(?:" + "|".join(forms) + ")"


def _base64_char(char: str) -> str:
    if char in "+-":
        return r"(?:\+|-|%2[bB])"
    if char in "/_":
        return r"(?:/|_|\\+/|%2[fF])"
    return char


def _base64_patterns(key: bytes) -> list[str]:
    patterns = []
    for alignment in range(3):
        skip = (3 - alignment) % 3  # key bytes before the first group boundary
        whole = (len(key) - skip) // 3 * 3
        core = base64.b64encode(key[skip : skip + whole]).decode()
        if len(core) >= _MIN_CORE:
            patterns.append(
                f"{_B64_CHAR}{{0,3}}"
                + "".join(map(_base64_char, core))
                + f"{_B64_CHAR}{{0,3}}(?:=|%3[dD]){{0,2}}"
            )
    return patterns


def _patterns(secret: str) -> list[str]:
    key = secret.encode()
    return [
        "".join(_char_pattern(char) for char in secret),
        _hex(int.from_bytes(key, "big"), 2 * len(key)),
        *_base64_patterns(key),
    ]


@lru_cache(maxsize=64)
def _compiled(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    patterns = [pattern for secret in secrets for pattern in _patterns(secret)]
    return re.compile("|".join(patterns)) if patterns else None


class Scrubber:
    """``scrub(text)``: ``text`` with every form of every secret (module docstring) replaced by
    ``***``. ``scrub.value(x)`` does it to every string of a JSON-like value (keys included).

    Build one per set of secrets (the pattern is compiled once and cached); a scrubber without a
    secret of ``MIN_SECRET_LENGTH`` characters or more is false and returns texts unchanged.
    """

    def __init__(self, secrets: Iterable[str | None]) -> None:
        kept = {s.strip() for s in secrets if s and len(s.strip()) >= MIN_SECRET_LENGTH}
        self.secrets: tuple[str, ...] = tuple(sorted(kept, key=lambda s: (-len(s), s)))
        self._pattern = _compiled(self.secrets)

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __repr__(self) -> str:  # never the secrets themselves
        return f"Scrubber({len(self.secrets)} secret(s))"

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(MASK, text)

    def value(self, value: Any) -> Any:
        """``value`` with every string in it scrubbed: dicts (keys too), lists and tuples rebuilt,
        anything else as it is."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self(value)
        if isinstance(value, Mapping):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.value(v) for v in value)
        return value


def scrub_secret(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` replaced by ``***`` in every form (``Scrubber``)."""
    return Scrubber([secret])(text)
