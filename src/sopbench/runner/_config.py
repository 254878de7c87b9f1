"""The configuration of a run, validated once."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sopbench.agents import agent_factory, user_factory


class RunConfigError(ValueError):
    """A configuration that cannot run (a user mistake): unknown agent, option, domain, tasks."""


class RunConfig(BaseModel):
    """Everything that defines a run. The fields under ``IDENTITY`` must match to resume a folder."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    domains: tuple[str, ...] = ("all",)
    agent: str
    agent_options: dict[str, Any] = Field(default_factory=dict)
    user: str = "none"
    user_options: dict[str, Any] = Field(default_factory=dict)
    tasks: Path | None = None  # a task file or a folder of <domain>_tasks.json[.gz]; None: the default
    output: Path
    tool_list: Literal["full", "oracle"] = "full"
    limit: int | None = Field(default=None, ge=1)  # the first N tasks of each domain
    concurrency: int = Field(default=8, ge=1)
    runs: int = Field(default=1, ge=1)
    seed: int = 0
    max_turns: int = Field(default=20, ge=1)  # messages, the opening included
    max_actions: int = Field(default=10, ge=1)  # answered tool calls
    episode_timeout: float | None = Field(default=600.0, gt=0)  # seconds; None: no limit
    baselines: bool = True  # score refuse-all and no-verify on the same tasks for the summary

    @field_validator("domains", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @property
    def tasks_path(self) -> Path:
        if self.tasks is not None:
            return self.tasks
        from sopbench.generation import default_tasks_dir

        return default_tasks_dir()

    def identity(self) -> dict[str, Any]:
        """What a resumed run must share with the stored one (the task selection may grow). A
        ``base_url`` is kept without credentials (user information, key-like query values): the
        identity is stored."""
        from sopbench.agents.openai import redact_url

        identity = self.model_dump(
            mode="json",
            include={
                "agent",
                "agent_options",
                "user",
                "user_options",
                "tool_list",
                "seed",
                "max_turns",
                "max_actions",
            },
        )
        for options in (identity["agent_options"], identity["user_options"]):
            if isinstance(options.get("base_url"), str):
                options["base_url"] = redact_url(options["base_url"])
        return identity

    def check_options(self) -> None:
        """Unknown agent or user, or an option its constructor does not take: ``RunConfigError``."""
        for what, name, options, lookup, prefix in (
            ("agent", self.agent, self.agent_options, agent_factory, ""),
            ("user", self.user, self.user_options, user_factory, "user-"),
        ):
            try:
                factory = lookup(name)
            except KeyError as exc:
                raise RunConfigError(str(exc).strip("\"'")) from None
            unknown = unaccepted_options(factory, options)
            if unknown:
                flags = ", ".join(f"--{prefix}{option.replace('_', '-')}" for option in unknown)
                raise RunConfigError(f"{what} {name!r} does not take {flags}")
            missing = [p for p in required_options(factory) if p not in options]
            if missing:
                flags = ", ".join(f"--{prefix}{option.replace('_', '-')}" for option in missing)
                raise RunConfigError(f"{what} {name!r} needs {flags}")
            try:  # a bad option value (a missing file, a missing key) is the user's mistake
                factory(**options)  # constructors acquire nothing (start() does): nothing to release
            except Exception as exc:  # noqa: BLE001 - any constructor error, reported in one line
                raise RunConfigError(f"cannot create {what} {name!r}: {exc}") from None


def required_options(factory: Any) -> list[str]:
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


def unaccepted_options(factory: Any, options: dict[str, Any]) -> list[str]:
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
