"""The built-in users: ``none`` (the published loop's fixed replies) and ``scripted`` (replies from a file)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import field_validator

from sopbench._io import LoadError, read_json
from sopbench.domains import EXIT_TOOL

from ._options import Options, option
from ._protocol import EpisodeSetup, Message, User, UserTurn, register_user


def known_values_reply(setup: EpisodeSetup) -> str:
    """The fixed reply of the published loop, in our words: what the user knows, and how to finish."""
    known = json.dumps(setup.task.user_known, indent=4, ensure_ascii=False)
    return (
        f"Here is all the information I have:\n{known}\n"
        f"Please go ahead with my request. When it is done, or if it cannot be done, call {EXIT_TOOL}."
    )


@register_user("none")
class NoUser(User):
    """No simulated person: the first message is the task's ``user_prompt``, verbatim; every later
    reply gives the user's known values and asks the agent to call ``exit_conversation`` when done."""

    name = "none"

    async def start(self, setup: EpisodeSetup) -> None:
        self.setup = setup
        self.text = known_values_reply(setup)

    async def opening(self) -> UserTurn:
        return UserTurn(self.setup.task.user_prompt)

    async def reply(self, messages: Sequence[Message]) -> UserTurn:
        return UserTurn(self.text)


class ScriptError(ValueError):
    """A user script that cannot be used, with the file and the reason."""


def load_script(path: str | Path) -> dict[str, Any]:
    """A user script: ``{"opening": str?, "replies": [str, ...], "tasks": {task_id: {...}}?}``, or a
    plain list of replies. ``{user_prompt}`` and ``{user_known}`` in a text are filled in per task."""
    path = Path(path)
    try:
        data = read_json(path)
    except LoadError as exc:
        raise ScriptError(f"{path}: cannot read the user script ({exc.message})") from None
    if isinstance(data, list):
        data = {"replies": data}
    if not isinstance(data, dict):
        raise ScriptError(f"{path}: a user script is a JSON object or a list of replies")
    for where, part in [("", data), *((f"tasks.{k}.", v) for k, v in (data.get("tasks") or {}).items())]:
        if not isinstance(part, dict):
            raise ScriptError(f"{path}: {where or 'the script'} must be an object")
        if "opening" in part and not isinstance(part["opening"], str):
            raise ScriptError(f"{path}: {where}opening must be a string")
        replies = part.get("replies", [])
        if not isinstance(replies, list) or not all(isinstance(r, str) for r in replies):
            raise ScriptError(f"{path}: {where}replies must be a list of strings")
    return data


@register_user("scripted")
class ScriptedUser(User):
    """Replies read from a file (``--user-script FILE``): the opening (default: the task's
    ``user_prompt``), then one reply per agent answer without a tool call; once the replies are
    used up the user ends the conversation. A task id under ``tasks`` overrides the defaults."""

    name = "scripted"

    class Options(Options):
        script: str = option(help="A JSON file of replies.")

        @field_validator("script")
        @classmethod
        def _readable(cls, value: str) -> str:
            load_script(value)
            return value

    def __init__(self, script: str | Path) -> None:
        self.script = load_script(script)

    async def start(self, setup: EpisodeSetup) -> None:
        self.setup = setup
        specific = (self.script.get("tasks") or {}).get(setup.task_id, {})
        self.opening_text = specific.get("opening", self.script.get("opening", "{user_prompt}"))
        self.replies = list(specific.get("replies", self.script.get("replies", [])))

    def _fill(self, text: str) -> str:
        task = self.setup.task
        known = json.dumps(task.user_known, indent=4, ensure_ascii=False)
        return text.replace("{user_prompt}", task.user_prompt).replace("{user_known}", known)

    async def opening(self) -> UserTurn:
        return UserTurn(self._fill(self.opening_text))

    async def reply(self, messages: Sequence[Message]) -> UserTurn:
        if not self.replies:
            return UserTurn("Thank you, that is all.", ends=True)
        return UserTurn(self._fill(self.replies.pop(0)))
