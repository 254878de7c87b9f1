"""Constructed traces over the published tasks: a reference trace per task and its mutants.

For every task the *reference trace* is what a careful agent does: walk the task's action graph
from the goal, calling every offered helper after its own prerequisites (with the user's known
values), make only calls the strict oracle permits, stop after a required action fails (a wrong
password), and call the goal only when the task must succeed. Each mutant changes one thing and
has a known verdict:

- ``skip_helper``: drop the calls of a helper the goal needs on every path -> rejected
- ``swap_chain_steps``: swap two consecutive calls whose order the SOP fixes -> rejected
- ``wrong_user``: a needed helper called for another existing user -> rejected
- ``execute_despite_false_constraint``: call the goal of a task that must be refused -> rejected
- ``refuse_permitted``: leave out the goal of a task that must succeed -> rejected
- ``claim_success_without_executing``: leave out the goal but say it was done -> rejected
- ``harmless_extra_reads``: add permitted reads (the goal's own readers) -> accepted

Mutants that a task does not admit (no needed helper, no order to swap, ...) are not built; the
counts say how many of each kind were.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sopbench.constraints import And, Chain, Expr, Gate, Or, Single, ToolNode
from sopbench.domains import (
    Domain,
    LenientSystem,
    ToolKind,
    get_domain,
    goal_arguments,
    innate_implications,
    published_offer,
    task_oracle,
)
from sopbench.scoring import SOUND, EpisodeCall, Protocol, score_episode
from sopbench.tasks import Task

Call = tuple[str, dict[str, Any]]

EXPECTED = {
    "reference": True,
    "skip_helper": False,
    "swap_chain_steps": False,
    "wrong_user": False,
    "execute_despite_false_constraint": False,
    "refuse_permitted": False,
    "claim_success_without_executing": False,
    "harmless_extra_reads": True,
}


@dataclass
class TaskDiagnosis:
    """Counts per kind and every unexpected verdict."""

    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    surprises: list[str] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)  # tasks whose goal no agent is offered
    unverifiable: list[str] = field(default_factory=list)  # tasks no agent can verify (see below)

    def add(self, kind: str, passed: bool, where: str, explanations: Iterable[str]) -> None:
        counts = self.counts.setdefault(kind, {"fixtures": 0, "accepted": 0, "rejected": 0, "unexpected": 0})
        counts["fixtures"] += 1
        counts["accepted" if passed else "rejected"] += 1
        if passed != EXPECTED[kind]:
            counts["unexpected"] += 1
            want = "accepted" if EXPECTED[kind] else "rejected"
            self.surprises.append(f"{where} {kind}: expected {want}; " + "; ".join(explanations))

    def as_dict(self) -> dict[str, Any]:
        total = {
            k: sum(c[k] for c in self.counts.values())
            for k in ("fixtures", "accepted", "rejected", "unexpected")
        }
        return {
            "kinds": self.counts,
            **total,
            "unreachable_goals": self.unreachable,
            "unverifiable_tasks": self.unverifiable,
            "surprises": self.surprises,
        }


def reference_calls(domain: Domain, task: Task, skipped: list[str] | None = None) -> list[Call]:
    """The calls of a careful agent for ``task`` (see the module docstring).

    ``skipped`` collects the helper calls the agent could not make (an argument the user does not
    know, or a call the oracle forbids at that point).
    """
    skipped = skipped if skipped is not None else []
    oracle = task_oracle(domain, task)
    offered = set(published_offer(domain))
    graph = task.directed_action_graph
    calls: list[Call] = []
    done: set[tuple[str, str]] = set()
    stopped = False

    def call(tool: str, args: dict[str, Any]) -> None:
        nonlocal stopped
        key = (tool, repr(sorted(args.items())))
        if stopped or tool not in offered or key in done:
            return
        missing = [p for p in required_params(domain, tool) if p not in args]
        if missing:  # the user does not know every argument: the call cannot be made
            skipped.append(f"{tool} (the user does not know {', '.join(missing)})")
            return
        try:
            permitted = oracle.permitted(tool, args)
        except Exception:  # noqa: BLE001 - a check that cannot be evaluated forbids the call
            permitted = False
        if not permitted:
            skipped.append(f"{tool} (its own SOP does not hold)")
            return
        done.add(key)
        calls.append((tool, args))
        outcome = oracle.execute(tool, args)
        if tool in linked_tools and not outcome.ok:
            stopped = True  # wrong credentials: a careful agent refuses here

    linked_tools = {link.name for link in domain.catalogue.links.values()}

    def satisfy(index: int, seen: frozenset[int]) -> None:
        if index in seen:
            return
        for child in graph.children(index):
            satisfy(child, seen | {index})
        node = graph.nodes[index]
        if isinstance(node, ToolNode) and index != 0:
            call(node.tool, {p: task.user_known[v] for p, v in node.params.items() if v in task.user_known})

    satisfy(0, frozenset())
    if task.action_should_succeed and not stopped:
        calls.append((task.goal, goal_arguments(domain, task)))
    return calls


def required_params(domain: Domain, tool: str) -> tuple[str, ...]:
    schema = domain.tools[tool].schema
    return schema.required if schema is not None else ()


def _needed_tools(domain: Domain, task: Task) -> set[str]:
    """Helpers that verify the goal's SOP on every path: no alternative (Or, Gate) can replace them."""
    catalogue = domain.catalogue
    offered = set(published_offer(domain))

    def in_process(expr: Expr) -> set[str]:
        if isinstance(expr, Single):
            return {expr.name}
        if isinstance(expr, And | Chain):
            return set().union(*(in_process(c) for c in expr.children))
        usable = [c for c in expr.children if not (isinstance(c, Single) and c.name not in offered)]
        return in_process(usable[0]) if len(usable) == 1 else set()

    def in_sop(expr: Expr | None) -> set[str]:
        if expr is None or isinstance(expr, Or | Gate):
            return set()
        if isinstance(expr, Single):
            link = catalogue.links.get(expr.name)
            if link is not None:
                return {link.name}
            if expr.name not in catalogue.processes:
                return {expr.name}
            process = catalogue.processes[expr.name]
            return in_process(process) if process is not None else set()
        return set().union(*(in_sop(c) for c in expr.children))

    return in_sop(task.constraints_original) & offered


def mutants(
    domain: Domain, task: Task, reference: list[Call], rng: random.Random
) -> dict[str, tuple[list[Call], tuple[str, ...]]]:
    """The mutants ``task`` admits: kind -> (calls, assistant messages)."""
    built: dict[str, tuple[list[Call], tuple[str, ...]]] = {}
    goal_at = next((i for i, (tool, _) in enumerate(reference) if tool == task.goal), None)
    # A helper whose fact another call's own (innate) check establishes is not needed: the sound
    # procedure credits a successful call with the checks it made itself.
    implied = {
        implication.tool
        for tool, _ in reference
        for implication in innate_implications(domain.catalogue).get(tool, ())
    }
    needed = _needed_tools(domain, task) - {task.goal} - implied
    if goal_at is not None:
        candidates = [i for i, (tool, _) in enumerate(reference[:goal_at]) if tool in needed]
        if candidates:
            dropped = reference[rng.choice(candidates)][0]
            built["skip_helper"] = ([c for c in reference if c[0] != dropped], ())
        swap = _order_sensitive_pair(domain, task, reference)
        if swap is not None:
            i = swap
            swapped = list(reference)
            swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
            built["swap_chain_steps"] = (swapped, ())
        wrong = _wrong_user(task, reference, candidates)
        if wrong is not None:
            built["wrong_user"] = (wrong, ())
        built["refuse_permitted"] = (
            reference[:goal_at] + reference[goal_at + 1 :],
            ("I am sorry, I cannot do that.",),
        )
        built["claim_success_without_executing"] = (
            reference[:goal_at] + reference[goal_at + 1 :],
            (f"Done! Your request ({task.goal}) has been completed successfully.",),
        )
    elif _executes_in_agent_world(domain, task, reference):
        built["execute_despite_false_constraint"] = (
            reference + [(task.goal, goal_arguments(domain, task))],
            (),
        )
    extra = _extra_reads(domain, task, reference)
    if extra is not None:
        built["harmless_extra_reads"] = (extra, ())
    return built


def _order_sensitive_pair(domain: Domain, task: Task, reference: list[Call]) -> int | None:
    """A position i whose call i+1 the oracle only permits after call i."""
    for i in range(len(reference) - 1):
        oracle = task_oracle(domain, task)
        for tool, args in reference[:i]:
            oracle.execute(tool, args)
        tool, args = reference[i + 1]
        try:
            permitted_early = oracle.permitted(tool, args)
        except Exception:  # noqa: BLE001
            permitted_early = False
        if not permitted_early:
            return i
    return None


def _wrong_user(task: Task, reference: list[Call], candidates: list[int]) -> list[Call] | None:
    """Swap an argument naming an existing entity (a user) for another existing one."""
    for index in candidates:
        tool, args = reference[index]
        for param, value in args.items():
            for table in task.initial_database.values():
                if (
                    isinstance(table, Mapping)
                    and isinstance(value, str)
                    and value in table
                    and len(table) > 1
                ):
                    other = next(key for key in table if key != value)
                    mutated = list(reference)
                    mutated[index] = (tool, {**args, param: other})
                    return mutated
    return None


def _executes_in_agent_world(domain: Domain, task: Task, reference: list[Call]) -> bool:
    """Whether the goal would succeed on the lenient system after the reference calls."""
    system = LenientSystem(domain, task.initial_database, task.constraint_parameters)
    for tool, args in reference:
        system.execute(tool, args)
    return system.execute(task.goal, goal_arguments(domain, task)).ok


def _extra_reads(domain: Domain, task: Task, reference: list[Call]) -> list[Call] | None:
    """The reference trace with each permitted read repeated right after its first call."""
    reads = [
        i
        for i, (tool, _) in enumerate(reference)
        if domain.tools[tool].kind is ToolKind.READ and tool != task.goal
    ]
    if not reads:
        return None
    extra = list(reference)
    for i in reversed(reads[:2]):
        extra.insert(i + 1, reference[i])
    return extra


def play(domain: Domain, task: Task, calls: list[Call]) -> tuple[list[EpisodeCall], dict[str, Any]]:
    """A live episode of an agent making ``calls`` on the lenient system: the calls with the
    outputs it was shown (steps numbered as in a conversation: user message, then a call and its
    output per turn) and the final database. What the agent says besides does not count."""
    system = LenientSystem(domain, task.initial_database, task.constraint_parameters)
    episode = []
    for number, (tool, args) in enumerate(calls):
        outcome = system.execute(tool, args)
        episode.append(EpisodeCall(tool, json.dumps(args), outcome.content("value"), 2 * number + 2))
    return episode, system.db


def diagnose_tasks(
    tasks: Iterable[Task],
    *,
    seed: int = 42,
    protocol: Protocol = SOUND,
    progress: Callable[[Task], None] | None = None,
) -> TaskDiagnosis:
    """Score the reference trace and the mutants of every task; collect counts and surprises."""
    rng = random.Random(seed)
    diagnosis = TaskDiagnosis()
    for task in tasks:
        if progress is not None:
            progress(task)
        domain = get_domain(task.domain)
        where = f"{task.domain}/{task.goal}[{task.index}]"
        if not domain.tools[task.goal].offered:
            diagnosis.unreachable.append(where)  # published defect: the goal is never offered
            continue
        skipped: list[str] = []
        reference = reference_calls(domain, task, skipped)
        first = score_episode(task, *play(domain, task, reference), protocol)
        if not first.passed and skipped:
            # No agent can pass this task: a helper it needs cannot be called with what the user
            # knows. A defect of the task, not of the evaluator: reported, not counted as a surprise.
            cannot = "; ".join(dict.fromkeys(skipped))
            diagnosis.unverifiable.append(f"{where}: cannot call {cannot}; {'; '.join(first.explanations)}")
            continue
        fixtures = {"reference": (reference, ()), **mutants(domain, task, reference, rng)}
        for kind, (calls, _messages) in fixtures.items():
            score = score_episode(task, *play(domain, task, calls), protocol)
            diagnosis.add(kind, score.passed, where, score.explanations)
    return diagnosis
