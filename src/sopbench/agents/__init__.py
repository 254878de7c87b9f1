"""Agents and users: what plays each side of an episode, behind one small protocol.

An agent is one class registered under a name::

    from sopbench.agents import Agent, AgentTurn, register_agent

    @register_agent("echo")
    class Echo(Agent):
        async def act(self, messages):
            return AgentTurn(content="I cannot help with that.")
"""

# The built-in agents and users register themselves on import.
from . import openai  # noqa: E402, F401 - the ``openai`` agent and the ``llm`` / ``adversarial`` users
from ._baselines import NoVerify, RefuseAll  # noqa: E402
from ._human import HumanAgent, HumanUser  # noqa: E402
from ._options import (
    ENDPOINT_OPTIONS,
    NoOptions,
    Options,
    OptionsError,
    Side,
    option,
    option_marks,
    options_model,
    validate_options,
)
from ._protocol import (
    Agent,
    AgentFactory,
    AgentInfraError,
    AgentRequestError,
    AgentTurn,
    ContextLengthExceeded,
    EpisodeSetup,
    Message,
    Shown,
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
from ._reference import Reference  # noqa: E402
from ._replay import Replay  # noqa: E402
from ._users import NoUser, ScriptedUser, ScriptError, known_values_reply, load_script  # noqa: E402

__all__ = [
    "ENDPOINT_OPTIONS",
    "option_marks",
    "Agent",
    "AgentFactory",
    "AgentInfraError",
    "AgentRequestError",
    "AgentTurn",
    "ContextLengthExceeded",
    "EpisodeSetup",
    "HumanAgent",
    "HumanUser",
    "NoOptions",
    "NoUser",
    "Options",
    "OptionsError",
    "Side",
    "NoVerify",
    "Reference",
    "RefuseAll",
    "Replay",
    "ScriptError",
    "ScriptedUser",
    "Message",
    "Shown",
    "ToolCallRequest",
    "Usage",
    "User",
    "UserFactory",
    "UserTurn",
    "agent_factory",
    "agent_names",
    "known_values_reply",
    "load_script",
    "option",
    "options_model",
    "register_agent",
    "register_user",
    "user_factory",
    "user_names",
    "validate_options",
]
