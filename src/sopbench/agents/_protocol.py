"""The contract between the episode runner and whatever plays the agent or the user.

The runner owns the transcript and the environment; an agent only sees the transcript and answers
with text and/or tool-call requests. The transcript is a list of chat messages in the OpenAI
chat-completions shape (``{"role": "user"|"assistant"|"tool", "content": ..., "tool_calls": [...],
"tool_call_id": ...}``), because every OpenAI-compatible endpoint speaks it and a text-protocol agent
(ReAct, act-only) can re-render it in its own format. Tool arguments stay raw text: a model's
malformed JSON is the model's mistake and must reach the runner unaltered.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from sopbench.constraints import Expr
from sopbench.domains import DEFAULT_ENVIRONMENT, ConstraintFormat, Environment, EnvMode, NoActionReading
from sopbench.tasks import Task

Message = Mapping[str, Any]  # one chat-completions message (see the module docstring)


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one model reply cost (zero for agents that call no model)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens
        )


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A tool call as the agent asked for it: ``arguments`` is the raw JSON text, unparsed."""

    id: str  # unique within the episode
    name: str
    arguments: str
    # Set by the agent when the call came malformed (arguments sent as a JSON object instead of
    # text, say): the call is still answered, and counted as malformed.
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class AgentTurn:
    """One reply of the agent: text, tool calls to execute in order, or both."""

    content: str | None = None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    usage: Usage = Usage()
    raw: str | None = None  # the model's raw text when it was parsed (ReAct), kept for the store
    # Malformed output the agent itself detected (an unparsable ReAct reply, say): each is the
    # agent's mistake, counted per episode and stored with the raw text; the episode goes on.
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class UserTurn:
    """One reply of the user; ``ends`` is True when the user closes the conversation."""

    content: str
    ends: bool = False
    usage: Usage = Usage()


@dataclass(frozen=True, slots=True)
class Shown:
    """What a model was shown before its first turn, beyond the transcript: the system prompt (None
    when the agent sends none) and the tool schemas it was offered (in the text modes they are also
    written into the prompt). The runner stores each distinct one once per run folder."""

    system_prompt: str | None
    tools: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class EpisodeSetup:
    """What the agent is shown before the episode starts (never the oracle or the database).

    ``tools``: the offered tools as OpenAI function-tool schemas, ``exit_conversation`` included.
    ``sops``: for every offered action that has constraints, its constraint expression, with the
    parameter names of ``task.constraint_parameters`` (the structured form of the prompt's listing).
    ``task`` is given so that users and replaying agents can read ``user_prompt`` / ``user_known``;
    an agent under test must not read the task's database, graph or expected outcome.
    ``verifiers``: for every constraint name, the tool calls that check it (a verification process,
    or for a session constraint such as ``logged_in_user`` the call that establishes it), written in
    the constraint's parameter names; ``None`` when no tool is needed (a check of the arguments).
    It is the structured form of what the prompt's wording and the tool descriptions tell a model.
    ``environment``: the episode's environment settings (``sopbench.domains.Environment``), read
    through ``env_mode``: ``prompt`` (the constraints are listed for the agent), ``program`` (the environment
    enforces them and nothing is listed: ``sops`` is empty) or ``guard`` (listed, and a runtime guard
    refuses unverified service calls); ``constraint_format``: how a listing words them (``structured``
    or the published ``old`` numbered list); ``no_action``: how the runner reads a call's name as "no
    action" (``sopbench.domains.is_no_action``), which an agent parsing text replies reads them with.
    """

    domain: str
    task_id: str  # "<domain>/<goal>[<i>]"
    task: Task
    tools: tuple[Mapping[str, Any], ...]
    sops: Mapping[str, Expr]
    tool_list: str  # "full" or "oracle"
    seed: int
    run: int
    options: Mapping[str, Any] = field(default_factory=dict)
    verifiers: Mapping[str, Expr | None] = field(default_factory=dict)
    environment: Environment = DEFAULT_ENVIRONMENT

    @property
    def env_mode(self) -> EnvMode:
        return self.environment.env_mode

    @property
    def constraint_format(self) -> ConstraintFormat:
        return self.environment.constraint_format

    @property
    def no_action(self) -> NoActionReading:
        return self.environment.no_action


class AgentInfraError(Exception):
    """The agent could not produce a reply for reasons outside the agent's behaviour (network, quota,
    server errors after retries). The episode is recorded as ``infra_error`` and retried on resume."""


class AgentRequestError(AgentInfraError):
    """The endpoint refused the request for a reason no retry can fix (a rejected key, an unknown
    model or URL, a request the server calls invalid, an exhausted quota). Every other episode
    would fail the same way: the runner stops the run and reports it as an error of the invocation
    (nothing is stored for the episode, so the same command runs it once the cause is fixed)."""


class ContextLengthExceeded(Exception):
    """The conversation no longer fits the model: the episode ends as the agent's failure."""


class Agent(ABC):
    """Plays the service assistant. One instance per episode."""

    name: ClassVar[str]
    # Recorded with every episode (export fields ``model`` and ``tool_mode``); None when not a model.
    model: str | None = None
    tool_mode: str | None = None

    async def start(self, setup: EpisodeSetup) -> None:  # noqa: B027 - optional hook
        """Called once before the first turn."""

    @abstractmethod
    async def act(self, messages: Sequence[Message]) -> AgentTurn:
        """The next reply given the whole transcript so far."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what ``start`` acquired."""

    def shown(self) -> Shown | None:
        """What the model was shown after ``start`` (system prompt, tools); None for an agent that
        calls no model."""
        return None


class User(ABC):
    """Plays the user. One instance per episode; ``opening`` gives the first message."""

    name: ClassVar[str]
    # True when the user, not the agent, holds ``exit_conversation`` (the published LLM user): the
    # agent is then not offered it, and the episode ends when a reply has ``ends`` set.
    holds_exit: ClassVar[bool] = False

    async def start(self, setup: EpisodeSetup) -> None:  # noqa: B027 - optional hook
        """Called once before the opening message."""

    @abstractmethod
    async def opening(self) -> UserTurn:
        """The first message of the episode."""

    @abstractmethod
    async def reply(self, messages: Sequence[Message]) -> UserTurn:
        """The user's answer after the agent replied without a tool call."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what ``start`` acquired."""


AgentFactory = Callable[..., Agent]
UserFactory = Callable[..., User]
_T = TypeVar("_T")

_AGENTS: dict[str, AgentFactory] = {}
_USERS: dict[str, UserFactory] = {}


def register_agent(name: str) -> Callable[[_T], _T]:
    """Class decorator: make an agent available as ``sopbench run --agent NAME``.

    The class is called with the agent options the user gave (keyword arguments) once per episode.
    """

    def decorate(cls: _T) -> _T:
        _register(_AGENTS, "agent", name, cls)
        return cls

    return decorate


def register_user(name: str) -> Callable[[_T], _T]:
    """Class decorator: make a user available as ``sopbench run --user NAME``."""

    def decorate(cls: _T) -> _T:
        _register(_USERS, "user", name, cls)
        return cls

    return decorate


def _register(table: dict[str, Any], what: str, name: str, factory: object) -> None:
    if name in table and table[name] is not factory:
        raise ValueError(f"{what} {name!r} is already registered by {table[name]!r}")
    table[name] = factory


def agent_names() -> list[str]:
    return sorted(_AGENTS)


def user_names() -> list[str]:
    return sorted(_USERS)


def agent_factory(name: str) -> AgentFactory:
    try:
        return _AGENTS[name]
    except KeyError:
        raise KeyError(
            f"unknown agent {name!r}; known agents: {', '.join(agent_names()) or 'none'}"
        ) from None


def user_factory(name: str) -> UserFactory:
    try:
        return _USERS[name]
    except KeyError:
        raise KeyError(f"unknown user {name!r}; known users: {', '.join(user_names()) or 'none'}") from None
