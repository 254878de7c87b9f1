"""Human seats: a person plays the user (``--user human``) or the agent (``--agent human``) in the
terminal, so that a task author can play a task by hand.

Both read lines from standard input and write to standard error (standard output stays the run's
result document). Each prints what happened since the person last had the turn: messages, tool
calls and their results. End of input (Ctrl-D) ends the conversation.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from sopbench._json import decode_bounded
from sopbench.domains import EXIT_TOOL

from ._protocol import (
    Agent,
    AgentTurn,
    EpisodeSetup,
    Message,
    ToolCallRequest,
    User,
    UserTurn,
    register_agent,
    register_user,
)

USER_EXIT = "/exit"


def _console() -> Console:
    return Console(stderr=True, highlight=False)


async def _read(console: Console, prompt: str) -> str | None:
    """One line from the person (None at end of input), read off the event loop's thread."""
    console.print(prompt, end="")
    try:
        return await asyncio.to_thread(input)
    except EOFError:
        return None


class _Transcript:
    """Prints the messages a seat has not shown yet."""

    def __init__(self, console: Console, me: str) -> None:
        self.console = console
        self.me = me  # the role whose own messages need no echo
        self.shown = 0

    def show(self, messages: Sequence[Message]) -> None:
        for message in messages[self.shown :]:
            role = message.get("role")
            if role == "tool":
                self.console.print(f"  [dim]result:[/dim] {escape(str(message.get('content')))}")
                continue
            if role != self.me and message.get("content"):
                who = "user" if role == "user" else "agent"
                self.console.print(f"[bold]{who}:[/bold] {escape(str(message['content']))}")
            if role != self.me:
                for call in message.get("tool_calls") or ():
                    function = call["function"]
                    self.console.print(
                        f"  [cyan]call:[/cyan] {escape(function['name'])} {escape(function['arguments'])}"
                    )
        self.shown = len(messages)


@register_user("human")
class HumanUser(User):
    """A person plays the user: shown the task's instruction and the values the user knows, and the
    agent's messages and tool calls; types each reply (``/exit`` or Ctrl-D ends the conversation)."""

    name = "human"

    async def start(self, setup: EpisodeSetup) -> None:
        self.console = _console()
        self.setup = setup
        self.transcript = _Transcript(self.console, "user")
        task = setup.task
        known = json.dumps(dict(task.user_known), indent=2, ensure_ascii=False, default=str)
        self.console.print(
            Panel(
                f"{escape(task.user_instruction or '')}\n\n[bold]What you know:[/bold]\n{escape(known)}\n\n"
                f"Type your messages to the agent; {USER_EXIT} (or Ctrl-D) ends the conversation.",
                title=f"You are the user: {escape(setup.task_id)}",
            )
        )

    async def opening(self) -> UserTurn:
        default = self.setup.task.user_prompt
        self.console.print(f"[dim]Enter sends the task's opening message:[/dim] {escape(default)}")
        line = await _read(self.console, "[bold green]you>[/bold green] ")
        if line is None or line.strip() == USER_EXIT:
            return UserTurn(default)  # the episode needs an opening; the next turn can end it
        return UserTurn(line.strip() or default)

    async def reply(self, messages: Sequence[Message]) -> UserTurn:
        self.transcript.show(messages)
        line = await _read(self.console, "[bold green]you>[/bold green] ")
        if line is None or line.strip() == USER_EXIT:
            return UserTurn("", ends=True)
        return UserTurn(line.strip())

    async def close(self) -> None:
        if hasattr(self, "console"):
            self.console.print("[dim]The conversation is over.[/dim]")


@register_agent("human")
class HumanAgent(Agent):
    """A person plays the agent: shown the offered tools and the conversation; types a tool call as
    ``name {json arguments}`` (checked against the tool's schema before it is sent), any other line
    as a message to the user, ``help`` or ``help NAME`` for the tools, ``exit`` to end."""

    name = "human"

    async def start(self, setup: EpisodeSetup) -> None:
        self.console = _console()
        self.tools: dict[str, Mapping[str, Any]] = {
            tool["function"]["name"]: tool["function"] for tool in setup.tools
        }
        self.transcript = _Transcript(self.console, "assistant")
        self.calls = 0
        self.console.print(
            Panel(
                "Call a tool with  [bold]name {json arguments}[/bold]  (for example "
                '[bold]login_user {"username": "alice"}[/bold]); any other line is a message to the user; '
                f"[bold]help[/bold] lists the tools, [bold]help NAME[/bold] shows one; [bold]exit[/bold] "
                f"calls {EXIT_TOOL}.",
                title=f"You are the {escape(setup.domain.replace('_', ' '))} assistant: {escape(setup.task_id)}",
            )
        )
        self._list_tools()

    def _list_tools(self) -> None:
        for name, function in self.tools.items():
            params = function.get("parameters", {})
            required = set(params.get("required", ()))
            shown = ", ".join(p if p in required else f"[{p}]" for p in params.get("properties", {}))
            self.console.print(f"  {escape(name)}({escape(shown)})")

    def _help(self, name: str) -> None:
        function = self.tools.get(name)
        if function is None:
            self.console.print(f"[red]no tool {escape(name)}[/red]; help lists them")
            return
        self.console.print(f"[bold]{escape(name)}[/bold]: {escape(function.get('description', ''))}")
        params = function.get("parameters", {})
        required = set(params.get("required", ()))
        for param, schema in params.get("properties", {}).items():
            need = "required" if param in required else "optional"
            self.console.print(f"  {escape(param)}: {escape(str(schema.get('type', 'any')))} ({need})")

    def problem(self, name: str, text: str) -> str | None:
        """Why ``name {text}`` cannot be sent (None: it can)."""
        try:
            arguments = decode_bounded(text or "{}")
        except ValueError as exc:  # not JSON, or deeper or larger than the bound
            return f"the arguments are not JSON: {exc}"
        if not isinstance(arguments, dict):
            return 'the arguments must be a JSON object, like {"username": "alice"}'
        params = self.tools[name].get("parameters", {})
        known = params.get("properties", {})
        unknown = [a for a in arguments if known and a not in known]
        missing = [p for p in params.get("required", ()) if p not in arguments]
        parts = []
        if unknown:
            parts.append(f"{name} takes no {', '.join(unknown)}")
        if missing:
            parts.append(f"{name} needs {', '.join(missing)}")
        return "; ".join(parts) + f" (help {name})" if parts else None

    async def act(self, messages: Sequence[Message]) -> AgentTurn:
        self.transcript.show(messages)
        while True:
            line = await _read(self.console, "[bold cyan]agent>[/bold cyan] ")
            if line is None or line.strip() == "exit":
                return AgentTurn(tool_calls=(ToolCallRequest("exit", EXIT_TOOL, "{}"),))
            line = line.strip()
            if not line:
                continue
            if line == "help":
                self._list_tools()
                continue
            if line.startswith("help "):
                self._help(line[5:].strip())
                continue
            name, _, rest = line.partition(" ")
            if name in self.tools:
                why = self.problem(name, rest.strip())
                if why is not None:
                    self.console.print(f"[red]not sent:[/red] {escape(why)}")
                    continue
                self.calls += 1
                return AgentTurn(
                    tool_calls=(ToolCallRequest(f"human-{self.calls}", name, rest.strip() or "{}"),)
                )
            if rest.lstrip().startswith("{"):
                self.console.print(f"[red]not sent:[/red] no tool {escape(name)} (help lists them)")
                continue
            return AgentTurn(content=line)
