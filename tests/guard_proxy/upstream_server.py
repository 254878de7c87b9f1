"""A small MCP server written with the SDK, for the proxy's tests: a shop's refund desk.

Tools: verify_identity(user) -> bool (alice and bob exist), lookup_order(user, order) -> object,
refund(user, order, amount) -> text, echo(text) -> text, die() (the server exits at once, mid-call).
Every call that runs is appended to the file named by $UPSTREAM_CALLS (one line: the tool's name),
so a test can tell what the server executed.
"""

import os
import sys

from mcp.server.mcpserver import MCPServer

app = MCPServer("refund-desk")


def _ran(name: str) -> None:
    path = os.environ.get("UPSTREAM_CALLS")
    if path:
        with open(path, "a") as calls:
            calls.write(name + "\n")


@app.tool()
def verify_identity(user: str) -> bool:
    """Whether the user is who they say."""
    _ran("verify_identity")
    return user in {"alice", "bob"}


@app.tool()
def lookup_order(user: str, order: str) -> dict:
    """The user's order."""
    _ran("lookup_order")
    return {"order": order, "user": user, "total": 30}


@app.tool()
def refund(user: str, order: str, amount: int) -> str:
    """Refund an order."""
    _ran("refund")
    return f"refunded {amount} to {user} for {order}"


@app.tool()
def echo(text: str) -> str:
    """The text back (no SOP)."""
    return text


@app.tool()
def die() -> str:
    """The server exits at once."""
    _ran("die")
    sys.stdout.flush()
    os._exit(3)


if __name__ == "__main__":
    app.run()
