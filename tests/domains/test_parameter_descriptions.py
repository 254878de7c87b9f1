"""Every parameter of every tool schema an agent is offered says what it means, as the published
schemas do: one table per domain's catalogue (``parameter_descriptions``), one mechanism."""

from __future__ import annotations

from typing import Any

import pytest

from sopbench.domains import PUBLISHED_DOMAINS, Catalogue, get_domain, parameters_schema
from sopbench.runner.episode import tool_schema


def _undescribed(properties: dict[str, Any], where: str) -> list[str]:
    missing = []
    for name, schema in properties.items():
        if not str(schema.get("description", "")).strip():
            missing.append(where + name)
        missing += _undescribed(schema.get("properties", {}), f"{where}{name}.")
        items = schema.get("items")
        if isinstance(items, dict):
            missing += _undescribed(items.get("properties", {}), f"{where}{name}[].")
    return missing


@pytest.mark.parametrize("name", PUBLISHED_DOMAINS)
def test_every_parameter_of_every_tool_is_described(name):
    domain = get_domain(name)
    missing = []
    for tool in domain.tools:
        schema = tool_schema(domain, tool)
        missing += _undescribed(schema["function"]["parameters"]["properties"], f"{tool}: ")
    assert missing == []


def test_the_domain_table_describes_by_name_and_a_parameter_may_say_more():
    catalogue = Catalogue.from_dict(
        {
            "domain": "toy",
            "parameter_descriptions": {"user": "Who asks.", "amount": "How much.", "id": "Card number."},
            "tools": [
                {
                    "name": "pay",
                    "signature": ["user", "amount", "card"],
                    "params": [
                        {"name": "user", "type": "string"},
                        {"name": "amount", "type": "number", "description": "How much, in cents."},
                        {
                            "name": "card",
                            "type": "object",
                            "object_shapes": [{"properties": {"id": "string"}}],
                        },
                    ],
                    "required": ["user", "amount", "card"],
                }
            ],
        }
    )
    properties = parameters_schema(catalogue.tools["pay"])["properties"]
    assert properties["user"]["description"] == "Who asks."
    assert properties["amount"]["description"] == "How much, in cents."  # its own wins
    assert properties["card"]["properties"]["id"] == {"type": "string", "description": "Card number."}
