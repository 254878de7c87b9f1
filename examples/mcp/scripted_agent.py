"""A scripted agent driving `sopbench mcp serve` with the MCP SDK's client (README: "Benchmark your own agent over MCP")."""
import asyncio, sys
from mcp import StdioServerParameters
from mcp.client import Client

SERVE = ["-m", "sopbench.cli", "mcp", "serve", "--domain", "bank", "--task", "bank/apply_credit_card[0]", "--output", sys.argv[1]]


async def main() -> None:
    async with Client(StdioServerParameters(command=sys.executable, args=SERVE), mode="legacy") as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]  # run's tools, then ask_user
        opening = (await client.get_prompt("task")).messages[-1].content.text  # the user's first message
        print(f"{len(tools)} tools; the user says: {opening[:60]}...")
        reply = await client.call_tool("ask_user", {"message": "Sorry, I cannot help with that."})
        print("the user replies:", reply.content[0].text[:60])
        await client.call_tool("exit_conversation", {})  # the episode ends: scored and stored


asyncio.run(main())
