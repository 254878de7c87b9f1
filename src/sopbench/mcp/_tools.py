"""The tools a served episode lists, as plain data (no MCP SDK): the offered tools of ``run`` as MCP
tool descriptions, and the one tool MCP needs besides them, ``ask_user``.

An MCP client talks only through requests, so the agent's text turn of ``run`` (a reply without a
tool call, after which the simulated user answers) is the call ``ask_user(message)``, whose result
is the user's reply. The transcript keeps it as ``run`` does: an assistant message of that text,
then the user's message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

ASK_USER = "ask_user"
ASK_USER_SCHEMA: Mapping[str, Any] = {
    "type": "function",
    "function": {
        "name": ASK_USER,
        "description": (
            "Send a message to the user (a question, an answer, a refusal) and get the user's reply: "
            "the only way to talk to the user."
        ),
        "strict": True,
        "parameters": {
            "type": "object",
            "properties": {"message": {"type": "string", "description": "What you say to the user."}},
            "required": ["message"],
            "additionalProperties": False,
        },
    },
}
# Where a listed tool keeps the ``strict`` flag of its OpenAI schema (MCP has no such field), and
# where a call may carry its arguments as the raw JSON text the agent wrote (kept as written).
STRICT_META = "sopbench/strict"
ARGUMENTS_META = "sopbench/arguments"
ENDED_META = "sopbench/ended"


def mcp_tool(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI function-tool schema as an MCP tool description: the same name, description and
    parameters (``inputSchema``), its ``strict`` flag in ``_meta``."""
    function = schema["function"]
    return {
        "name": function["name"],
        "description": function.get("description") or "",
        "inputSchema": dict(function.get("parameters") or {"type": "object", "properties": {}}),
        "_meta": {STRICT_META: bool(function.get("strict", False))},
    }


def listed_tools(offered: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What a served episode lists: ``run``'s offered tools in its order, then ``ask_user``."""
    return [mcp_tool(schema) for schema in (*offered, ASK_USER_SCHEMA)]


def openai_schema(
    name: str, description: str | None, parameters: Mapping[str, Any], strict: bool
) -> dict[str, Any]:
    """A listed MCP tool back as the OpenAI function-tool schema ``run`` offers, its parameters in
    the order ``run`` writes them (see ``SCHEMA_KEY_ORDER``)."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description or "",
            "strict": strict,
            "parameters": _in_schema_order(parameters),
        },
    }


# The SDK's wire model of an input schema declares ``$schema``, ``properties``, ``required`` and
# ``type`` in that order and puts every other key after them, so a listed schema reaches the client
# as {properties, required, type, additionalProperties}. Key order means nothing to JSON Schema, but
# the text tool modes write the tool list into the system prompt as JSON text: an agent reached over
# MCP would be shown another prompt than in process. The client puts the keys back in the order
# every sopbench tool schema is written in (and JSON Schema's own examples use); any key it does not
# know keeps its place after them.
SCHEMA_KEY_ORDER = ("$schema", "type", "properties", "required", "additionalProperties")


def _in_schema_order(parameters: Mapping[str, Any]) -> dict[str, Any]:
    ordered = {key: parameters[key] for key in SCHEMA_KEY_ORDER if key in parameters}
    ordered.update((key, value) for key, value in parameters.items() if key not in ordered)
    return ordered
