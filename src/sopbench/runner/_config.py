"""The configuration of a run, validated once."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sopbench.agents import agent_factory, user_factory
from sopbench.domains import MAX_CALLS, MAX_MESSAGES, NoActionReading, ToolList, domain_selection


class RunConfigError(ValueError):
    """A configuration that cannot run (a user mistake): unknown agent, option, domain, tasks."""


# The settings that decide a run's results, in the order messages name them: a run folder resumes
# only when each is equal. Each is (manifest field, where it comes from: the run's own configuration,
# the agent's or the user's options, that option's name). A new result-determining option is one line.
IDENTITY_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("agent", "run", "agent"),
    ("model", "agent", "model"),
    ("tool_mode", "agent", "tool_mode"),
    ("tool_list", "run", "tool_list"),
    ("user", "run", "user"),
    ("user_model", "user", "model"),
    ("seed", "run", "seed"),
    ("max_turns", "run", "max_turns"),
    ("max_actions", "run", "max_actions"),
    ("temperature", "agent", "temperature"),
    ("max_tokens", "agent", "max_tokens"),
)
# Agent and user options that change no result: where requests go, how long they wait, how often
# they are retried, where the key is read from. Every other option of an agent or user is identity.
MAX_RUNS = 1000
"""Runs per task a run may ask for (``--runs``, a sweep's ``runs``): pass^k is read for k <= 16,
and 1,000 runs of every published task are 903,000 episodes."""
MAX_SEED = 2**63 - 1
"""The largest seed (stored as a 64-bit integer in the manifest and rows)."""

NOT_IDENTITY_OPTIONS = frozenset(
    {
        "base_url",
        "api_key_env",
        "request_timeout",
        "max_retries",
        "retry_initial_backoff",
        "retry_max_backoff",
        "endpoint_slots",
    }
)


class RunConfig(BaseModel):
    """Everything that defines a run. The settings in ``IDENTITY_FIELDS`` must match to resume a folder."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    domains: tuple[str, ...] = ("all",)
    agent: str
    agent_options: dict[str, Any] = Field(default_factory=dict)
    user: str = "none"
    user_options: dict[str, Any] = Field(default_factory=dict)
    tasks: Path | None = None  # a task file or a folder of <domain>_tasks.json[.gz]; None: the default
    output: Path
    tool_list: ToolList = "full"
    limit: int | None = Field(default=None, ge=1)  # the first N tasks of each domain
    concurrency: int = Field(default=8, ge=1)
    runs: int = Field(default=1, ge=1, le=MAX_RUNS)
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    max_turns: int = Field(default=MAX_MESSAGES, ge=1)  # messages, the opening included
    max_actions: int = Field(default=MAX_CALLS, ge=1)  # answered tool calls
    episode_timeout: float | None = Field(default=600.0, gt=0)  # seconds; None: no limit
    baselines: bool = True  # score refuse-all and no-verify on the same tasks for the summary
    # The published ablations (run_simulation.py) and the runtime guard; see docs/runner.md.
    env_mode: Literal["prompt", "program", "guard"] = "prompt"
    shuffle_tools: bool = False  # seeded by each episode's seed
    constraint_format: Literal["structured", "old"] = "structured"
    default_sop: Literal["full", "required"] = "full"
    # How a call's name is read as "no action" (sopbench.domains.is_no_action): the simulator's rule,
    # or the wider reading (more placeholder spellings, spaces ignored), for every agent alike.
    no_action: NoActionReading = "published"

    @field_validator("domains", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return domain_selection(value) if isinstance(value, str) else value

    @property
    def tasks_path(self) -> Path:
        if self.tasks is not None:
            return self.tasks
        from sopbench.generation import default_tasks_dir

        return default_tasks_dir()

    @model_validator(mode="after")
    def _oracle_needs_full(self) -> RunConfig:
        if self.tool_list == "oracle" and self.default_sop != "full":
            raise ValueError("--tool-list oracle needs --default-sop full (as in the published code)")
        return self

    def ablations(self) -> dict[str, Any]:
        """The environment settings of the published ablations (and the guard, and how a call's name is
        read as "no action"), by name."""
        return {
            "env_mode": self.env_mode,
            "shuffle_tools": self.shuffle_tools,
            "constraint_format": self.constraint_format,
            "default_sop": self.default_sop,
            "no_action": self.no_action,
        }

    def identity(self) -> dict[str, Any]:
        """The settings that decide this run's results (``IDENTITY_FIELDS``, with the agent's and the
        user's effective options: an option left at its default equals the default given explicitly),
        then any other option of a plugin agent or user under ``agent_options`` / ``user_options``, and
        the ablation settings that are not at their default."""
        from sopbench.secrets import redact_url

        sources = {
            "run": self.model_dump(mode="json"),
            "agent": effective_options(agent_factory(self.agent), self.agent_options),
            "user": effective_options(user_factory(self.user), self.user_options),
        }
        identity = {field: sources[source].get(option) for field, source, option in IDENTITY_FIELDS}
        for source in ("agent", "user"):
            claimed = {option for _, where, option in IDENTITY_FIELDS if where == source}
            rest = {
                k: v for k, v in sources[source].items() if k not in claimed and k not in NOT_IDENTITY_OPTIONS
            }
            if rest:
                identity[f"{source}_options"] = dict(sorted(rest.items()))
        # The ablation settings count when they differ from the defaults, so that a folder written
        # before they existed still resumes.
        defaults = RunConfig.model_fields
        identity |= {k: v for k, v in self.ablations().items() if v != defaults[k].default}
        # A base URL is stored without credentials (user information, key-like query values); it is
        # not identity (NOT_IDENTITY_OPTIONS), but a plugin may name another option a URL.
        for source in ("agent_options", "user_options"):
            options = identity.get(source) or {}
            if isinstance(options.get("base_url"), str):
                options["base_url"] = redact_url(options["base_url"])
        # As the store keeps it (JSON): a tuple and a list of the same values compare equal.
        return orjson.loads(orjson.dumps(identity, default=str))

    def check_options(self, spelling: Callable[[str, str], str] | None = None) -> None:
        """Unknown agent or user, or an option its constructor does not take: ``RunConfigError``.
        ``spelling(what, option)`` names an option in the message (``what``: agent or user); by
        default as ``sopbench run`` spells it (``--model``, ``--user-model``)."""
        spell = spelling or _flag
        for what, name, options, lookup in (
            ("agent", self.agent, self.agent_options, agent_factory),
            ("user", self.user, self.user_options, user_factory),
        ):
            try:
                factory = lookup(name)
            except KeyError as exc:
                raise RunConfigError(str(exc).strip("\"'")) from None
            unknown = unaccepted_options(factory, options)
            if unknown:
                flags = ", ".join(spell(what, option) for option in unknown)
                raise RunConfigError(f"{what} {name!r} does not take {flags}")
            missing = [p for p in required_options(factory) if p not in options]
            if missing:
                flags = ", ".join(spell(what, option) for option in missing)
                raise RunConfigError(f"{what} {name!r} needs {flags}")
            try:  # a bad option value (a missing file, a missing key) is the user's mistake
                factory(**options)  # constructors acquire nothing (start() does): nothing to release
            except Exception as exc:  # noqa: BLE001 - any constructor error, reported in one line
                raise RunConfigError(f"cannot create {what} {name!r}: {exc}") from None


def effective_options(factory: Callable[..., object], options: dict[str, Any]) -> dict[str, Any]:
    """The options a factory runs with: its signature's defaults, overridden by ``options``."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        parameters = {}  # type: ignore[assignment]
    defaults = {
        n: p.default
        for n, p in parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is not p.empty
    }
    return {**defaults, **options}


def required_options(factory: Callable[..., object]) -> list[str]:
    """Constructor parameters without a default (options the user must give)."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return []
    return [
        n
        for n, p in parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is p.empty
    ]


def unaccepted_options(factory: Callable[..., object], options: dict[str, Any]) -> list[str]:
    """The options a factory's signature does not accept (none when it takes ``**kwargs``)."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return []
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return []
    accepted = {n for n, p in parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return [option for option in options if option not in accepted]


def import_plugins(modules: Iterable[str]) -> None:
    """Import modules that register agents or users (``sopbench run --import MODULE``); modules of the
    current folder are found too. A module that fails to import is an ``ImportError`` naming it."""
    if "" not in sys.path:
        sys.path.insert(0, "")
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - a user's module: name it, whatever it raised
            raise ImportError(f"cannot import {module}: {type(exc).__name__}: {exc}") from exc


def _flag(what: str, option: str) -> str:
    """An agent's or user's option as ``sopbench run`` spells it."""
    return f"--{'user-' if what == 'user' else ''}{option.replace('_', '-')}"
