"""What an agent is shown before an episode: the offered tools, each action's SOP, the verifiers."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from sopbench.agents import EpisodeSetup
from sopbench.constraints import Expr
from sopbench.domains import (
    DEFAULT_ENVIRONMENT,
    EXIT_TOOL,
    DependencyOption,
    Domain,
    Environment,
    full_offer,
    get_domain,
    parameters_schema,
    sopbench_offer,
)
from sopbench.tasks import Task

from ._offer import default_sops, verifiers

EXIT_SCHEMA: Mapping[str, Any] = {
    "type": "function",
    "function": {
        "name": EXIT_TOOL,
        "description": "End the conversation: call it once the request is handled or cannot be handled.",
        "strict": True,
        "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    },
}


@cache
def _domain_facts(
    name: str, default_sop: DependencyOption
) -> tuple[Domain, dict[str, dict[str, Any]], Mapping[str, Expr | None], dict[str, Expr | None]]:
    domain = get_domain(name)
    schemas = {tool: tool_schema(domain, tool) for tool in full_offer(domain)}
    return domain, schemas, default_sops(domain, default_sop), verifiers(domain)


def tool_schema(domain: Domain, tool: str) -> dict[str, Any]:
    """The OpenAI function-tool schema of ``tool``; tools the original never described get one built
    from their signature, each parameter typed as the same-named parameter of another tool."""
    spec = domain.tools[tool]
    if spec.schema is not None and spec.schema.schema_params is not None:
        return spec.openai_schema()
    known: dict[str, Any] = {}
    for other in domain.catalogue.tools.values():
        for param in other.schema_params or ():
            known.setdefault(param["name"], {"type": param.get("type", "string")})
    notes = domain.catalogue.parameter_descriptions
    parameters = parameters_schema(None)
    parameters["properties"] = {
        p: {**known.get(p, {"type": "string"}), **({"description": notes[p]} if p in notes else {})}
        for p in spec.params
    }
    parameters["required"] = [name for name, p in spec.signature.parameters.items() if p.default is p.empty]
    return {
        "type": "function",
        "function": {
            "name": tool,
            "description": f"{spec.description} {spec.returns}".strip(),
            "strict": False,
            "parameters": parameters,
        },
    }


def episode_setup(
    task: Task,
    task_id: str,
    tool_list: str,
    seed: int,
    run: int,
    options: Mapping[str, Any] | None = None,
    *,
    tool_names: Sequence[str] | None = None,
    offer_exit: bool = True,
    environment: Environment = DEFAULT_ENVIRONMENT,
    **settings: Any,
) -> EpisodeSetup:
    """What the agent is shown; ``tool_names`` replaces the tool list (replays of recordings);
    ``offer_exit`` is False when the user holds ``exit_conversation``.

    ``environment`` (with any of its ``settings`` changed by name): the published ablations, where
    ``env_mode="program"`` offers no ``internal_*`` tool and lists no constraint (the environment
    enforces them); ``shuffle_tools`` shuffles the tool list (and so the listing), seeded by
    ``seed``; ``default_sop`` is the SOP listed for every action but the goal; ``constraint_format``
    how it is worded; ``no_action``: how a call's name is read as "no action" (``domains.is_no_action``).
    """
    environment = environment.with_settings(**settings)
    env_mode = environment.env_mode
    domain, schemas, defaults, table = _domain_facts(task.domain, environment.default_sop)
    names = list(tool_names) if tool_names is not None else sopbench_offer(domain, task, tool_list)
    if env_mode == "program":
        names = [name for name in names if not name.startswith("internal_")]
    if environment.shuffle_tools:
        random.Random(seed).shuffle(names)
    extra = {
        name: tool_schema(domain, name) for name in names if name not in schemas
    }  # the cache stays the full list
    sops: dict[str, Expr] = {}
    for name in names if env_mode != "program" else ():
        expr = task.constraints_original if name == task.goal else defaults.get(name)
        if expr is not None:
            sops[name] = expr
    return EpisodeSetup(
        domain=task.domain,
        task_id=task_id,
        task=task,
        tools=(
            *(schemas.get(name) or extra[name] for name in names),
            *((EXIT_SCHEMA,) if offer_exit else ()),
        ),
        sops=sops,
        tool_list=tool_list,
        seed=seed,
        run=run,
        options=dict(options or {}),
        verifiers=table,
        environment=environment,
    )
