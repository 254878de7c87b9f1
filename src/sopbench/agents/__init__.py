"""Agents and users: what plays each side of an episode, behind one small protocol.

An agent is one class registered under a name::

    from sopbench.agents import Agent, AgentTurn, register_agent

    @register_agent("echo")
    class Echo(Agent):
        async def act(self, messages):
            return AgentTurn(content="I cannot help with that.")
"""

from . import openai  # noqa: F401 - registers the ``openai`` agent and the ``llm`` / ``adversarial`` users
from ._protocol import (
    EXIT_TOOL,
    Agent,
    AgentFactory,
    AgentInfraError,
    AgentTurn,
    ContextLengthExceeded,
    EpisodeSetup,
    Message,
    ToolCallRequest,
    Usage,
    User,
    UserFactory,
    UserTurn,
    agent_factory,
    agent_names,
    register_agent,
    register_user,
    user_factory,
    user_names,
)

__all__ = [
    "EXIT_TOOL",
    "Agent",
    "AgentFactory",
    "AgentInfraError",
    "AgentTurn",
    "ContextLengthExceeded",
    "EpisodeSetup",
    "Message",
    "ToolCallRequest",
    "Usage",
    "User",
    "UserFactory",
    "UserTurn",
    "agent_factory",
    "agent_names",
    "register_agent",
    "register_user",
    "user_factory",
    "user_names",
]
