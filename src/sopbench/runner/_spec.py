"""``RunSpec``: everything that defines a run, one typed value validated once.

``sopbench run``, a sweep file's entries and the Inspect task all build one; the runner takes only a
``RunSpec``. Every default is written here (or, for an agent's or user's own options, in its
``Options`` model, and for the environment in ``sopbench.domains.Environment``). Each field is
marked with what it does to a run folder's identity (the settings that must be equal to resume it),
and the manifest's identity is derived from those marks.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, field_validator, model_validator

from sopbench.agents import Options, OptionsError, Side, agent_factory, user_factory, validate_options
from sopbench.agents.openai import CacheMode
from sopbench.domains import (
    DEFAULT_ENVIRONMENT,
    ENVIRONMENT_SETTINGS,
    MAX_CALLS,
    MAX_MESSAGES,
    Environment,
    ToolList,
    domain_selection,
)


class RunSpecError(ValueError):
    """A run that cannot be made (a user mistake): unknown agent, domain, tasks."""


# What a field does to a run folder's identity: ``always`` part of it, ``changed`` part of it when
# not at its default (a setting added after folders were written, so that they still resume),
# ``never`` (how the run is carried out: where, how fast, how much of it).
IdentityMark = Literal["always", "changed", "never"]
Via = Literal["direct", "mcp"]

MAX_RUNS = 1000
"""Runs per task a run may ask for (``--runs``, a sweep's ``runs``): pass^k is read for k <= 16,
and 1,000 runs of every published task are 903,000 episodes."""
MAX_SEED = 2**63 - 1
"""The largest seed (stored as a 64-bit integer in the manifest and rows)."""
EPISODE_TIMEOUT_S = 600.0
"""Seconds after which an episode is an ``infra_error`` (``--episode-timeout``)."""

# Agent and user options the manifest keeps beside the run's own settings, under the names the first
# store schema gave them (so every folder ever written resumes): manifest key -> (side, option).
# The agent's and the user's other identity options go under ``agent_options`` / ``user_options``.
PROMOTED_OPTIONS: dict[str, tuple[Side, str]] = {
    "model": ("agent", "model"),
    "tool_mode": ("agent", "tool_mode"),
    "user_model": ("user", "model"),
    "temperature": ("agent", "temperature"),
    "max_tokens": ("agent", "max_tokens"),
}
# The order of the identity's keys, as the manifest has always stored them.
IDENTITY_ORDER = (
    "agent", "model", "tool_mode", "tool_list", "user", "user_model", "seed", "max_turns", "max_actions",
    "temperature", "max_tokens",
)  # fmt: skip


def setting(default: Any = ..., *, identity: IdentityMark, **constraints: Any) -> Any:
    """A field of ``RunSpec`` with its identity mark."""
    return Field(default, json_schema_extra={"identity": identity}, **constraints)


class RunSpec(BaseModel):
    """Everything that defines a run. ``identity()`` is what must match to resume a run folder."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    agent: str = setting(identity="always")
    agent_options: SerializeAsAny[Options] = setting(None, identity="always")  # None: the defaults
    user: str = setting("none", identity="always")
    user_options: SerializeAsAny[Options] = setting(None, identity="always")
    domains: tuple[str, ...] = setting(("all",), identity="never")
    tasks: Path | None = setting(None, identity="never")  # a task file or folder; None: the generated set
    output: Path = setting(identity="never")
    tool_list: ToolList = setting("full", identity="always")
    limit: int | None = setting(None, identity="never", ge=1)  # the first N tasks of each domain
    concurrency: int = setting(8, identity="never", ge=1)
    runs: int = setting(1, identity="never", ge=1, le=MAX_RUNS)
    seed: int = setting(0, identity="always", ge=0, le=MAX_SEED)
    max_turns: int = setting(MAX_MESSAGES, identity="always", ge=1)  # messages, the opening included
    max_actions: int = setting(MAX_CALLS, identity="always", ge=1)  # answered tool calls
    episode_timeout: float | None = setting(EPISODE_TIMEOUT_S, identity="never", gt=0)  # None: no limit
    baselines: bool = setting(True, identity="never")  # refuse-all and no-verify on the same tasks
    # How the agent reaches the episode: ``direct`` (in process) or ``mcp`` (through a real MCP client
    # session against ``sopbench mcp serve`` over stdio, docs/mcp.md). Not identity: it is how a run
    # is carried out, and the parity test holds its verdicts equal to direct ones on every task.
    via: Via = setting("direct", identity="never")
    # Recorded model replies (``--cache``, ``--cache-mode``): how the replies are obtained, never which.
    cache: Path | None = setting(None, identity="never")
    cache_mode: CacheMode | None = setting(None, identity="never")  # None: read-write with a cache
    # ``via`` mcp only: the runtime guard as an MCP proxy (``sopbench guard proxy``, the task's SOPs)
    # between the agent's client and the server. Identity (when on): it changes what the agent can
    # execute, as ``env_mode`` guard does; off, the identity of every folder written before it.
    guard: bool = setting(False, identity="changed")
    # The published ablations, the runtime guard and the no-action reading (docs/runner.md).
    environment: Environment = setting(DEFAULT_ENVIRONMENT, identity="changed")

    @model_validator(mode="before")
    @classmethod
    def _gather(cls, data: Any) -> Any:
        """Environment settings may be given flat (``env_mode="guard"``, as the CLI and sweep files
        name them); an agent's and a user's options (a mapping) are validated against their model."""
        if not isinstance(data, Mapping):
            return data
        data = dict(data)
        flat = {k: data.pop(k) for k in ENVIRONMENT_SETTINGS if k in data}
        if flat:  # validated as the ``environment`` field (errors name the setting)
            base = data.get("environment") or DEFAULT_ENVIRONMENT
            data["environment"] = (base.settings() if isinstance(base, Environment) else dict(base)) | flat
        for side in ("agent", "user"):
            name = data.get(side, "none" if side == "user" else None)
            given = data.get(f"{side}_options")
            if isinstance(name, str) and not isinstance(given, Options):
                data[f"{side}_options"] = spec_options(side, name, given or {})
        return data

    @field_validator("domains", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return domain_selection(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _consistent(self) -> RunSpec:
        if self.tool_list == "oracle" and self.environment.default_sop != "full":
            raise ValueError("--tool-list oracle needs --default-sop full (as in the published code)")
        if self.cache is None and self.cache_mode in ("read-write", "replay"):
            raise ValueError(f"--cache-mode {self.cache_mode} needs --cache PATH")
        if self.via == "mcp" and self.cache is not None and self.cache_mode != "off":
            # Over MCP the user is played by the server's process, which keeps no cache session: a
            # replay would still reach the user's model, so the pair is refused rather than half-kept.
            raise ValueError(
                "--cache is not available with --via mcp yet (the server's user would not be recorded)"
            )
        if self.guard and self.via != "mcp":
            raise ValueError("--guard needs --via mcp (in process, the guard is --env-mode guard)")
        return self

    @property
    def replies(self) -> CacheMode:
        """How model replies are obtained: ``off`` without a cache, else ``cache_mode`` (read-write)."""
        if self.cache is None:
            return "off"
        return self.cache_mode or "read-write"

    @property
    def tasks_path(self) -> Path:
        if self.tasks is not None:
            return self.tasks
        from sopbench.generation import default_tasks_dir

        return default_tasks_dir()

    def ablations(self) -> dict[str, Any]:
        """The environment settings, by name (each row and export carries them)."""
        return self.environment.settings()

    def replace(self, **changes: Any) -> RunSpec:
        """This spec with ``changes``, validated again (a new agent's options against its model)."""
        given = {name: getattr(self, name) for name in type(self).model_fields}
        for side in ("agent", "user"):
            if side in changes and f"{side}_options" not in changes:
                given[f"{side}_options"] = {}
        return RunSpec(**(given | changes))

    def identity(self) -> dict[str, Any]:
        """The settings that decide this run's results, as the manifest stores them: the fields marked
        ``always`` and the identity options of the agent and the user (an option left at its default
        equals the default given explicitly; URLs without credentials), then the ``changed`` fields'
        settings that differ from their defaults."""
        options = {"agent": self.agent_options.identity(), "user": self.user_options.identity()}
        values: dict[str, Any] = {}
        for name, field in type(self).model_fields.items():
            mark = _mark(field.json_schema_extra)
            if mark == "always" and not name.endswith("_options"):
                values[name] = getattr(self, name)
        for key, (side, option) in PROMOTED_OPTIONS.items():
            values[key] = options[side].pop(option, None)
        identity = {key: values.pop(key) for key in IDENTITY_ORDER}
        identity |= values  # a field marked later than the first schema
        for side in ("agent", "user"):
            if options[side]:
                identity[f"{side}_options"] = dict(sorted(options[side].items()))
        for name, field in type(self).model_fields.items():
            if _mark(field.json_schema_extra) == "changed":
                value = getattr(self, name)
                if isinstance(value, Environment):
                    identity |= value.changed()
                elif value != field.default:
                    identity[name] = value
        # As the store keeps it (JSON): a tuple and a list of the same values compare equal.
        return orjson.loads(orjson.dumps(identity, default=str))

    def public(self) -> dict[str, Any]:
        """Every setting, JSON-ready, with secrets redacted (what a summary or a log may show)."""
        data = self.model_dump(mode="json", exclude={"agent_options", "user_options"})
        data["agent_options"] = self.agent_options.identity() | _not_identity(self.agent_options)
        data["user_options"] = self.user_options.identity() | _not_identity(self.user_options)
        return data


def _mark(extra: Any) -> IdentityMark:
    return extra["identity"] if isinstance(extra, dict) else "never"


def _not_identity(options: Options) -> dict[str, Any]:
    from sopbench.agents import option_marks
    from sopbench.secrets import redact_url

    shown: dict[str, Any] = {}
    for name, value in options.model_dump(mode="json").items():
        identity, redact = option_marks(type(options), name)
        if not identity:
            shown[name] = redact_url(value) if redact == "url" and isinstance(value, str) else value
    return shown


def spec_options(side: Side, name: str, given: Mapping[str, Any]) -> Options:
    """The options of agent or user ``name``, validated against its model; ``OptionsError`` (which
    pydantic lets through, so that each front end spells the key as its user wrote it) for an unknown
    name or option, a missing option or a wrong value."""
    try:
        factory = (agent_factory if side == "agent" else user_factory)(name)
    except KeyError as exc:
        raise OptionsError("unknown name", side, name, problem=str(exc).strip("\"'")) from None
    return validate_options(side, name, factory, given)


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
