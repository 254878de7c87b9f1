"""The scrubber takes time linear in the text, whatever a server sends: a reply is scrubbed in the
event loop, so a text that made it backtrack (a run of 500,000 backslashes once took 4 minutes)
would stall every episode of the run. The bound is generous (a quadratic scan takes minutes)."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

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


@st.composite
def adversarial_texts(draw) -> str:
    parts = draw(st.lists(st.tuples(st.sampled_from(PIECES), st.integers(1, 60_000)), min_size=1, max_size=4))
    text = "".join(piece * count for piece, count in parts)
    filler = draw(st.sampled_from(PIECES))
    return (text + filler * (LENGTH // len(filler) + 1))[:LENGTH]


@settings(max_examples=40, deadline=None)
@given(adversarial_texts(), st.sampled_from(KEYS))
def test_any_100000_character_text_is_scrubbed_in_under_a_second(text, key):
    scrub = Scrubber([key])
    started = time.perf_counter()
    scrub(text)
    assert time.perf_counter() - started < 1.0
