"""The one secret scrubber: a key out of any text, in every form a server or a model may carry it.

A reply is the server's to write: a hostile or broken server may echo the API key it was sent, and
not always as sent. The forms covered, each alone or mixed character by character:

- as sent (so ``Bearer <key>`` too), with or without surrounding white space;
- JSON-escaped: ``\\u0073\\u006b...`` (any case of hex digits, up to 15 backslashes, so a JSON
  string inside JSON strings up to four deep), ``\\/`` for a slash, ``\\"`` for a quote;
- URL-encoded (``%73`` in any case, re-encoded ``%2573`` up to 4 times) and HTML numeric entities
  (``&#115;``);
- hex (either case);
- base64, standard and URL-safe, with or without padding, alone or inside a longer base64 text
  (``Basic`` credentials, a JSON document encoded whole) at any of the three byte alignments; its
  ``+``/``/`` also JSON- or URL-escaped.

Base64 of a key embedded at byte offset ``o`` encodes the key's bytes from the next multiple of 3 on
in whole 4-character groups that depend on the key alone: that core (all of the key but at most 2
bytes at each end) is what is searched for; the up to 3 characters on each side that mix key bits
with other bytes go too, so that no bit of the key is left. Only characters of the base64 alphabet
are taken that way: the neighbours in the same (now broken) encoded text. Not covered: base64 cut
into lines inside the key (MIME's 76 columns), and encodings stacked in other orders (the base64 of
a URL-encoded key).

A value shorter than ``MIN_SECRET_LENGTH`` characters is a placeholder, not a credential (local
servers accept any key, and people set ``none`` or ``EMPTY``): scrubbing it would rewrite every
reply that says "none".
"""

from __future__ import annotations

import base64
import html
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MASK = "***"
ASCII_SPACE = " \t\n\r\x0b\x0c"
MIN_SECRET_LENGTH = 8
# base64 cores shorter than this (keys under 9 bytes at the worst alignment) would match by chance
_MIN_CORE = 8
_B64_ALPHABET = frozenset(string.ascii_letters + string.digits + "+/_-")
# 1, 3, 7, 15: a JSON string escaped up to four times (a literal first: see _char_pattern)
_BACKSLASHES = r"\\\\{0,14}"


def _hex_digit(digit: str) -> str:
    return f"[{digit.lower()}{digit.upper()}]" if digit.isalpha() else digit


def _hex(value: int, width: int) -> str:
    return "".join(_hex_digit(d) for d in f"{value:0{width}x}")


def _json_escape(char: str) -> list[str]:
    """How JSON may escape ``char``: ``\\uXXXX`` (a surrogate pair above the BMP), and the short
    escapes; with up to 15 backslashes (an escaped text escaped again, four levels deep)."""
    point = ord(char)
    if point > 0xFFFF:
        high, low = 0xD800 + ((point - 0x10000) >> 10), 0xDC00 + ((point - 0x10000) & 0x3FF)
        forms = [rf"{_BACKSLASHES}u{_hex(high, 4)}{_BACKSLASHES}u{_hex(low, 4)}"]
    else:
        forms = [rf"{_BACKSLASHES}u{_hex(point, 4)}"]
    if char in '/"':
        forms.append(_BACKSLASHES + re.escape(char))
    return forms


def _char_pattern(char: str, first: bool = False) -> str:
    """Every form one character of a key may take in a text (module docstring), each of bounded
    length. Their first characters differ (the character itself, a backslash, ``%``, ``&``), so the
    group is atomic (no backtracking into it: a text is scanned in time linear in its length,
    whatever runs of backslashes or percent signs it holds), except for a key's own ``%`` or ``&``,
    whose plain form may begin an encoded one. The first character's group is a plain one whose
    forms each start with a literal: the regex engine then skips, in C, every position that cannot
    start the key (scrubbing ordinary text costs about a tenth)."""
    forms = [re.escape(char), *_json_escape(char)]
    # URL-encoded: each UTF-8 byte as %XX, %25XX when encoded again
    forms.append("".join(rf"%(?:25){{0,3}}{_hex(byte, 2)}" for byte in char.encode()))
    forms.append(rf"&#0{{0,6}}{ord(char)};|&#[xX]0{{0,6}}{_hex(ord(char), 1)};")
    if html.escape(char) != char:
        forms.append(re.escape(html.escape(char)))
    return ("(?:" if first or char in "%&" else "(?>") + "|".join(forms) + ")"


# A key's run of backslashes: any run of backslashes (as sent, or each escaped), taken whole and
# never given back (the next character of the key is not one); a run that starts the key starts at
# the first backslash of the text's run (trying each would be quadratic in its length).
_BACKSLASH_RUN = rf"(?:{_BACKSLASHES}u005[cC]|%(?:25){{0,3}}5[cC]|&#0{{0,6}}92;|&#[xX]0{{0,6}}5[cC];|\\(?!u[0-9a-fA-F]{{4}}))++"


def _key_pattern(secret: str) -> str:
    parts = []
    for i, run in enumerate(re.findall(r"\\+|[^\\]", secret)):
        if run.startswith("\\"):
            parts.append(("(?<!\\\\)" if i == 0 else "") + _BACKSLASH_RUN)
        else:
            parts.append(_char_pattern(run, first=i == 0))
    return "".join(parts)


def _base64_char(char: str) -> str:
    if char in "+-":
        return r"(?:\+|-|%2[bB])"
    if char in "/_":
        return rf"(?:/|_|{_BACKSLASHES}/|%2[fF])"
    return char


def _base64_cores(key: bytes) -> list[str]:
    """The base64 of ``key``'s whole 3-byte groups at each alignment (module docstring)."""
    patterns = []
    for alignment in range(3):
        skip = (3 - alignment) % 3  # key bytes before the first group boundary
        whole = (len(key) - skip) // 3 * 3
        core = base64.b64encode(key[skip : skip + whole]).decode()
        if len(core) >= _MIN_CORE:
            patterns.append("".join(map(_base64_char, core)))
    return patterns


@dataclass(frozen=True, slots=True)
class _Patterns:
    # One pattern per form, never an alternation of them: a pattern that starts with a literal (or
    # a group of alternatives that each do) is searched for by the engine's fast scan.
    forms: tuple[re.Pattern[str], ...]  # as sent, escaped, encoded; hex
    cores: tuple[re.Pattern[str], ...]  # base64 cores, widened by hand (a leading class is slow)


@lru_cache(maxsize=64)
def _compiled(secrets: tuple[str, ...]) -> _Patterns | None:
    if not secrets:
        return None
    forms = [form for secret in secrets for form in (_key_pattern(secret), _hex_pattern(secret))]
    cores = [core for secret in secrets for core in _base64_cores(secret.encode())]
    return _Patterns(tuple(map(re.compile, forms)), tuple(map(re.compile, cores)))


def _hex_pattern(secret: str) -> str:
    key = secret.encode()
    return _hex(int.from_bytes(key, "big"), 2 * len(key))


def _widened(text: str, start: int, end: int) -> tuple[int, int]:
    """A base64 core's span with the up to 3 characters on each side that mix in key bits, and the
    padding after them."""
    for _ in range(3):
        if start > 0 and text[start - 1] in _B64_ALPHABET:
            start -= 1
    for _ in range(3):
        if end < len(text) and text[end] in _B64_ALPHABET:
            end += 1
    for _ in range(2):
        if text.startswith("=", end):
            end += 1
        elif text[end : end + 3].lower() == "%3d":
            end += 3
    return start, end


class Scrubber:
    """``scrub(text)``: ``text`` with every form of every secret (module docstring) replaced by
    ``***``. ``scrub.value(x)`` does it to every string of a JSON-like value (keys included).

    Build one per set of secrets (the pattern is compiled once and cached); a scrubber without a
    secret of ``MIN_SECRET_LENGTH`` characters or more is false and returns texts unchanged.
    """

    def __init__(self, secrets: Iterable[str | None]) -> None:
        # Only ASCII whitespace around a secret is dropped (a key read from a file or a variable often
        # ends in a newline); str.strip() would also eat a no-break space that is part of the key.
        trimmed = (s.strip(ASCII_SPACE) for s in secrets if s)
        kept = {s for s in trimmed if len(s) >= MIN_SECRET_LENGTH}
        self.secrets: tuple[str, ...] = tuple(sorted(kept, key=lambda s: (-len(s), s)))
        self._pattern = _compiled(self.secrets)

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __repr__(self) -> str:  # never the secrets themselves
        return f"Scrubber({len(self.secrets)} secret(s))"

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        for form in self._pattern.forms:
            text = form.sub(MASK, text)
        found = sorted(_widened(text, *m.span()) for core in self._pattern.cores for m in core.finditer(text))
        if not found:
            return text
        spans = [found[0]]
        for start, end in found[1:]:
            if start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
            else:
                spans.append((start, end))
        pieces, done = [], 0
        for start, end in spans:
            pieces += [text[done:start], MASK]
            done = end
        return "".join(pieces) + text[done:]

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
