"""The README's OpenAI Agents SDK example (examples/mcp/agents_sdk_agent.py) plays an episode over MCP
to a stored verdict, with a scripted policy in place of a model: no network, no key."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.types", reason="the mcp extra is not installed (pip install 'sopbench[mcp]')")
agents = pytest.importorskip(
    "agents", reason="the agents-sdk extra is not installed (pip install 'sopbench[agents-sdk]')"
)

from openai.types.responses import (  # noqa: E402
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from sopbench.runner import read_run  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp" / "agents_sdk_agent.py"
REFUSAL = "Sorry, I cannot open a credit card account for you."


class ScriptedPolicy(agents.Model):
    """Tells the user it cannot help (through ask_user), then ends the conversation; remembers what
    the Agents SDK showed it at each turn."""

    def __init__(self) -> None:
        self.shown: list[tuple[str | None, Any, list[Any]]] = []

    async def get_response(
        self,
        system_instructions,
        input,
        model_settings,
        tools,
        output_schema,
        handoffs,
        tracing,
        *,
        previous_response_id=None,
        conversation_id=None,
        prompt=None,
    ):
        self.shown.append((system_instructions, input, list(tools)))
        turn = len(self.shown)
        if turn == 1:
            output = [_call("ask_user", {"message": REFUSAL})]
        elif turn == 2:
            output = [_call("exit_conversation", {})]
        else:
            text = ResponseOutputText(type="output_text", text="Goodbye.", annotations=[])
            output = [
                ResponseOutputMessage(
                    id="m1", type="message", role="assistant", status="completed", content=[text]
                )
            ]
        return agents.ModelResponse(output=output, usage=agents.Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("the example runs without streaming")


def _call(name: str, arguments: dict[str, Any]) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call", call_id=f"call-{name}", name=name, arguments=json.dumps(arguments)
    )


def _load_example() -> Any:
    spec = importlib.util.spec_from_file_location("agents_sdk_agent", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_agents_sdk_example_plays_an_episode_to_a_verdict(tmp_path: Path, monkeypatch, capsys) -> None:
    assert len(EXAMPLE.read_text().splitlines()) <= 20
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agents.set_tracing_disabled(True)  # the SDK would otherwise export traces to OpenAI
    policy = ScriptedPolicy()
    asyncio.run(_load_example().main(str(tmp_path / "run"), model=policy))
    assert capsys.readouterr().out.strip() == "Goodbye."

    [episode] = read_run(tmp_path / "run").episodes
    row = episode.row
    assert (row.task_id, row.status, row.end_reason) == (
        "bank/apply_credit_card[0]",
        "completed",
        "exit_conversation",
    )
    assert row.passed is not None
    # The user heard the policy's words, and answered them.
    [run] = episode.record.runs
    spoken = [(message.sender, message.content) for message in run.messages]
    assert spoken[1] == ("bank assistant", REFUSAL)
    assert spoken[2][0] == "user" and spoken[2][1]
    # The Agents SDK showed the model the SOP, the user's opening, and run's tools with their schemas.
    instructions, given, tools = policy.shown[0]
    assert episode.system_prompt is not None and instructions.startswith(episode.system_prompt)
    assert given == [{"role": "user", "content": spoken[0][1]}]
    stored = {tool["function"]["name"]: tool["function"] for tool in episode.tools}
    offered = {tool.name: tool for tool in tools if tool.name != "ask_user"}
    assert offered.keys() == stored.keys()
    for name, tool in offered.items():
        assert tool.description == stored[name]["description"]
        assert tool.params_json_schema["properties"] == stored[name]["parameters"]["properties"]


def test_the_readme_shows_the_agents_sdk_example_as_it_is() -> None:
    readme = (EXAMPLE.parents[2] / "README.md").read_text()
    body = EXAMPLE.read_text().split('"""', 2)[2].strip()
    assert body in readme
