"""The simulated environment's settings of an episode: the published ablations, the runtime guard
and how a call's name is read as "no action". Each default is written here, once; a run records the
settings that differ from them (so a folder written before a setting existed still resumes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from ._derive import DependencyOption
from ._simulator import NoActionReading

# ``prompt``: the constraints are listed for the agent on a lenient system; ``program``: the
# environment enforces them (nothing listed, no ``internal_*`` tool); ``guard``: listed, and an
# unverified service call is refused by the runtime guard.
EnvMode = Literal["prompt", "program", "guard"]
ENV_MODES: tuple[str, ...] = get_args(EnvMode)
# How a listing words the constraints: ``structured`` or the published numbered ``old`` list.
ConstraintFormat = Literal["structured", "old"]
CONSTRAINT_FORMATS: tuple[str, ...] = get_args(ConstraintFormat)


class Environment(BaseModel):
    """The environment settings of an episode (SPEC §6.1 and the published ``run_simulation.py``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    env_mode: EnvMode = "prompt"
    shuffle_tools: bool = False  # seeded by each episode's seed
    constraint_format: ConstraintFormat = "structured"
    default_sop: DependencyOption = "full"  # the SOP listed for every action but the goal
    no_action: NoActionReading = "published"

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> Environment:
        """The environment named by ``settings`` (a manifest's or a row's: other keys are ignored;
        a setting not given, as in a run made before it existed, has its default)."""
        return cls(**{k: v for k, v in settings.items() if k in ENVIRONMENT_SETTINGS})

    def settings(self) -> dict[str, Any]:
        """Every setting, by name."""
        return {name: getattr(self, name) for name in ENVIRONMENT_SETTINGS}

    def changed(self) -> dict[str, Any]:
        """The settings that differ from their defaults, by name."""
        return {k: v for k, v in self.settings().items() if v != getattr(DEFAULT_ENVIRONMENT, k)}

    def with_settings(self, **settings: Any) -> Environment:
        """This environment with ``settings`` changed (validated)."""
        return Environment(**(self.settings() | settings)) if settings else self


ENVIRONMENT_SETTINGS: tuple[str, ...] = tuple(Environment.model_fields)
DEFAULT_ENVIRONMENT = Environment()
