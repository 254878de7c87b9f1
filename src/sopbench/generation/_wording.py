"""What the simulated user is told and says first: seeded templates with varied wording.

``user_instruction`` describes the goal in the second person (for an LLM user simulator);
``user_prompt`` is the first user message: the request and every value the user knows.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from sopbench.domains import Domain

_INSTRUCTIONS = (
    "You are a customer who wants the assistant to {action}. {purpose}",
    "Your goal in this conversation: get the assistant to {action}. {purpose}",
    "You contact the service because you need to {action}. {purpose}",
    "You would like to {action}, and you ask the assistant for help. {purpose}",
)
_CLOSINGS = (
    "Give the details you know when asked, and accept the assistant's answer if it cannot help.",
    "Answer the assistant's questions with the details below; if it refuses, ask once why, then end the chat.",
    "Share what you know when it is needed; do not invent details you were not given.",
)
_OPENINGS = (
    "Hi, I'd like to {action}.",
    "Hello! Could you help me {action}?",
    "Good afternoon. I need to {action}, please.",
    "Hey there, can you {action} for me?",
    "Hi, I'm hoping you can {action} today.",
)
_DETAIL_INTROS = ("Here are my details:", "The details you may need:", "In case it helps:", "For reference:")


def _action(goal: str) -> str:
    return goal.replace("_", " ").replace("dl", "driver's licence").strip()


def _purpose(domain: Domain, goal: str) -> str:
    spec = domain.tools.get(goal)
    text = (spec.description if spec else "").strip()
    return f"The service does this: {text[0].lower()}{text[1:]}" if text else ""


def _shown(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def user_instruction(domain: Domain, goal: str, rng: random.Random) -> str:
    text = rng.choice(_INSTRUCTIONS).format(action=_action(goal), purpose=_purpose(domain, goal))
    return f"{text.strip()} {rng.choice(_CLOSINGS)}"


def user_prompt(goal: str, known: Mapping[str, Any], rng: random.Random) -> str:
    opening = rng.choice(_OPENINGS).format(action=_action(goal))
    if not known:
        return opening
    if rng.random() < 0.5:
        details = " ".join(
            f"My {name.replace('_', ' ')} is {_shown(value)}." for name, value in known.items()
        )
    else:
        details = (
            "; ".join(f"{name.replace('_', ' ')}: {_shown(value)}" for name, value in known.items()) + "."
        )
    return f"{opening} {rng.choice(_DETAIL_INTROS)} {details}"
