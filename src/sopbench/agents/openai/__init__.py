"""LLM agents and users behind any OpenAI-compatible chat-completions endpoint.

Importing this package registers the agent ``openai`` and the users ``llm`` and ``adversarial``
(``sopbench.agents`` imports it). The prompt builders are public so that reports can show exactly
what a model was told::

    from sopbench.agents.openai import build_system_prompt
    print(build_system_prompt(setup, "react"))
"""

from sopbench.secrets import public_url, redact_url, scrub_secret

from ._agent import OpenAIAgent
from ._cache import CacheError, ReplyCache
from ._endpoint import TOOL_CHOICES, ChatEndpoint
from ._modes import fc_messages, parse_text_reply, render_text_reply, text_messages
from ._prompts import STUBBORN_FIRST_REPLY, TOOL_MODES, build_system_prompt, build_user_prompt
from ._recorded import CACHE_FORMAT, CACHE_MODES, CacheMode, CacheSession, request_fields, request_key
from ._replicas import REPLICA_BACKOFF, ReplicaHealth, pick_replica, replica_health
from ._replies import ChatReply, ChatToolCall, read_completion
from ._retry import RetryPolicy
from ._users import EXIT_TOOL_SCHEMA, AdversarialUser, LLMUser, user_view

__all__ = [
    "CACHE_FORMAT",
    "CACHE_MODES",
    "CacheError",
    "CacheMode",
    "CacheSession",
    "ReplyCache",
    "request_fields",
    "request_key",
    "REPLICA_BACKOFF",
    "ReplicaHealth",
    "pick_replica",
    "replica_health",
    "TOOL_CHOICES",
    "EXIT_TOOL_SCHEMA",
    "STUBBORN_FIRST_REPLY",
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
