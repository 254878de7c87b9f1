"""Test-only helpers for the LLM agent tests: a small bank episode setup and a minimal driver.

The driver exists to hold short conversations with an agent in tests; the real episode loop is the
runner's (``sopbench.runner``), which these tests do not depend on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sopbench.agents import Agent, AgentTurn, EpisodeSetup, User, UserTurn
from sopbench.constraints import parse
from sopbench.domains import EXIT_TOOL, get_domain
from sopbench.tasks import task_from_json

EXIT_SCHEMA = {
    "type": "function",
    "function": {
        "name": EXIT_TOOL,
        "description": "call to end the conversation",
        "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    },
}
TOOLS = ("login_user", "get_account_balance", "internal_check_username_exist")


def bank_setup(*, with_exit: bool = True, seed: int = 7) -> EpisodeSetup:
    """A balance enquiry at the bank: log in, then read the balance (both real bank tools)."""
    login = ["single", "logged_in_user", {"username": "username"}]
    goal_sop = ["and", [["single", "internal_check_username_exist", {"username": "username"}], login]]
    task = task_from_json(
        {
            "initial_database": {"accounts": {}},
            "constraint_parameters": {"maximum_deposit": 5000},
            "user_known": {"username": "alice", "identification": "pw-1"},
            "constraints": goal_sop,
            "constraints_original": goal_sop,
            "action_should_succeed": True,
            "user_instruction": "You want to know the balance of your account.",
            "user_prompt": "Hello, what is my account balance?",
            "directed_action_graph": {
                "nodes": [["get_account_balance", {"username": "username"}]],
                "connections": [],
            },
            "user_goal": "get_account_balance",
        },
        domain="bank",
        index=0,
    )
    bank = get_domain("bank")
    tools = [bank.tools[name].openai_schema() for name in TOOLS]
    if with_exit:
        tools.append(EXIT_SCHEMA)
    return EpisodeSetup(
        domain="bank",
        task_id="bank/get_account_balance[0]",
        task=task,
        tools=tuple(tools),
        sops={"get_account_balance": parse(goal_sop)},
        tool_list="full",
        seed=seed,
        run=0,
    )


class KnownValuesUser(User):
    """The published default user: every reply gives the known values and asks to end with the exit tool."""

    name = "known-values"

    async def start(self, setup: EpisodeSetup) -> None:
        self.setup = setup

    async def opening(self) -> UserTurn:
        return UserTurn(self.setup.task.user_prompt)

    async def reply(self, messages: Sequence[Any]) -> UserTurn:
        known = json.dumps(self.setup.task.user_known, indent=4)
        return UserTurn(f"Here is what I know:\n{known}\nCall {EXIT_TOOL} when you are done.")


def fake_tool(name: str, arguments: str) -> str:
    """What an environment would answer (enough for a conversation; correctness is not judged here)."""
    if name not in TOOLS:
        return f"Error: Tool {name} not found."
    try:
        json.loads(arguments)
    except ValueError:
        return f"Error: the arguments of {name} are not valid JSON."
    return "1000.0" if name == "get_account_balance" else "True"


@dataclass
class Episode:
    transcript: list[dict[str, Any]]
    turns: list[AgentTurn] = field(default_factory=list)
    user_turns: list[UserTurn] = field(default_factory=list)
    ended_by: str = "limit"  # "agent" (exit call), "user" (the user closed), or "limit"

    @property
    def executed(self) -> list[tuple[str, str]]:
        calls = [c for m in self.transcript if m["role"] == "assistant" for c in m.get("tool_calls", ())]
        return [
            (c["function"]["name"], c["function"]["arguments"])
            for c in calls
            if c["function"]["name"] != EXIT_TOOL
        ]

    @property
    def problems(self) -> list[str]:
        return [p for t in self.turns for p in t.problems]


async def drive(
    agent: Agent,
    setup: EpisodeSetup,
    user: User | None = None,
    *,
    max_messages: int = 20,
    max_calls: int = 10,
    tool: Callable[[str, str], str] = fake_tool,
) -> Episode:
    user = user or KnownValuesUser()
    await agent.start(setup)
    await user.start(setup)
    try:
        opening = await user.opening()
        episode = Episode([{"role": "user", "content": opening.content}], user_turns=[opening])
        calls = 0
        while len(episode.transcript) < max_messages and calls < max_calls:
            turn = await agent.act(list(episode.transcript))
            episode.turns.append(turn)
            message: dict[str, Any] = {"role": "assistant", "content": turn.content}
            if turn.tool_calls:
                message["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in turn.tool_calls
                ]
            episode.transcript.append(message)
            if not turn.tool_calls:
                if len(episode.transcript) >= max_messages:
                    break
                answer = await user.reply(list(episode.transcript))
                episode.user_turns.append(answer)
                episode.transcript.append({"role": "user", "content": answer.content})
                if answer.ends:
                    episode.ended_by = "user"
                    break
                continue
            if any(c.name == EXIT_TOOL for c in turn.tool_calls):
                episode.ended_by = "agent"
                break
            for c in turn.tool_calls:
                episode.transcript.append(
                    {"role": "tool", "tool_call_id": c.id, "content": tool(c.name, c.arguments)}
                )
                calls += 1
        return episode
    finally:
        await agent.close()
        await user.close()
