"""One MCP session's episode, without the MCP SDK: the runner's published loop, played by an agent
whose turns are the MCP client's requests.

The runner's loop (``sopbench.runner.episode.run_episode``) stays the one home of the rules (the
limits, ``exit_conversation``, malformed calls, the user's turn). Here its agent is a mailbox: each
tool call of the client becomes one agent turn with that one call, and each ``ask_user`` call one
agent turn of text (the user's reply is that call's result). The answer of a request is what the
loop appended after the turn: the tool's output, or the user's reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from sopbench.agents import (
    Agent,
    AgentRequestError,
    AgentTurn,
    EpisodeSetup,
    Message,
    Shown,
    ToolCallRequest,
    register_agent,
    user_factory,
)
from sopbench.agents.openai import build_system_prompt
from sopbench.domains import EXIT_TOOL
from sopbench.runner import Limits, RunSpec
from sopbench.runner.episode import Episode, EpisodeResult, episode_row, episode_setup

from ._tools import ASK_USER

# The name of the agent a served episode is stored under: the MCP client, whatever it is.
AGENT_NAME = "mcp"


@dataclass(frozen=True, slots=True)
class Answer:
    """The result of one request of the client."""

    text: str
    error: bool = False  # a malformed call, an unknown tool, a failed tool, a guard refusal, or no episode
    ended: str | None = None  # the episode's end reason when it ended with (or before) this request


@dataclass
class _Request:
    kind: Literal["call", "say"]
    name: str
    arguments: str  # the raw JSON text of a call's arguments
    answer: asyncio.Future[Answer]


class SessionClosed(Exception):
    """The MCP session closed before the episode ended."""


@register_agent(AGENT_NAME)
class SessionAgent(Agent):
    """The agent of a served episode: its turns are the MCP client's requests, in arrival order.

    Registered so that a served run's ``RunSpec`` names it; ``sopbench run --agent mcp`` is refused
    (only ``sopbench mcp serve`` can play it)."""

    name: ClassVar[str] = AGENT_NAME

    def __init__(self) -> None:
        self.episode: ServedEpisode | None = None
        self.inbox: asyncio.Queue[_Request | None] = asyncio.Queue()
        self.pending: _Request | None = None
        self.mark = 0  # index of the pending request's assistant message
        self.calls_before = 0
        self.started = asyncio.Event()  # set at the first turn: the opening is in the transcript

    async def act(self, messages: Sequence[Message]) -> AgentTurn:
        if self.episode is None:
            raise AgentRequestError(
                f"agent {AGENT_NAME!r} is an MCP client: serve the episodes with `sopbench mcp serve`"
            )
        self.deliver(messages)
        self.started.set()
        request = await self.inbox.get()
        if request is None:
            raise SessionClosed(
                f"the MCP session closed before the episode ended (after {self.episode.requests} requests)"
            )
        self.pending = request
        self.mark = len(messages)
        self.calls_before = len(self.episode.result.calls)
        if request.kind == "say":
            return AgentTurn(content=request.name)
        call_id = f"call_{self.episode.requests}"
        return AgentTurn(tool_calls=(ToolCallRequest(call_id, request.name, request.arguments),))

    def deliver(self, messages: Sequence[Message], ended: str | None = None) -> None:
        """Answer the pending request with what the loop appended after its turn."""
        request, self.pending = self.pending, None
        if request is None or request.answer.done():
            return
        after = list(messages[self.mark + 1 :])
        error = False
        if after:
            text = str(after[-1].get("content") or "")
            assert self.episode is not None
            calls = self.episode.result.calls[self.calls_before :]
            error = any(c.problem is not None or c.refused or c.failed for c in calls)
        elif ended == "exit_conversation":
            text = "The conversation has ended."
        else:
            text = f"The episode has ended ({ended})."
        request.answer.set_result(Answer(text, error, ended))


class ServedEpisode:
    """One episode played over one MCP session: its setup (what ``run`` offers), its loop running
    in a task, and its row handed to ``on_finished`` once it ends (however it ends)."""

    def __init__(
        self,
        config: RunSpec,
        episode: Episode,
        attempts: int,
        on_finished: Callable[[ServedEpisode], None],
    ) -> None:
        self.config = config
        self.episode = episode
        self.attempts = attempts
        self.on_finished = on_finished
        self.requests = 0
        self.late_requests = 0  # requests after the end, refused
        self.ended: str | None = None
        self.row: Any = None
        user_class = user_factory(config.user)
        self.setup: EpisodeSetup = episode_setup(
            episode.task,
            episode.task_id,
            config.tool_list,
            episode.seed,
            episode.run,
            offer_exit=not getattr(user_class, "holds_exit", False),
            environment=config.environment,
        )
        self.instructions = build_system_prompt(self.setup, "fc")
        self.agent = SessionAgent()
        self.agent.episode = self
        self.result = EpisodeResult(status="completed", end="max_turns")
        self._user_class = user_class
        self._task: asyncio.Task[None] | None = None
        self.finished = asyncio.Event()

    @property
    def task_id(self) -> str:
        return self.episode.task_id

    @property
    def tools(self) -> tuple[Mapping[str, Any], ...]:
        return self.setup.tools

    @property
    def opening(self) -> str:
        messages = self.result.messages
        return str(messages[0].get("content") or "") if messages else ""

    async def start(self) -> None:
        """Start the loop and wait for the user's opening (the served prompt and instructions)."""
        from sopbench.runner.episode import play_bounded

        try:
            user = self._user_class(**self.config.user_options.arguments())
        except Exception as exc:  # noqa: BLE001 - a constructor failure is an infrastructure problem
            self.result.status, self.result.end = "infra_error", "infra_error"
            self.result.reason = f"cannot create the user: {type(exc).__name__}: {exc}"
            self._finish()
            return
        limits = Limits(self.config.max_turns, self.config.max_actions)

        async def play() -> None:
            self.result = await play_bounded(
                self.setup, self.agent, user, limits, self.config.episode_timeout, result=self.result
            )
            self._finish()

        self._task = asyncio.create_task(play(), name=f"sopbench-mcp {self.task_id}")
        started = asyncio.create_task(self.agent.started.wait())
        await asyncio.wait({started, self._task}, return_when=asyncio.FIRST_COMPLETED)
        started.cancel()

    def _finish(self) -> None:
        if self.ended is not None:
            return
        self.ended = self.result.end
        self.agent.deliver(self.result.messages, ended=self.ended)
        self.row = episode_row(self.config, self.episode, self.result, None, self.attempts)
        self.finished.set()
        self.on_finished(self)

    async def submit(self, name: str, arguments: str) -> Answer:
        """One request of the client: a call of an offered tool (or any name: an unknown tool is the
        agent's mistake, answered and counted), or ``ask_user`` (``arguments``: the message)."""
        if self.ended is not None:
            self.late_requests += 1
            return Answer(
                f"The episode has ended ({self.ended}); it is stored. Start a new session for another episode.",
                error=True,
                ended=self.ended,
            )
        self.requests += 1
        loop = asyncio.get_running_loop()
        kind: Literal["call", "say"] = "say" if name == ASK_USER else "call"
        request = _Request(kind, arguments if kind == "say" else name, arguments, loop.create_future())
        await self.agent.inbox.put(request)
        return await request.answer

    async def close(self) -> None:
        """The session closed: an episode still running ends as an ``infra_error`` (retried by the
        next session), then its row is stored."""
        if self.ended is None:
            await self.agent.inbox.put(None)
        if self._task is not None:
            await asyncio.shield(self._task)

    def shown(self) -> Shown:
        """What the client was shown: the instructions and the offered tools."""
        return Shown(self.instructions, tuple(self.setup.tools))


def exit_offered(tools: Sequence[Mapping[str, Any]]) -> bool:
    return any(tool["function"]["name"] == EXIT_TOOL for tool in tools)
