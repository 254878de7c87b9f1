"""The sweep file: a matrix of run configurations, validated whole before any episode."""

from __future__ import annotations

import itertools
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sopbench._json import JsonBoundError, decode_toml_bounded
from sopbench.agents import OptionsError, Side
from sopbench.runner import RunSpec, RunSpecError
from sopbench.runner.frontend import MAX_RUNS, MAX_SEED

MODEL_AGENTS = frozenset({"openai"})  # agents that need an endpoint
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
MAX_NAME_BYTES = 255  # a configuration's name is its run folder's: the longest file name most systems take


# The keys of an [[agents]] / [user] entry that are options of the agent or user itself (the rest
# of its options go in its ``options`` table; ``endpoint`` is the option ``base_url``).
AGENT_OPTION_KEYS = ("model", "api_key_env", "temperature", "max_tokens")
USER_OPTION_KEYS = (*AGENT_OPTION_KEYS, "request_timeout", "script")


class SweepError(ValueError):
    """A sweep file that cannot run: each line of the message is one mistake."""


class AgentEntry(BaseModel):
    """One agent of the matrix: a built-in agent, or a model behind one or more endpoints."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    agent: str
    model: str | None = None
    endpoint: str | list[str] | None = None  # a list: replicas of one model
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    # Episodes at once against this agent's endpoint, over every configuration that uses it (and
    # over the whole cluster with --executor ray); agents naming the same endpoint share it.
    concurrency: int | None = Field(default=None, ge=1)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"name {value!r}: letters, digits, '.', '_' and '-' only (it names a folder)")
        return value

    def endpoints(self) -> list[str]:
        if self.endpoint is None:
            return []
        return [self.endpoint] if isinstance(self.endpoint, str) else list(self.endpoint)

    def agent_options(self) -> dict[str, Any]:
        endpoints = self.endpoints()
        base_url = (endpoints[0] if len(endpoints) == 1 else endpoints) if endpoints else None
        return _entry_options(self, AGENT_OPTION_KEYS, self.options, base_url)

    def limit_name(self) -> str:
        """The name of the shared limit ``concurrency`` sets: the endpoint (its replicas, in any
        order), or the agent itself when it has none."""
        endpoints = self.endpoints()
        return f"endpoint {' '.join(sorted(endpoints))}" if endpoints else f"agent {self.name}"


class UserEntry(BaseModel):
    """``[user]``: the options of the simulated user in every configuration whose user is not
    ``none`` (``llm``: a model behind an endpoint, as ``run --user-model`` / ``--user-base-url`` ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = None
    endpoint: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    request_timeout: float | None = Field(default=None, gt=0)
    script: str | None = None  # ``script``: the file of scripted replies
    options: dict[str, Any] = Field(default_factory=dict)

    def user_options(self) -> dict[str, Any]:
        return _entry_options(self, USER_OPTION_KEYS, self.options, self.endpoint)


class Limits(BaseModel):
    """``[limits]`` and ``[override.limits]``: the limits given; one not given is the run's default
    (``RunSpec``), or for an override the file's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_turns: int | None = Field(default=None, ge=1)
    max_actions: int | None = Field(default=None, ge=1)
    episode_timeout: float | None = Field(default=None, gt=0)
    limit: int | None = Field(default=None, ge=1)  # the first N tasks of each domain


class Matrix(BaseModel):
    """The axes: every combination is a configuration, unless excluded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agents: list[str]
    tool_modes: list[str | None] = [None]  # None: the agent's default (pydantic copies defaults)
    tool_lists: list[Literal["full", "oracle"]] = ["full"]
    users: list[str] = Field(default_factory=lambda: ["none"])


class Entry(BaseModel):
    """An ``[[include]]`` or ``[[exclude]]`` entry: values of the axes (an exclude matches when each
    given value is equal; an include adds that one combination)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str | None = None
    tool_mode: str | None = None
    tool_list: Literal["full", "oracle"] | None = None
    user: str | None = None


class Override(Entry):
    """An ``[[override]]`` entry: settings of the configurations it matches (as an exclude matches),
    in place of the file's; later entries win."""

    runs: int | None = Field(default=None, ge=1, le=MAX_RUNS)
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    concurrency: int | None = Field(default=None, ge=1)  # episodes at once in each matching configuration
    limits: Limits = Field(default_factory=Limits)

    def axes(self) -> Entry:
        return Entry(agent=self.agent, tool_mode=self.tool_mode, tool_list=self.tool_list, user=self.user)


class SweepFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tasks: Path | None = None
    domains: list[str] = Field(default_factory=lambda: ["all"])
    # Not given: the run's default (``RunSpec``).
    runs: int | None = Field(default=None, ge=1, le=MAX_RUNS)
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    concurrency: int | None = Field(default=None, ge=1)  # episodes at once over the whole sweep
    # Recorded model replies shared by every configuration (``run --cache``, ``--cache-mode``).
    cache: Path | None = None
    cache_mode: Literal["read-write", "replay", "off"] | None = None
    limits: Limits = Field(default_factory=Limits)
    agents: list[AgentEntry]
    user: UserEntry | None = None
    matrix: Matrix
    include: list[Entry] = Field(default_factory=list)
    exclude: list[Entry] = Field(default_factory=list)
    override: list[Override] = Field(default_factory=list)


class Configuration(BaseModel):
    """One configuration of a sweep: its name (the run folder's), its run, and the shared limits
    (an endpoint's ``concurrency``) its episodes are subject to."""

    model_config = ConfigDict(frozen=True)

    name: str
    config: RunSpec
    limited_by: tuple[tuple[str, int], ...] = ()  # (name, episodes at once) of each shared limit


def _shared_limits(sweep: SweepFile) -> dict[str, int]:
    """The limits agents' ``concurrency`` set, by name; agents sharing an endpoint get the smallest."""
    limits: dict[str, int] = {}
    for agent in sweep.agents:
        if agent.concurrency is not None:
            name = agent.limit_name()
            limits[name] = min(limits.get(name, agent.concurrency), agent.concurrency)
    return limits


def _location(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


def read_sweep(path: Path) -> SweepFile:
    """Parse and validate a sweep file's shape; ``SweepError`` with one line per mistake."""
    try:
        data = decode_toml_bounded(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SweepError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise SweepError(f"{path}: not TOML: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except JsonBoundError as exc:
        raise SweepError(f"{path}: not a usable sweep file: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{path}: not TOML: {exc}") from None
    try:
        return SweepFile.model_validate(data)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            where = _location(error["loc"])
            if error["type"] == "extra_forbidden":
                lines.append(f"{path}: unknown key {where}")
            else:
                lines.append(f"{path}: {where}: {error['msg']}")
        raise SweepError("\n".join(lines)) from None


def _matches(entry: Entry, combination: dict[str, Any]) -> bool:
    return all(v is None or combination[k] == v for k, v in entry.model_dump().items())


def configuration_name(combination: dict[str, Any]) -> str:
    parts = [combination["agent"]]
    if combination["tool_mode"] is not None:
        parts.append(combination["tool_mode"])
    parts.append(combination["tool_list"])
    if combination["user"] != "none":
        parts.append(combination["user"])
    return "-".join(parts)


def expand(sweep: SweepFile, output: Path, where: str = "sweep") -> list[Configuration]:
    """Every configuration of ``sweep``, checked (names, endpoints, agent options, domains);
    ``SweepError`` with one line per mistake, before anything runs."""
    problems: list[str] = []
    by_name: dict[str, AgentEntry] = {}
    for agent in sweep.agents:
        if agent.name in by_name:
            problems.append(f"{where}: duplicate agent name {agent.name!r}")
        by_name[agent.name] = agent
        if agent.agent in MODEL_AGENTS and not agent.endpoints():
            problems.append(f"{where}: agent {agent.name!r} ({agent.agent}) has no endpoint")
    for name in sweep.matrix.agents:
        if name not in by_name:
            problems.append(f"{where}: matrix.agents names {name!r}, which no [[agents]] entry defines")
    for entry in (*sweep.include, *sweep.exclude, *sweep.override):
        if entry.agent is not None and entry.agent not in by_name:
            problems.append(
                f"{where}: include/exclude/override names agent {entry.agent!r}, which is not defined"
            )
    if problems:
        raise SweepError("\n".join(problems))
    combinations: list[dict[str, Any]] = [
        {"agent": a, "tool_mode": m, "tool_list": t, "user": u}
        for a, m, t, u in itertools.product(
            sweep.matrix.agents, sweep.matrix.tool_modes, sweep.matrix.tool_lists, sweep.matrix.users
        )
    ]
    combinations = [c for c in combinations if not any(_matches(e, c) for e in sweep.exclude)]
    for entry in sweep.include:
        if entry.agent is None:
            problems.append(f"{where}: an [[include]] entry needs agent")
            continue
        extra = {"tool_mode": None, "tool_list": "full", "user": "none"} | {
            k: v for k, v in entry.model_dump().items() if v is not None
        }
        if extra not in combinations:
            combinations.append(extra)
    for number, override in enumerate(sweep.override, 1):
        if not any(_matches(override.axes(), c) for c in combinations):
            problems.append(f"{where}: [[override]] entry {number} matches no configuration")
    limits = _shared_limits(sweep)
    configurations: list[Configuration] = []
    names: set[str] = set()
    for combination in combinations:
        name = configuration_name(combination)
        if name in names:
            problems.append(f"{where}: duplicate configuration name {name!r}")
            continue
        if len(name.encode()) > MAX_NAME_BYTES:  # checked before any folder is made
            problems.append(
                f"{where}: configuration name {name[:40]}... is {len(name.encode())} bytes, and names a folder "
                f"(at most {MAX_NAME_BYTES}): shorten the agent's name"
            )
            continue
        names.add(name)
        agent = by_name[combination["agent"]]
        options = agent.agent_options()
        if combination["tool_mode"] is not None:
            options["tool_mode"] = combination["tool_mode"]
        settings = _given(
            runs=sweep.runs, seed=sweep.seed, concurrency=sweep.concurrency, **sweep.limits.model_dump()
        )
        for override in sweep.override:
            if _matches(override.axes(), combination):
                settings |= _given(
                    runs=override.runs, seed=override.seed, concurrency=override.concurrency,
                    **override.limits.model_dump(),
                )  # fmt: skip
        try:
            config = RunSpec(
                domains=tuple(sweep.domains),
                agent=agent.agent,
                agent_options=options,
                user=combination["user"],
                user_options=(
                    sweep.user.user_options()
                    if sweep.user is not None and combination["user"] != "none"
                    else {}
                ),
                tasks=sweep.tasks,
                cache=sweep.cache,
                cache_mode=sweep.cache_mode,
                output=output / name,
                tool_list=combination["tool_list"],
                baselines=False,
                **settings,
            )
        except OptionsError as exc:
            problems.append(f"{where}: configuration {name}: {exc.spelled(_sweep_key)}")
            continue
        except (ValidationError, RunSpecError) as exc:
            problems.append(f"{where}: configuration {name}: {str(exc).splitlines()[0]}")
            continue
        limit = agent.limit_name()
        limited_by = ((limit, limits[limit]),) if limit in limits else ()
        configurations.append(Configuration(name=name, config=config, limited_by=limited_by))
    if problems:
        raise SweepError("\n".join(problems))
    return configurations


def _given(**settings: Any) -> dict[str, Any]:
    return {k: v for k, v in settings.items() if v is not None}


def _entry_options(
    entry: BaseModel, keys: tuple[str, ...], options: dict[str, Any], base_url: object
) -> dict[str, Any]:
    """An entry's options as ``RunSpec`` takes them: its ``options`` table, its given keys, its endpoint."""
    given = dict(options) | {key: value for key in keys if (value := getattr(entry, key)) is not None}
    if base_url is not None:
        given["base_url"] = base_url
    return given


def _sweep_key(what: Side, option: str) -> str:
    """An agent's or user's option as this file spells it: a key of its entry, or of its ``options``."""
    table, keys = ("[user]", USER_OPTION_KEYS) if what == "user" else ("[[agents]]", AGENT_OPTION_KEYS)
    if option == "base_url":
        return f"{table} endpoint"
    return f"{table} {option}" if option in keys else f"{table} options.{option}"
