"""LLM agents and users behind any OpenAI-compatible chat-completions endpoint.

Importing this package registers the agent ``openai`` and the users ``llm`` and ``adversarial``
(``sopbench.agents`` imports it). The prompt builders are public so that reports can show exactly
what a model was told::

    from sopbench.agents.openai import build_system_prompt
    print(build_system_prompt(setup, "react"))
"""

from ._agent import OpenAIAgent
from ._endpoint import (
    TOOL_CHOICES,
    ChatEndpoint,
    RetryPolicy,
    public_url,
    redact_url,
    scrub_secret,
)
from ._modes import fc_messages, parse_text_reply, render_text_reply, text_messages
from ._prompts import TOOL_MODES, build_system_prompt, build_user_prompt
from ._replies import ChatReply, ChatToolCall, read_completion
from ._users import AdversarialUser, LLMUser, user_view

__all__ = [
    "TOOL_CHOICES",
    "TOOL_MODES",
    "AdversarialUser",
    "ChatEndpoint",
    "ChatReply",
    "ChatToolCall",
    "LLMUser",
    "OpenAIAgent",
    "RetryPolicy",
    "build_system_prompt",
    "build_user_prompt",
    "fc_messages",
    "parse_text_reply",
    "public_url",
    "read_completion",
    "redact_url",
    "scrub_secret",
    "render_text_reply",
    "text_messages",
    "user_view",
]
