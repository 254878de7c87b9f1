"""The ``openai`` agent: any OpenAI-compatible chat-completions endpoint, in three tool-call modes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sopbench.agents._options import option
from sopbench.agents._protocol import (
    Agent,
    AgentTurn,
    EpisodeSetup,
    Message,
    Shown,
    ToolCallRequest,
    register_agent,
)
from sopbench.domains import NoActionReading, is_no_action

from ._endpoint import ToolChoice
from ._model import ModelOptions, ModelSide
from ._modes import fc_messages, parse_text_reply, text_messages
from ._prompts import ToolMode, build_system_prompt
from ._replies import ChatReply


@register_agent("openai")
class OpenAIAgent(ModelSide, Agent):
    """Plays the assistant with a model behind an OpenAI-compatible endpoint.

    ``tool_mode``: ``fc`` (native function calling; every call of a reply is executed in order),
    ``react`` (Thought / Action / Action Input text protocol) or ``act-only`` (the same without the
    thought). The key is read from ``$OPENAI_API_KEY`` or the variable ``api_key_env`` names; local
    servers need none. Retries: ``max_retries`` with backoff from ``retry_initial_backoff`` doubling
    up to ``retry_max_backoff`` seconds (full jitter).

    ``tool_choice`` (fc only) is sent with the tools: some servers (llama-cpp-python) show the model
    the tools only when a request carries it. ``max_tokens`` defaults to the published 512 (None:
    no limit). ``compact_tools`` (text modes) writes the tool list as compact JSON.
    ``endpoint_slots`` caps the requests in flight per endpoint URL over the process (``ChatEndpoint``).
    """

    name = "openai"
    model: str  # always set, unlike an agent's that calls no model
    tool_mode: str

    class Options(ModelOptions):
        tool_mode: ToolMode = option("fc", help="fc, react or act-only.")
        tool_choice: ToolChoice = option("auto", help="fc: tool_choice sent with the tools.")
        compact_tools: bool = option(False, help="react, act-only: the tool list as compact JSON.")
        send_seed: bool = option(True, help="Send the episode's seed with each request.")

    def __init__(self, **options: Any) -> None:
        settings = self.Options(**options)
        self._use_model(settings)
        self.tool_mode = settings.tool_mode
        self.tool_choice = settings.tool_choice
        self.compact_tools = settings.compact_tools
        self.send_seed = settings.send_seed
        self.system_prompt: str | None = None
        self._setup: EpisodeSetup | None = None
        self._call_ids: set[str] = set()

    def __repr__(self) -> str:
        return f"OpenAIAgent(model={self.model!r}, tool_mode={self.tool_mode!r}, url={self.endpoint.where!r})"

    async def start(self, setup: EpisodeSetup) -> None:
        self._setup = setup
        self.system_prompt = build_system_prompt(setup, self.tool_mode, compact_tools=self.compact_tools)
        self._call_ids = set()
        await self.endpoint.open()

    def shown(self) -> Shown | None:
        if self._setup is None:
            return None
        return Shown(self.system_prompt, tuple(self._setup.tools))

    async def act(self, messages: Sequence[Message]) -> AgentTurn:
        if self._setup is None or self.system_prompt is None:
            raise RuntimeError("OpenAIAgent.act called before start")
        params: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.send_seed:
            # the episode's own seed (the runner derives it per task and run); some servers take int32 only
            params["seed"] = self._setup.seed % 2**31
        if self.tool_mode == "fc":
            reply = await self.endpoint.complete(
                fc_messages(self.system_prompt, messages),
                tools=self._setup.tools,
                tool_choice=self.tool_choice,
                **params,
            )
            return self._fc_turn(reply, self._setup.no_action)
        reasoning = self.tool_mode == "react"
        reply = await self.endpoint.complete(
            text_messages(self.system_prompt, messages, reasoning=reasoning), **params
        )
        return self._text_turn(reply, self._setup.no_action)

    # ---- replies ----------------------------------------------------------------------------------
    # A malformed call (bad JSON, an unknown tool, wrong arguments) goes to the runner unaltered: it
    # answers the call with an error result and counts the problem once, from what it executed.
    # ``problems`` names what only the agent can see: a reply it could not read.
    def _fc_turn(self, reply: ChatReply, no_action: NoActionReading) -> AgentTurn:
        calls = list(
            zip(reply.tool_calls, reply.call_problems or [None] * len(reply.tool_calls), strict=True)
        )
        requests = tuple(
            ToolCallRequest(self._unique_id(c.id), c.name, c.arguments, problem) for c, problem in calls
        )
        if reply.raw is not None:  # a malformed reply: named, counted, and its raw JSON kept
            return AgentTurn(reply.content, requests, reply.usage, reply.raw, reply.problems)
        # The calls go to the runner as the model wrote them: it reads a "no action" call (one rule,
        # the episode's reading, every agent alike). A reply of no text and only such a call is empty.
        acts = not any(is_no_action(c.name, no_action) for c in requests)
        if (requests and acts) or (reply.content or "").strip():
            return AgentTurn(reply.content, requests, reply.usage)
        raw = json.dumps(
            {
                "content": reply.content,
                "tool_calls": [
                    {"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls
                ],
            },
            ensure_ascii=False,
        )
        return AgentTurn(reply.content, requests, reply.usage, raw, (_empty_reply(reply),))

    def _text_turn(self, reply: ChatReply, no_action: NoActionReading) -> AgentTurn:
        # every reply of a text mode keeps its raw text, an empty one included ("")
        raw = reply.raw if reply.problems else reply.content or ""
        if not (reply.content or "").strip():
            return AgentTurn(None, (), reply.usage, raw, (*reply.problems, _empty_reply(reply)))
        parsed = parse_text_reply(reply.content, no_action)
        problems = [*reply.problems, *parsed.problems]
        if reply.tool_calls:
            problems.append("native tool calls in a text-protocol reply are ignored")
        requests: tuple[ToolCallRequest, ...] = ()
        if parsed.call is not None:
            requests = (ToolCallRequest(self._unique_id(""), *parsed.call),)
        return AgentTurn(parsed.content, requests, reply.usage, raw, tuple(problems))

    def _unique_id(self, proposed: str) -> str:
        """The model's call id when usable, else ``call_<n>``: ids must be unique within an episode."""
        call_id = proposed
        n = len(self._call_ids)
        while not call_id or call_id in self._call_ids:
            n += 1
            call_id = f"call_{n}"
        self._call_ids.add(call_id)
        return call_id


def _empty_reply(reply: ChatReply) -> str:
    if reply.finish_reason == "length":
        return "empty reply: the model stopped at the max_tokens limit"
    return "empty reply: neither text nor a tool call"
