"""The scrubber takes time linear in the text, whatever a server sends: a reply is scrubbed in the
event loop, so a text that made it backtrack (a run of 500,000 backslashes once took 4 minutes)
would stall every episode of the run. The bound is generous (a quadratic scan takes minutes)."""

from __future__ import annotations

import time

import pytest

from sopbench.secrets import Scrubber

KEYS = ["sk-proj-Ab3/De+Fg9_hIjK-LmNoPq0RsTuVwXyZ12345678==", '\\\\\\\\%%&&""//abcdefgh', "%25%25%25%25&#&#x"]
# what the patterns look for, and the characters they repeat over
PIECES = [
    "\\",
    "\\u",
    "\\u00",
    "%",
    "%25",
    "%2",
    "&#",
    "&#0",
    "&#x",
    "s",
    "sk-",
    "A",
    "+",
    "/",
    "=",
    "0",
    "u005c",
]
LENGTH = 100_000


def runs(first: str, second: str) -> str:
    """Half a run of one piece, then a run of another, 100,000 characters in all."""
    half = first * (LENGTH // 2 // len(first))
    return (half + second * (LENGTH // len(second) + 1))[:LENGTH]


TEXTS = [runs(a, b) for a in PIECES for b in (a, "x", *PIECES[::4])]


@pytest.mark.parametrize("key", KEYS)
def test_any_100000_character_text_is_scrubbed_in_under_a_second(key):
    scrub = Scrubber([key])
    for text in TEXTS:
        started = time.perf_counter()
        scrub(text)
        assert time.perf_counter() - started < 1.0, text[:20]
