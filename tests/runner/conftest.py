"""Agents made for runner tests (registered once per session) and a small task folder."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from sopbench.agents import (
    Agent,
    AgentInfraError,
    AgentTurn,
    ContextLengthExceeded,
    Reference,
    ToolCallRequest,
    agent_names,
    register_agent,
)
from sopbench.domains import EXIT_TOOL


def _exit() -> AgentTurn:
    return AgentTurn(tool_calls=(ToolCallRequest("x", EXIT_TOOL, "{}"),))


if "test-malformed" not in agent_names():

    @register_agent("test-malformed")
    class Malformed(Agent):
        """One malformed call of each kind, one good call, then a pseudo-call and an exit."""

        name = "test-malformed"
        turns = [
            ("no_such_tool", '{"a": 1}'),
            ("internal_check_username_exist", '{"username": "john_doe"'),  # bad JSON
            ("internal_check_username_exist", '["john_doe"]'),  # not an object
            ("internal_check_username_exist", '{"username": "john_doe", "extra": 1}'),
            ("internal_check_username_exist", "{}"),  # missing argument
            ("internal_check_username_exist", '{"username": "john_doe"}'),
        ]

        async def act(self, messages: Sequence[dict]) -> AgentTurn:
            done = sum(1 for m in messages if m.get("role") == "assistant")
            if done < len(self.turns):
                name, arguments = self.turns[done]
                return AgentTurn(tool_calls=(ToolCallRequest(f"c{done}", name, arguments),))
            if done == len(self.turns):
                return AgentTurn(
                    content="thinking",
                    tool_calls=(
                        ToolCallRequest("n", "N/A", ""),
                        ToolCallRequest("m", "internal_check_username_exist", "{}"),
                    ),
                    raw="Thought: thinking\nAction: N/A",
                    problems=("unparsable reply",),
                )
            return _exit()

    @register_agent("test-chatty")
    class Chatty(Agent):
        """Calls a reader forever: the limits end the episode."""

        name = "test-chatty"

        async def act(self, messages: Sequence[dict]) -> AgentTurn:
            return AgentTurn(
                tool_calls=(
                    ToolCallRequest(
                        f"c{len(messages)}", "internal_check_username_exist", '{"username": "x"}'
                    ),
                )
            )

    @register_agent("test-talker")
    class Talker(Agent):
        """Never calls a tool: only the user's replies and the message limit end the episode."""

        name = "test-talker"

        async def act(self, messages: Sequence[dict]) -> AgentTurn:
            return AgentTurn(content=f"turn {len(messages)}")

    @register_agent("test-crash")
    class Crash(Agent):
        name = "test-crash"

        async def act(self, messages: Sequence[dict]) -> AgentTurn:
            raise RuntimeError("boom")

    @register_agent("test-slow")
    class Slow(Agent):
        name = "test-slow"

        async def act(self, messages: Sequence[dict]) -> AgentTurn:
            await asyncio.sleep(30)
            return _exit()

    @register_agent("test-overflow")
    class Overflow(Agent):
        """One good call, then the conversation no longer fits."""

        name = "test-overflow"

        async def act(self, messages: Sequence[dict]) -> AgentTurn:
            if len(messages) == 1:
                return AgentTurn(
                    tool_calls=(
                        ToolCallRequest("c", "internal_check_username_exist", '{"username": "john_doe"}'),
                    )
                )
            raise ContextLengthExceeded("too long")

    @register_agent("test-flaky")
    class Flaky(Reference):
        """The reference agent, but an infrastructure failure while ``marker`` exists."""

        name = "test-flaky"

        def __init__(self, marker: str) -> None:
            self.marker = Path(marker)

        async def act(self, messages: Sequence[dict]) -> AgentTurn:
            if self.marker.exists():
                raise AgentInfraError("quota exceeded")
            return await super().act(messages)

    @register_agent("test-slow-reference")
    class SlowReference(Reference):
        """The reference agent, a little slower per turn (for the kill-and-resume test)."""

        name = "test-slow-reference"

        async def act(self, messages: Sequence[dict]) -> AgentTurn:
            await asyncio.sleep(0.04)  # slow enough to be killed mid-run even on a loaded machine
            return await super().act(messages)


@pytest.fixture(scope="session")
def small_tasks(tmp_path_factory: pytest.TempPathFactory, published_tasks_dir: Path) -> Path:
    """A task folder with the first 6 tasks of each of bank and hotel (written from ../shared at test time)."""
    folder = tmp_path_factory.mktemp("tasks")
    for domain in ("bank", "hotel"):
        data = json.loads(gzip.decompress((published_tasks_dir / f"{domain}_tasks.json.gz").read_bytes()))
        kept, count = {}, 0
        for goal, tasks in data.items():
            if count >= 6:
                break
            kept[goal] = tasks[: 6 - count]
            count += len(kept[goal])
        (folder / f"{domain}_tasks.json").write_text(json.dumps(kept))
    return folder
