"""Users for the LLM setting: an LLM role-playing the customer, and the published ``adv`` user."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sopbench.agents._options import option
from sopbench.agents._protocol import EpisodeSetup, Message, User, UserTurn, register_user
from sopbench.domains import EXIT_TOOL

from ._model import ModelOptions, ModelSide
from ._prompts import ADVERSARIAL_URGE, STUBBORN_FIRST_REPLY, adversarial_reply, build_user_prompt

EXIT_TOOL_SCHEMA = {
    "type": "function",
    "function": {
        "name": EXIT_TOOL,
        "description": "End the conversation with the assistant.",
        "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    },
}


@register_user("llm")
class LLMUser(ModelSide, User):
    """A model behind an OpenAI-compatible endpoint plays the customer (SPEC 6.1).

    It knows the task's ``user_instruction`` and ``user_known`` values and holds ``exit_conversation``
    (so the runner does not offer it to the agent). Its first answer is a fixed insistence; the
    model writes the later ones. It sees only the text of the conversation: its own messages as
    ``assistant``, the agent's as ``user``, never tool calls or results.
    """

    name = "llm"
    holds_exit = True

    class Options(ModelOptions):
        temperature: float | None = option(1.0, help="Sampling temperature (None: send none).")
        max_tokens: int | None = option(128, help="Completion token limit per reply (None: send none).")

    def __init__(self, **options: Any) -> None:
        self._use_model(self.Options(**options))
        self.system_prompt: str | None = None
        self._setup: EpisodeSetup | None = None
        self._replies = 0

    async def start(self, setup: EpisodeSetup) -> None:
        self._setup = setup
        self.system_prompt = build_user_prompt(setup)
        self._replies = 0
        await self.endpoint.open()

    async def opening(self) -> UserTurn:
        if self._setup is None:
            raise RuntimeError("LLMUser.opening called before start")
        return UserTurn(self._setup.task.user_prompt)

    async def reply(self, messages: Sequence[Message]) -> UserTurn:
        if self.system_prompt is None:
            raise RuntimeError("LLMUser.reply called before start")
        self._replies += 1
        if self._replies == 1:
            return UserTurn(STUBBORN_FIRST_REPLY)
        answer = await self.endpoint.complete(
            user_view(self.system_prompt, messages),
            tools=[EXIT_TOOL_SCHEMA],
            tool_choice="auto",  # some servers show the model the tools only when it is sent
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )
        ends = any(call.name == EXIT_TOOL for call in answer.tool_calls)
        return UserTurn(answer.content or "", ends=ends, usage=answer.usage)


def user_view(system_prompt: str, transcript: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation as the user model sees it: roles swapped, tool traffic and empty turns left
    out, consecutive turns of one side merged (chat templates that insist on alternation)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}]
    for message in transcript:
        content = message.get("content")
        if (
            message.get("role") not in ("user", "assistant")
            or not isinstance(content, str)
            or not content.strip()
        ):
            continue
        role = "assistant" if message["role"] == "user" else "user"
        if out[-1]["role"] == role:
            out[-1]["content"] += "\n\n" + content
        else:
            out.append({"role": role, "content": content})
    return out


@register_user("adversarial")
class AdversarialUser(User):
    """The published ``adv`` user: no model; it asks for the most direct tool in its first message and
    answers every turn with the values it knows, urging the direct tool again."""

    name = "adversarial"

    def __init__(self) -> None:
        self._setup: EpisodeSetup | None = None

    async def start(self, setup: EpisodeSetup) -> None:
        self._setup = setup

    async def opening(self) -> UserTurn:
        task = self._task()
        return UserTurn(f"{task.user_prompt}\n\n{ADVERSARIAL_URGE}")

    async def reply(self, messages: Sequence[Message]) -> UserTurn:
        return UserTurn(adversarial_reply(self._task().user_known))

    def _task(self):
        if self._setup is None:
            raise RuntimeError("AdversarialUser used before start")
        return self._setup.task
