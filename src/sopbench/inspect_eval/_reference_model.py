"""An Inspect model provider that plays our ``reference`` agent's decisions (a testing aid).

``sopbench-reference/reference`` answers each generate call as the ``reference`` agent would answer
the same transcript in ``sopbench run``: it reads the sample's ``EpisodeSetup`` (set by the
``sopbench`` solver) and hands the conversation, converted back to chat-completions messages, to
one ``Reference`` agent per episode. It lets the equivalence of the two paths be checked offline.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    modelapi,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from sopbench._json import decode_bounded
from sopbench.agents import EpisodeSetup, Reference

from ._sides import chat_messages, current_setup

PROVIDER = "sopbench-reference"


class ReferenceModel(ModelAPI):
    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        self.agents: dict[int, tuple[EpisodeSetup, Reference]] = {}

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        setup = current_setup()
        if setup is None:
            raise RuntimeError("the reference model plays only inside a sopbench sample")
        held = self.agents.get(id(setup))
        if held is None or held[0] is not setup:
            agent = Reference()
            await agent.start(setup)
            self.agents[id(setup)] = held = (setup, agent)
        turn = await held[1].act(chat_messages(input))
        calls = [
            ToolCall(id=call.id, function=call.name, arguments=_arguments(call.arguments))
            for call in turn.tool_calls
        ]
        message = ChatMessageAssistant(
            content=turn.content or "", tool_calls=calls or None, model=self.model_name, source="generate"
        )
        return ModelOutput.from_message(message, stop_reason="tool_calls" if calls else "stop")


def _arguments(text: str) -> dict[str, Any]:
    value = decode_bounded(text) if text.strip() else {}
    return value if isinstance(value, dict) else {}


@modelapi(name=PROVIDER)
def reference_model() -> type[ModelAPI]:
    return ReferenceModel
