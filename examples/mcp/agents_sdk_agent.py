"""An OpenAI Agents SDK agent benchmarked over MCP (README: "Benchmark your own agent over MCP")."""
import asyncio, sys
from agents import Agent, Runner
from agents.mcp import MCPServerStdio

SERVE = ["-m", "sopbench.cli", "mcp", "serve", "--domain", "bank", "--task", "bank/apply_credit_card[0]", "--output"]


async def main(folder: str, model="gpt-4.1-mini") -> None:  # a model name, or any agents.Model
    async with MCPServerStdio({"command": sys.executable, "args": [*SERVE, folder]}, client_session_timeout_seconds=60) as server:
        sop, opening = [message.content.text for message in (await server.get_prompt("task")).messages]
        guide = f"{sop}\n\nTalk to the user only with the tool ask_user: its result is the user's reply."
        agent = Agent(name="support", instructions=guide, model=model, mcp_servers=[server])
        result = await Runner.run(agent, opening, max_turns=60)
        print(result.final_output)  # the episode is scored and stored when the agent calls exit_conversation


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
