"""The two trivial baselines every report shows next to real agents."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sopbench.domains import EXIT_TOOL

from ._protocol import Agent, AgentTurn, EpisodeSetup, Message, ToolCallRequest, register_agent

REFUSAL = "I am sorry, but I cannot help with this request."


def tool_properties(setup: EpisodeSetup, tool: str) -> tuple[str, ...]:
    """The parameter names of an offered tool (empty when it is not offered)."""
    for schema in setup.tools:
        function = schema["function"]
        if function["name"] == tool:
            return tuple(function["parameters"].get("properties", {}))
    return ()


def known_arguments(setup: EpisodeSetup, tool: str, known: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of ``tool`` the user knows, by parameter name."""
    return {name: known[name] for name in tool_properties(setup, tool) if name in known}


def exit_turn() -> AgentTurn:
    return AgentTurn(tool_calls=(ToolCallRequest("exit", EXIT_TOOL, "{}"),))


@register_agent("refuse-all")
class RefuseAll(Agent):
    """Calls no tool and declines every request (it passes exactly the tasks that must be refused)."""

    name = "refuse-all"

    async def act(self, messages: Sequence[Message]) -> AgentTurn:
        if any(m.get("role") == "assistant" for m in messages):
            return exit_turn()
        return AgentTurn(content=REFUSAL)


@register_agent("no-verify")
class NoVerify(Agent):
    """Executes the requested service at once with the user's values, verifying nothing."""

    name = "no-verify"

    async def start(self, setup: EpisodeSetup) -> None:
        self.goal = setup.task.goal
        self.arguments = json.dumps(known_arguments(setup, self.goal, setup.task.user_known))

    async def act(self, messages: Sequence[Message]) -> AgentTurn:
        if any(m.get("role") == "assistant" for m in messages):
            return exit_turn()
        return AgentTurn(tool_calls=(ToolCallRequest("goal", self.goal, self.arguments),))
