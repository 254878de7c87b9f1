"""How long an episode takes against a local server: measured with two short requests, then scaled to
the size of an episode.

A CPU model's time goes into reading the prompt (the first request of an episode carries the system
prompt with every tool: about 5 K tokens in fc mode, 7 K in react, more for the largest domains) and
into writing the replies. ``measure_speed`` times one request with a long prompt and a one-token reply
(the prompt rate), and one with a short prompt and a longer reply (the writing rate).
"""

from __future__ import annotations

import json
import time
import urllib.request
from dataclasses import dataclass

# The size of a typical episode, as the estimate assumes it (and says so when printed).
EPISODE_PROMPT_TOKENS = 7000  # read once: later requests reuse the server's prompt cache
EPISODE_REPLIES = 5
REPLY_TOKENS = 128
PROBE_TIMEOUT_S = 120.0
_LONG_PROMPT = "Read this line and answer with one word. " * 120  # about 1,000 tokens
_SHORT_PROMPT = "Count from one to one hundred in words, separated by commas."


@dataclass(frozen=True)
class Speed:
    """Tokens per second the server reads (prompt) and writes (completion)."""

    prompt_tps: float
    completion_tps: float

    def seconds_per_episode(self) -> float:
        return EPISODE_PROMPT_TOKENS / self.prompt_tps + EPISODE_REPLIES * REPLY_TOKENS / self.completion_tps

    def describe(self) -> str:
        return (
            f"about {self.seconds_per_episode():.0f} s per episode (measured: {self.prompt_tps:.0f} prompt "
            f"tokens/s, {self.completion_tps:.1f} generated tokens/s; an episode taken as "
            f"{EPISODE_PROMPT_TOKENS:,} prompt tokens and {EPISODE_REPLIES} replies of {REPLY_TOKENS} tokens)"
        )


def _timed(base_url: str, model: str, prompt: str, max_tokens: int, timeout: float) -> tuple[int, int, float]:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "temperature": 0,
    }
    request = urllib.request.Request(
        f"{base_url}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=timeout) as response:
        usage = json.loads(response.read())["usage"]
    return int(usage["prompt_tokens"]), int(usage["completion_tokens"]), time.perf_counter() - started


def measure_speed(base_url: str, model: str, timeout: float = PROBE_TIMEOUT_S) -> Speed:
    """The server's reading and writing rates (``OSError``, ``KeyError`` or ``ValueError`` when it
    does not answer as an OpenAI-compatible server with usage)."""
    prompt, _, read_s = _timed(base_url, model, _LONG_PROMPT, 1, timeout)
    short_prompt, written, write_s = _timed(base_url, model, _SHORT_PROMPT, 64, timeout)
    prompt_tps = prompt / max(read_s, 1e-6)
    # the short request also read its prompt: take that time out of its writing time
    writing_s = max(write_s - short_prompt / prompt_tps, 1e-6)
    return Speed(prompt_tps, max(written, 1) / writing_s)
