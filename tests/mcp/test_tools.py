"""An offered tool listed over MCP and read back by the client is the schema ``run`` offers, to the
byte: the text tool modes write the tool list into the prompt as JSON text, so key order counts."""

from __future__ import annotations

import itertools
import json

import pytest

from sopbench.domains import PUBLISHED_DOMAINS, get_domain, published_offer
from sopbench.mcp import mcp_tool, openai_schema


@pytest.mark.parametrize("name", PUBLISHED_DOMAINS)
def test_every_offered_schema_comes_back_as_written_whatever_order_the_wire_gives(name: str) -> None:
    domain = get_domain(name)
    for tool in (domain.tools[offered] for offered in published_offer(domain)):
        written = tool.openai_schema()
        listed = mcp_tool(written)
        keys = list(listed["inputSchema"])
        # every order of the top-level keys a client library may hand back (the MCP SDK's wire
        # model puts ``type`` after ``required``)
        for order in itertools.permutations(keys):
            received = {key: listed["inputSchema"][key] for key in order}
            back = openai_schema(
                listed["name"], listed["description"], received, written["function"]["strict"]
            )
            assert json.dumps(back) == json.dumps(written), (tool.name, order)


def test_a_key_sopbench_does_not_write_keeps_its_place_after_the_known_ones() -> None:
    received = {"properties": {}, "$defs": {"x": {}}, "type": "object", "title": "T"}
    back = openai_schema("t", "d", received, False)["function"]["parameters"]
    assert list(back) == ["type", "properties", "$defs", "title"]
