"""The agent and the LLM user of an episode played by Inspect models, and the message conversions.

The runner's loop (``sopbench.runner.episode.run_episode``) stays the one home of the published rules: the
message and call limits, ``exit_conversation``, malformed calls, the user's turn. Here an Inspect
model plays the agent through native tool calling (each offered tool is passed with the schema of
our catalogue), and the user model role plays our ``llm`` user.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.tool import ToolCall, ToolInfo

from sopbench._json import decode_bounded
from sopbench.agents import (
    Agent,
    AgentTurn,
    ContextLengthExceeded,
    EpisodeSetup,
    Message,
    NoOptions,
    ToolCallRequest,
    Usage,
    User,
    UserTurn,
    register_agent,
    register_user,
)
from sopbench.agents.openai import (
    EXIT_TOOL_SCHEMA,
    STUBBORN_FIRST_REPLY,
    build_system_prompt,
    build_user_prompt,
    user_view,
)
from sopbench.domains import EXIT_TOOL

from ._tokens import without_tokenizer_download

# The episode a sample is playing: set by the solver, read by models that play a sopbench policy
# (the reference model) inside the same sample.
CURRENT_SETUP: contextvars.ContextVar[EpisodeSetup | None] = contextvars.ContextVar(
    "sopbench_episode_setup", default=None
)


def current_setup() -> EpisodeSetup | None:
    """The ``EpisodeSetup`` of the sample being played in this context (None outside a sample)."""
    return CURRENT_SETUP.get()


def tool_info(schema: Mapping[str, Any]) -> ToolInfo:
    """An OpenAI function-tool schema of our catalogue as an Inspect tool description."""
    function = schema["function"]
    return ToolInfo.model_validate(
        {
            "name": function["name"],
            "description": function.get("description") or function["name"],
            "parameters": function.get("parameters") or {"type": "object", "properties": {}},
        }
    )


def inspect_messages(messages: Sequence[Message]) -> list[ChatMessage]:
    """Chat-completions messages (the runner's transcript) as Inspect chat messages."""
    out: list[ChatMessage] = []
    pending: list[str] = []  # the names of the last assistant message's calls, answered in order
    for message in messages:
        role, content = message.get("role"), message.get("content")
        if role == "system":
            out.append(ChatMessageSystem(content=content or ""))
        elif role == "user":
            out.append(ChatMessageUser(content=content or ""))
        elif role == "tool":
            out.append(
                ChatMessageTool(
                    content=content or "",
                    tool_call_id=message.get("tool_call_id"),
                    function=pending.pop(0) if pending else None,
                )
            )
        else:
            calls = [_inspect_call(call) for call in message.get("tool_calls") or ()]
            pending = [call.function for call in calls]
            out.append(ChatMessageAssistant(content=content or "", tool_calls=calls or None))
    return out


def _inspect_call(call: Mapping[str, Any]) -> ToolCall:
    function = call["function"]
    text = function.get("arguments") or ""
    try:
        arguments = decode_bounded(text) if text.strip() else {}
    except ValueError as exc:  # not JSON, or past the bound on a model's JSON
        return ToolCall(id=call["id"], function=function["name"], arguments={}, parse_error=str(exc))
    if not isinstance(arguments, dict):
        return ToolCall(
            id=call["id"], function=function["name"], arguments={}, parse_error="not a JSON object"
        )
    return ToolCall(id=call["id"], function=function["name"], arguments=arguments)


def chat_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Inspect chat messages as chat-completions messages (system messages left out)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ChatMessageUser):
            out.append({"role": "user", "content": message.text})
        elif isinstance(message, ChatMessageTool):
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text})
        elif isinstance(message, ChatMessageAssistant):
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.function, "arguments": arguments_text(call)},
                    }
                    for call in message.tool_calls
                ]
            out.append(entry)
    return out


def arguments_text(call: ToolCall) -> str:
    """A call's arguments as the raw text the runner expects; arguments Inspect could not parse stay
    unparsable (the runner answers them as the agent's malformed call)."""
    if call.parse_error is not None:
        return f"<unparsable arguments: {call.parse_error}>"
    return json.dumps(call.arguments, ensure_ascii=False)


def _usage(output: ModelOutput) -> Usage:
    usage = output.usage
    if usage is None:
        return Usage()
    return Usage(usage.input_tokens, usage.output_tokens)


# The Inspect model role ``user`` as sopbench's ``llm`` user (the task's ``user=llm``).
INSPECT_LLM_USER = "inspect-llm"


@register_agent("inspect")
class InspectModelAgent(Agent):
    """An Inspect model plays the assistant with native tool calling, told our ``fc`` system prompt."""

    name = "inspect"
    tool_mode = "fc"
    Options = NoOptions  # the model is Inspect's (``--model``); ``model`` is for library use

    def __init__(self, model: Model | None = None) -> None:
        self._model = model
        self.system_prompt = ""
        self.tools: list[ToolInfo] = []
        self.last_output: ModelOutput | None = None
        self.config = GenerateConfig()

    async def start(self, setup: EpisodeSetup) -> None:
        self._model = without_tokenizer_download(self._model or get_model())
        self.model = str(self._model)
        self.system_prompt = build_system_prompt(setup, "fc")
        # As the openai agent: the episode's own seed (derived per task and epoch), int32 for servers.
        self.config = GenerateConfig(seed=setup.seed % 2**31)
        self.tools = [tool_info(schema) for schema in setup.tools]

    async def act(self, messages: Sequence[Message]) -> AgentTurn:
        assert self._model is not None, "start() first"
        output = await self._model.generate(
            [ChatMessageSystem(content=self.system_prompt), *inspect_messages(messages)],
            tools=self.tools,
            config=self.config,
        )
        self.last_output = output
        if output.stop_reason == "model_length" and not output.message.tool_calls and not output.completion:
            raise ContextLengthExceeded(f"{self.model}: the conversation no longer fits the model")
        calls = tuple(
            ToolCallRequest(call.id, call.function, arguments_text(call))
            for call in output.message.tool_calls or ()
        )
        return AgentTurn(content=output.message.text or None, tool_calls=calls, usage=_usage(output))


@register_user(INSPECT_LLM_USER)
class InspectModelUser(User):
    """Our ``llm`` user played by the Inspect model role ``user`` (default: the evaluated model).

    As ``sopbench run --user llm``: it holds ``exit_conversation``, opens with the task's prompt,
    first insists, then lets the model answer on the conversation's text, roles swapped. The task's
    ``user=llm`` plays it (registered as ``inspect-llm``: the ``llm`` user of ``run`` is a model
    behind an endpoint, with options of its own)."""

    name = "llm"
    holds_exit = True
    Options = NoOptions

    def __init__(self, model: Model | None = None) -> None:
        self._model = model
        self.system_prompt = ""
        self.setup: EpisodeSetup | None = None
        self.replies = 0

    async def start(self, setup: EpisodeSetup) -> None:
        self._model = without_tokenizer_download(self._model or get_model(role="user"))
        self.setup = setup
        self.system_prompt = build_user_prompt(setup)
        self.replies = 0

    async def opening(self) -> UserTurn:
        assert self.setup is not None, "start() first"
        return UserTurn(self.setup.task.user_prompt)

    async def reply(self, messages: Sequence[Message]) -> UserTurn:
        assert self._model is not None, "start() first"
        self.replies += 1
        if self.replies == 1:
            return UserTurn(STUBBORN_FIRST_REPLY)
        output = await self._model.generate(
            inspect_messages(user_view(self.system_prompt, messages)), tools=[tool_info(EXIT_TOOL_SCHEMA)]
        )
        ends = any(call.function == EXIT_TOOL for call in output.message.tool_calls or ())
        return UserTurn(output.message.text, ends=ends, usage=_usage(output))
