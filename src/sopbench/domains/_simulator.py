"""The published simulator's rules, in one place: every reader of a conversation obeys these.

The runner plays episodes by them, ``sopbench.replay`` re-executes recorded runs by them, scoring
decodes recorded runs by them and ``sopbench.diagnosis`` builds its traces within them (spec §6.1,
§7.1). Nothing here depends on a protocol, an agent or a file.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

from sopbench.tasks import Task

from ._mechanism import Domain

# The tool whose call ends an episode; the simulator never executes it (nor anything else in the
# message that calls it).
EXIT_TOOL = "exit_conversation"

# Tool names the simulator reads as "no action": a message holding such a call has no calls at all.
NO_ACTION_NAMES = frozenset({"none", "n/a"})

# Tool names the published evaluator drops from a message's calls before scoring (quirk Q4): the
# simulator's no-action names and two more spellings models write for them.
PLACEHOLDER_NAMES = frozenset({"n/a", "na", "none", "null"})

# How a call's name is read as "no action" (a run setting, recorded in its manifest when not the
# default): ``published``, the simulator's rule (``NO_ACTION_NAMES`` in any case, nothing else; a call
# of "null" or " N/A " is answered "Error: Tool ... not found."), or ``wide``: also the evaluator's
# other placeholders (``PLACEHOLDER_NAMES``) and the empty name, spaces around any of them ignored.
NoActionReading = Literal["published", "wide"]
NO_ACTION_READINGS: tuple[str, ...] = get_args(NoActionReading)

# The published loop's limits: messages in the transcript (the opening included) and answered calls.
MAX_MESSAGES = 20
MAX_CALLS = 10

# ``tool_list``: every tool (``full``) or only the task's action graph's tools (``oracle``).
ToolList = Literal["full", "oracle"]
TOOL_LISTS: tuple[str, ...] = get_args(ToolList)

# The one tool sopbench's ``full`` list never offers: it reads the whole database (the published
# flag that would have offered it is never set). Every other tool is offered, including the published
# goals the original simulator never offered (bank ``cancel_credit_card``, ``pay_bill_with_credit_card``).
NEVER_OFFERED = frozenset({"internal_get_database"})


def is_no_action(name: str, reading: NoActionReading = "published") -> bool:
    """Whether a call of ``name`` makes its message a message without calls, under ``reading``
    (default: the simulator's rule). The runner applies it to every agent's replies; an agent that
    parses text replies reads its ``Action:`` line with it and the episode's reading."""
    if reading == "wide":
        return name.strip().lower() in PLACEHOLDER_NAMES or not name.strip()
    return name.lower() in NO_ACTION_NAMES


def is_placeholder(name: str) -> bool:
    """Whether the published evaluator drops a call of ``name`` (its "N/A" filter)."""
    return name.lower() in PLACEHOLDER_NAMES


def graph_tools(task: Task) -> set[str]:
    """The tools of ``task``'s action graph: the ``oracle`` tool list."""
    return task.directed_action_graph.function_names()


def published_offer(
    domain: Domain, task: Task | None = None, tool_list: str | None = "full", also: Iterable[str] = ()
) -> list[str]:
    """The tools the published simulator offered, in its prompt order: the domain's offered tools
    (``ToolSpec.offered``), only the task graph's under ``tool_list`` "oracle", plus ``also`` (tools of
    the domain an older recording shows were offered, such as ``internal_get_database``)."""
    extra = set(also)
    graph = graph_tools(task) if tool_list == "oracle" and task is not None else None
    names = [
        name
        for name, spec in domain.tools.items()
        if name in extra or (spec.offered and (graph is None or name in graph))
    ]
    return _in_prompt_order(domain, names)


def full_offer(domain: Domain) -> list[str]:
    """sopbench's ``full`` tool list: every tool an agent may call, in the published prompt order."""
    return _in_prompt_order(domain, [name for name in domain.tools if name not in NEVER_OFFERED])


def _in_prompt_order(domain: Domain, names: list[str]) -> list[str]:
    # the catalogue's order (the published prompt's); tools it does not list come last, as found
    order = {name: position for position, name in enumerate(domain.catalogue.tools)}
    return sorted(names, key=lambda name: order.get(name, len(order)))


def sopbench_offer(domain: Domain, task: Task, tool_list: str) -> list[str]:
    """The tool names sopbench's runner offers for ``task`` (``exit_conversation`` aside), in order."""
    names = full_offer(domain)
    if tool_list == "oracle":
        graph = graph_tools(task)
        return [name for name in names if name in graph]
    return names
