"""The ReAct / act-only reply parser takes time linear in the reply: no reply a model can write
stalls an episode (a reply of 60,000 spaces once took 16 s)."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from sopbench.agents.openai import parse_text_reply

# The pieces the parser's patterns look for, and the characters they repeat over.
PIECES = [
    " ",
    "\t",
    "\n",
    "*",
    "#",
    ">",
    "<",
    ":",
    "_",
    "**",
    "Action",
    "action",
    "Action Input",
    "Input",
    "Thought",
    "thought",
    "Observation",
    "end",
    "End Action",
    "<End Action>",
    "N/A",
    "{",
    "}",
    '"',
    "x",
]
LENGTH = 100_000


@st.composite
def adversarial_replies(draw) -> str:
    """A few pieces, each repeated over a long run, then padded to 100,000 characters."""
    parts = draw(st.lists(st.tuples(st.sampled_from(PIECES), st.integers(1, 60_000)), min_size=1, max_size=4))
    text = "".join(piece * count for piece, count in parts)
    filler = draw(st.sampled_from(PIECES))
    text = (text + filler * (LENGTH // len(filler) + 1))[:LENGTH]
    return text


@settings(max_examples=60, deadline=None)
@given(adversarial_replies())
def test_any_100000_character_reply_is_parsed_in_under_100_ms(reply):
    started = time.perf_counter()
    parse_text_reply(reply)
    assert time.perf_counter() - started < 0.1


def test_the_replies_that_once_stalled_the_parser_are_parsed_at_once():
    for reply in (" " * 60_000, " " * 100_000, "\n" * 100_000, "Thought" + " " * 100_000, "*" * 100_000):
        started = time.perf_counter()
        parse_text_reply(reply)
        assert time.perf_counter() - started < 0.1
