"""The options of ``sopbench run``: the run's own settings, the environment's (the published
ablations, the guard, the no-action reading), and the agent's and the user's options, each a
spelling of a field of ``sopbench.runner.RunSpec`` or of the agent's or user's ``Options`` model.
A setting not given takes the default ``RunSpec`` (or the model) declares: none is written here.

``-A KEY=VALUE`` / ``-U KEY=VALUE`` set any option of any agent or user, a plugin's included; the
named flags (``--model``, ``--user-model``, ...) are the same fields spelled for the built-ins.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ._job import UserError
from ._options import published_tasks

if TYPE_CHECKING:
    from sopbench.agents import OptionsError, Side

AgentOption = Annotated[
    str,
    typer.Option(
        metavar="NAME", help="reference, refuse-all, no-verify, replay, openai, human (you play it), ..."
    ),
]
OutputOption = Annotated[
    Path,
    typer.Option(
        "--output", "-o", metavar="DIR", help="Run folder (results.sqlite); the same folder resumes."
    ),
]
DomainOption = Annotated[str, typer.Option(metavar="NAME", help="A domain, comma-separated domains, or all.")]
TasksOption = Annotated[
    Path | None,
    typer.Option(
        metavar="PATH",
        show_default=False,
        help="A task file or a folder of <domain>_tasks.json[.gz] (default: the generated task set); "
        "published: the published tasks `sopbench data fetch` keeps.",
        callback=published_tasks,
    ),
]
ToolListOption = Annotated[
    str | None,
    typer.Option(
        metavar="NAME", show_default=False, help="full (every tool an agent may call; the default) or oracle."
    ),
]
UserOption = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        show_default=False,
        help="none (the published fixed replies; the default), scripted, llm, human (you play it), ...",
    ),
]
Limit = Annotated[int | None, typer.Option(min=1, metavar="N", help="Only the first N tasks of each domain.")]
Concurrency = Annotated[
    int | None, typer.Option(min=1, metavar="N", show_default=False, help="Episodes played at once (8).")
]
RunsOption = Annotated[
    int | None, typer.Option(min=1, metavar="K", show_default=False, help="Runs per task, at most 1,000 (1).")
]
SeedOption = Annotated[
    int | None,
    typer.Option(
        metavar="S", show_default=False, help="Run seed, 0 to 2**63-1, each episode derives its own (0)."
    ),
]
# No default here: a limit not given is the published one (``sopbench.domains.MAX_MESSAGES`` /
# ``MAX_CALLS``, the run configuration's defaults), written once; the CLI never imports the domains
# just to show it.
MaxTurns = Annotated[
    int | None,
    typer.Option(
        min=1,
        metavar="N",
        show_default=False,
        help="Message limit, checked before each reply as published (20): no reply is asked for once "
        "the transcript holds N messages; the answers to the last reply's calls may take it past N.",
    ),
]
MaxActions = Annotated[
    int | None,
    typer.Option(min=1, metavar="N", show_default=False, help="Executed calls per episode (published: 10)."),
]
EpisodeTimeout = Annotated[
    float | None,
    typer.Option(
        min=0.001,
        metavar="SECONDS",
        show_default=False,
        help="After this an episode is an infra_error (600).",
    ),
]
BaseUrl = Annotated[
    list[str] | None,
    typer.Option(
        metavar="URL",
        show_default=False,
        help="Agent: OpenAI-compatible endpoint; repeat it for replicas of one model (requests go "
        "to the least busy one; a failing one is left out for a while).",
    ),
]
ModelOption = Annotated[str | None, typer.Option(metavar="NAME", help="Agent: model name.")]
ToolMode = Annotated[str | None, typer.Option(metavar="MODE", help="Agent: fc, react or act-only.")]
Temperature = Annotated[
    str | None,
    typer.Option(
        metavar="T",
        show_default=False,
        help="Agent: sampling temperature (published: 0), or 'default' to send none (o-series models).",
    ),
]
MaxTokens = Annotated[
    str | None,
    typer.Option(
        metavar="N",
        show_default="512",
        help="Agent: completion token limit per reply (published: 512), or 'none' to send no limit.",
    ),
]
ToolChoice = Annotated[
    str | None,
    typer.Option(
        metavar="CHOICE",
        show_default="auto",
        help="Agent (fc): tool_choice sent with the tools: auto, required or none.",
    ),
]
CompactTools = Annotated[
    bool,
    typer.Option(
        "--compact-tools",
        help="Agent (react, act-only): the tool list as compact JSON (small-context models).",
    ),
]
ApiKeyEnv = Annotated[str | None, typer.Option(metavar="VAR", help="Agent: variable holding the API key.")]
RequestTimeout = Annotated[float | None, typer.Option(metavar="SECONDS", help="Agent: per request.")]
MaxRetries = Annotated[int | None, typer.Option(metavar="N", help="Agent: retries per request.")]
EndpointSlots = Annotated[
    int | None,
    typer.Option(
        min=1,
        metavar="N",
        show_default=False,
        help="Agent: requests in flight at once per endpoint URL (default: no cap; 1 for serve-local). A "
        "request waits for a slot before its --request-timeout starts; the wait is reported as queue time.",
    ),
]
Trajectories = Annotated[
    Path | None, typer.Option(metavar="FILE", help="Agent (replay): a published trajectory file.")
]
UserBaseUrl = Annotated[str | None, typer.Option(metavar="URL", help="User: OpenAI-compatible endpoint.")]
UserModel = Annotated[str | None, typer.Option(metavar="NAME", help="User: model name.")]
UserApiKeyEnv = Annotated[str | None, typer.Option(metavar="VAR", help="User: variable holding the API key.")]
UserTemperature = Annotated[
    str | None, typer.Option(metavar="T", show_default="1.0", help="User (llm): like --temperature.")
]
UserMaxTokens = Annotated[
    str | None, typer.Option(metavar="N", show_default="128", help="User (llm): like --max-tokens.")
]
UserRequestTimeout = Annotated[
    float | None, typer.Option(metavar="SECONDS", show_default="300", help="User (llm): per request.")
]
UserScript = Annotated[
    Path | None, typer.Option(metavar="FILE", help="User (scripted): a JSON file of replies.")
]
CacheOption = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        metavar="PATH",
        show_default=False,
        help="Record every model reply (agent and llm user) in this SQLite file, created when missing, "
        "and answer from it the requests it holds: an exact rerun at no cost. Not part of the run's identity.",
    ),
]
CacheModeOption = Annotated[
    str | None,
    typer.Option(
        "--cache-mode",
        metavar="MODE",
        show_default=False,
        help="read-write (the default with --cache: answer from the cache, record the rest), replay (never "
        "touch the network: a request not recorded ends its episode as infra_error, saying what differs) or off.",
    ),
]
Baselines = Annotated[bool, typer.Option(help="Show refuse-all and no-verify on the same tasks.")]
PricesOption = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        show_default=False,
        help="TOML or JSON: USD per million input/output tokens per model; adds the agent's cost_usd.",
    ),
]
Wide = Annotated[
    bool, typer.Option("--wide", help="Tables with every count and interval (over 100 columns).")
]
PluginOption = Annotated[
    list[str] | None,
    typer.Option(
        "--import",
        metavar="MODULE",
        show_default=False,
        help="Import a module that registers agents or users (repeatable).",
    ),
]


AgentOptionPairs = Annotated[
    list[str] | None,
    typer.Option(
        "--agent-option",
        "-A",
        metavar="KEY=VALUE",
        show_default=False,
        help="Any option of the agent, a plugin's included (repeatable); VALUE is read as JSON, else as text.",
    ),
]
Via = Annotated[
    str,
    typer.Option(
        metavar="direct|mcp",
        help="How the agent reaches its episodes: direct (in process) or mcp (an MCP client session "
        "against `sopbench mcp serve` over stdio, per episode; needs the mcp extra).",
    ),
]
GuardOption = Annotated[
    bool,
    typer.Option(
        "--guard",
        help="With --via mcp: put the runtime guard (`sopbench guard proxy`, the task's SOPs) between the "
        "agent's MCP client and the server; a call whose SOP is not verified is refused and never runs. "
        "Part of the run's identity; each refusal is noted in the episode's problems (docs/mcp.md).",
    ),
]
UserOptionPairs = Annotated[
    list[str] | None,
    typer.Option(
        "--user-option",
        "-U",
        metavar="KEY=VALUE",
        show_default=False,
        help="Any option of the user (repeatable); VALUE is read as JSON, else as text.",
    ),
]

# The named flags of agent and user options: (side, option) -> the flag. Any other option is spelled
# ``-A KEY`` / ``-U KEY``.
OPTION_FLAGS: dict[tuple[str, str], str] = {
    **{
        ("agent", key): f"--{key.replace('_', '-')}"
        for key in (
            "base_url", "model", "tool_mode", "temperature", "max_tokens", "tool_choice", "compact_tools",
            "api_key_env", "request_timeout", "max_retries", "endpoint_slots", "trajectories",
        )
    },
    **{
        ("user", key): f"--user-{key.replace('_', '-')}"
        for key in ("base_url", "model", "api_key_env", "temperature", "max_tokens", "request_timeout", "script")
    },
}  # fmt: skip


def option_flag(side: Side, key: str) -> str:
    """How ``sopbench run`` spells option ``key`` of the agent or the user."""
    return OPTION_FLAGS.get((side, key), f"{'-A' if side == 'agent' else '-U'} {key}")


def options_message(exc: OptionsError) -> str:
    """An option error in one line, each key as ``sopbench run`` spells it."""
    return exc.spelled(option_flag)


def merged_options(side: Side, flags: Mapping[str, object], pairs: Sequence[str] | None) -> dict[str, Any]:
    """The options given for one side: its named flags (``flags``: option -> value, the ones given)
    and its ``-A``/``-U`` pairs. The same option given both ways is a ``UserError``."""
    letter = "-A" if side == "agent" else "-U"
    options = dict(flags)
    for pair in pairs or ():
        key, sep, text = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise UserError(f"{letter} {pair}: give KEY=VALUE")
        if key in options:
            first = option_flag(side, key) if key in flags else f"{letter} {key}"
            raise UserError(f"{letter} {pair}: {key} is already set by {first}; give it once")
        options[key] = _value(text)
    return options


def _value(text: str) -> object:
    """A ``-A``/``-U`` value: JSON when it reads as JSON (numbers, true, null, lists), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


EnvMode = Annotated[
    str | None,
    typer.Option(
        metavar="MODE",
        show_default=False,
        help="prompt (the default: constraints listed; lenient system), program (the environment enforces them; no "
        "listing, no internal_* tools) or guard (listed, and unverified service calls are not executed).",
    ),
]
ShuffleTools = Annotated[
    bool | None,
    typer.Option(
        "--shuffle-tools/--no-shuffle-tools",
        show_default=False,
        help="Shuffle the offered tools (seeded per episode; off by default).",
    ),
]
ConstraintFormat = Annotated[
    str | None,
    typer.Option(
        metavar="FORMAT",
        show_default=False,
        help="How constraints are listed: structured (the default) or old (numbered).",
    ),
]
DefaultSop = Annotated[
    str | None,
    typer.Option(
        metavar="OPTION",
        show_default=False,
        help="The SOP of the non-goal actions: full (the default) or required.",
    ),
]
NoAction = Annotated[
    str | None,
    typer.Option(
        metavar="READING",
        show_default=False,
        help="Which tool names make a reply a reply without calls, for every agent: published (the "
        "simulator's: none or n/a, in any case; the default) or wide (also na, null and an empty name, "
        "spaces around them ignored). A setting of the run: a folder resumes only with the same one.",
    ),
]
