"""``sopbench run --via mcp``: an agent of sopbench (the reference policy, a model) driven through a real
MCP client session against ``sopbench mcp serve`` over stdio, one server process per episode.

The server plays the episode (the loop, the user, the limits, the scoring) and stores it in a
folder of its own; the row comes back from there to the run's one writer, with what the client
side knows better: the agent's name, model, usage and steps. The agent is shown what came over
MCP: the listed tools (``ask_user`` aside) and the opening of the prompt ``task``.

``proxy`` is the seam for a process put between the client and the server (a guard): its argv is
prefixed to the server's command line, and it must speak MCP on its own stdin and stdout.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO, cast

from mcp import StdioServerParameters
from mcp.client import Client
from mcp.client.stdio import stdio_client
from mcp_types import RequestParamsMeta

from sopbench.agents import (
    Agent,
    AgentRequestError,
    AgentTurn,
    ContextLengthExceeded,
    Usage,
    agent_factory,
)
from sopbench.agents.openai import CacheSession
from sopbench.domains import EXIT_TOOL, is_no_action
from sopbench.runner import RunSpec, read_run
from sopbench.runner.episode import (
    AgentContractError,
    Episode,
    EpisodePlayer,
    EpisodeResult,
    PlayedEpisode,
    episode_row,
    episode_setup,
)

from ._tools import ARGUMENTS_META, ASK_USER, ENDED_META, STRICT_META, openai_schema


def server_argv(config: RunSpec, episode: Episode, output: Path) -> list[str]:
    """The command line of the server that plays ``episode`` into ``output``."""
    argv = [
        sys.executable, "-m", "sopbench.cli", "mcp", "serve",
        "--domain", episode.task.domain,
        "--tasks", str(config.tasks_path),
        "--task", episode.task_id,
        "--run", str(episode.run),
        "--seed", str(config.seed),
        "--output", str(output),
        "--user", config.user,
        "--tool-list", config.tool_list,
        "--max-turns", str(config.max_turns),
        "--max-actions", str(config.max_actions),
        "--transport", "stdio",
    ]  # fmt: skip
    if config.episode_timeout is not None:
        argv += ["--episode-timeout", f"{config.episode_timeout:g}"]
    for key, value in config.user_options.arguments().items():
        argv += ["-U", f"{key}={json.dumps(value)}"]
    for key, value in config.environment.changed().items():
        argv += [f"--{key.replace('_', '-')}", str(value).lower() if isinstance(value, bool) else str(value)]
    return argv


def guard_argv(config: RunSpec, episode: Episode, log: Path) -> list[str]:
    """The command line of ``sopbench guard proxy`` guarding ``episode`` with its task's SOPs (what
    ``--env-mode guard`` enforces), its decisions appended to ``log``; the server's argv follows."""
    return [
        sys.executable, "-m", "sopbench.cli", "guard", "proxy",
        "--domain", episode.task.domain,
        "--task", episode.task_id,
        "--tasks", str(config.tasks_path),
        "--log", str(log),
        "--",
    ]  # fmt: skip


Proxy = Sequence[str] | Callable[[RunSpec, Episode, Path], Sequence[str]]


def mcp_player(proxy: Proxy = ()) -> EpisodePlayer:
    """The episode player of ``run --via mcp`` (``proxy``: argv put before the server's, or a
    function of the run, the episode and its scratch folder that returns it). A run with ``guard``
    puts ``sopbench guard proxy`` first (``guard_argv``)."""

    async def player(
        config: RunSpec, episode: Episode, attempts: int, cache: CacheSession | None = None
    ) -> PlayedEpisode:
        # ``cache`` is always None: a RunSpec with via "mcp" refuses --cache.
        return await play_via_mcp(config, episode, attempts, proxy=proxy)

    return player


GUARD_LOG = "guard.jsonl"  # the proxy's decision log, in the episode's scratch folder


async def play_via_mcp(
    config: RunSpec, episode: Episode, attempts: int, *, proxy: Proxy = ()
) -> PlayedEpisode:
    """Play one episode with the agent of ``config`` as an MCP client of ``sopbench mcp serve``
    (through ``sopbench guard proxy`` when ``config.guard``)."""
    with tempfile.TemporaryDirectory(prefix="sopbench-mcp-") as folder:
        output = Path(folder) / "episode"
        log = Path(folder) / GUARD_LOG
        before = list(proxy(config, episode, Path(folder)) if callable(proxy) else proxy)
        if config.guard:
            before += guard_argv(config, episode, log)
        argv = [*before, *server_argv(config, episode, output)]
        agent = agent_factory(config.agent)(**config.agent_options.arguments())
        driver = _Driver(config, episode, agent)
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
        errlog = open(Path(folder) / "server.log", "w+")  # noqa: SIM115 - closed with the folder
        try:
            await asyncio.wait_for(driver.drive(params, errlog), config.episode_timeout)
        except (AgentRequestError, AgentContractError):
            raise
        except TimeoutError:
            driver.failure = f"the episode timed out after {config.episode_timeout:g} s (over MCP)"
        except Exception as exc:  # noqa: BLE001 - the agent's or the session's failure: this episode's
            driver.failure = driver.failure or f"{type(exc).__name__}: {exc}"
        finally:
            try:
                await agent.close()
            except Exception as exc:  # noqa: BLE001
                driver.failure = driver.failure or f"closing failed: {type(exc).__name__}: {exc}"
        errlog.seek(0)
        said = [line.strip() for line in errlog.read().splitlines() if line.strip()]
        errlog.close()
        rows = list(read_run(output, records=False).rows) if (output / "results.sqlite").is_file() else []
        refusals = guard_refusals(log) if config.guard else []
        if not rows and said:
            driver.failure = f"{driver.failure or 'no episode'}; the server said: {said[-1]}"
    if not rows:  # the server did not start, or died: this episode's infrastructure failed
        result = EpisodeResult(status="infra_error", end="infra_error")
        result.reason = f"sopbench mcp serve stored no episode ({driver.failure or 'no reason given'})"
        return PlayedEpisode(episode_row(config, episode, result, agent, attempts), agent.shown())
    row = dataclasses.replace(
        rows[0],
        agent=config.agent,
        model=getattr(agent, "model", None),
        tool_mode=getattr(agent, "tool_mode", None),
        usage={
            "prompt_tokens": driver.usage.prompt_tokens,
            "completion_tokens": driver.usage.completion_tokens,
        },
        agent_steps=driver.steps,
        attempts=attempts,
        problems=[*rows[0].problems, *refusals],
    )
    if driver.failure is not None and row.status == "infra_error":
        row = dataclasses.replace(row, reason=f"agent: {driver.failure}; server: {row.reason}")
    return PlayedEpisode(row, agent.shown())


def guard_refusals(log: Path) -> list[str]:
    """The calls the guard proxy did not pass to the server, as ``--env-mode guard`` notes them in the
    row's problems (the server never saw them: they are not in its transcript, nor executed)."""
    if not log.is_file():
        return []
    noted = []
    for line in log.read_text(encoding="utf-8").splitlines():
        try:
            decision = json.loads(line)
        except ValueError:
            continue
        if not isinstance(decision, dict):
            continue
        if decision.get("decision") == "refused":
            noted.append(f"refused by the guard: {decision.get('explanation')}")
        elif decision.get("decision") == "invalid":
            noted.append(f"not judged by the guard: {decision.get('explanation')}")
    return noted


class _Driver:
    """The client side of one episode: the agent's turns as MCP requests."""

    def __init__(self, config: RunSpec, episode: Episode, agent: Agent) -> None:
        self.config = config
        self.episode = episode
        self.agent = agent
        self.usage = Usage()
        self.steps = 0
        self.failure: str | None = None

    async def drive(self, params: StdioServerParameters, errlog: TextIO) -> None:
        # The server's stderr goes to ``errlog`` (its lines would interleave with the run's progress).
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            listed = (await client.list_tools()).tools
            prompt = await client.get_prompt("task")
            opening = prompt.messages[-1].content
            text = getattr(opening, "text", "")
            tools = tuple(
                openai_schema(t.name, t.description, t.input_schema, bool((t.meta or {}).get(STRICT_META)))
                for t in listed
                if t.name != ASK_USER
            )
            episode = self.episode
            setup = dataclasses.replace(
                episode_setup(
                    episode.task, episode.task_id, self.config.tool_list, episode.seed, episode.run,
                    environment=self.config.environment,
                ),
                tools=tools,
            )  # fmt: skip
            await self.agent.start(setup)
            messages: list[dict[str, Any]] = [{"role": "user", "content": text}]
            while True:
                try:
                    turn = await self.agent.act(messages)
                except ContextLengthExceeded as exc:
                    self.failure = f"context length exceeded: {exc}"
                    return  # the session closes: stored as an infra_error (see docs/mcp.md)
                if not isinstance(turn, AgentTurn):
                    raise AgentContractError(f"act() returned {type(turn).__name__}, not an AgentTurn")
                self.steps += 1
                self.usage += turn.usage
                if await self._play_turn(client, setup, turn, messages):
                    return

    async def _play_turn(
        self, client: Client, setup: Any, turn: AgentTurn, messages: list[dict[str, Any]]
    ) -> bool:
        """Send one turn; True when the episode ended."""
        calls = turn.tool_calls
        if any(is_no_action(c.name, setup.no_action) for c in calls):
            calls = ()
        if not calls:
            messages.append({"role": "assistant", "content": turn.content})
            result = await client.call_tool(ASK_USER, {"message": turn.content or ""})
            messages.append({"role": "user", "content": _text(result)})
            return _ended(result)
        for call in calls:
            messages.append(
                {
                    "role": "assistant",
                    "content": turn.content,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        }
                    ],
                }
            )
            result = await client.call_tool(call.name, _arguments(call.arguments), meta=_meta(call.arguments))
            if call.name == EXIT_TOOL or _ended(result):
                return True
            messages.append({"role": "tool", "tool_call_id": call.id, "content": _text(result)})
        return False


def _arguments(text: str) -> dict[str, Any]:
    """A call's arguments as the JSON object MCP sends (the raw text travels in ``_meta``)."""
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _meta(arguments: str) -> RequestParamsMeta:
    """The call's ``_meta``: its arguments as the agent wrote them (the server keeps them as they are)."""
    return cast(RequestParamsMeta, {ARGUMENTS_META: arguments})


def _text(result: Any) -> str:
    content = result.content
    return getattr(content[0], "text", "") if content else ""


def _ended(result: Any) -> bool:
    return bool((result.meta or {}).get(ENDED_META))
