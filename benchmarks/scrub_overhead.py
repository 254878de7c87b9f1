"""What scrubbing the key out of every reply costs: ``read_completion`` with the endpoint's scrubber
(a 51-character key) against the same without a key, on the replies a run reads most (a tool call,
a message, a ReAct turn, a 4 KB message), and the scrubber alone on 1 MB of prose and of base64.

    python benchmarks/scrub_overhead.py

Prints a table on stderr and one JSON document on stdout (microseconds per reply and the ratio to
the baseline measured in the same run).
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from collections.abc import Callable

from sopbench.agents.openai import read_completion
from sopbench.secrets import Scrubber

KEY = "sk-proj-Ab3De4Fg9hIjK-LmNoPq0RsTuVwXyZ12345678abcdEFGHijk"


def body(message: dict) -> str:
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return json.dumps(
        {"id": "c", "object": "chat.completion", "choices": [choice], "usage": {"prompt_tokens": 900}}
    )


REPLIES = {
    "tool call": body(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {
                        "name": "login_user",
                        "arguments": '{"username": "john_doe", "identification": "x1"}',
                    },
                }
            ],
        }
    ),  # fmt: skip
    "message": body(
        {"role": "assistant", "content": "I checked what I could; I cannot complete this request."}
    ),
    "react turn": body(
        {
            "role": "assistant",
            "content": "Thought: verify the user first.\nAction: login_user\n"
            'Action Input: {"username": "john_doe", "identification": "x1"}\n<End Action>',
        }
    ),  # fmt: skip
    "4 KB message": body(
        {"role": "assistant", "content": "Your balance and recent transactions follow. " * 90}
    ),
}


def per_call_us(work: Callable[[], object], seconds: float = 0.4) -> float:
    calls, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        work()
        calls += 1
    return (time.perf_counter() - started) / calls * 1e6


def main() -> None:
    scrub, none = Scrubber([KEY]), Scrubber([])
    figures = {}
    for name, text in REPLIES.items():
        baseline = per_call_us(lambda text=text: read_completion(text, none))
        scrubbed = per_call_us(lambda text=text: read_completion(text, scrub))
        figures[name] = {"baseline_us": round(baseline, 1), "scrubbed_us": round(scrubbed, 1),
                         "ratio": round(scrubbed / baseline, 2)}  # fmt: skip
    for name, text in (("1 MB prose", "lorem ipsum dolor sit amet " * 38_000),
                       ("1 MB base64", base64.b64encode(os.urandom(750_000)).decode())):  # fmt: skip
        figures[name] = {"scrubbed_us": round(per_call_us(lambda text=text: scrub(text), 1.0), 1)}
    for name, row in figures.items():
        print(f"{name:>14}: " + ", ".join(f"{k} {v}" for k, v in row.items()), file=sys.stderr)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
