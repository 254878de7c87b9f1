"""Generating one domain's task file: enumerate, realise, verify, word, report."""

from __future__ import annotations

import hashlib
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import orjson

from sopbench.constraints import dump
from sopbench.domains import Domain, action_graph, get_domain, run_reference_path
from sopbench.tasks import Task, task_from_json

from ._enumerate import Assignment, Variant, domain_variants, goals, single_text
from ._pools import person
from ._realise import DEFAULT_BUDGET, Realiser, State
from ._wording import user_instruction, user_prompt

# The published university tasks were generated from each goal's full SOP only (the original's
# --gen_fulldeptasks); every subset of its 41-constraint pools would make 4,000 tasks.
FULL_SOP_ONLY_DOMAINS = frozenset({"university"})
ATTEMPTS = (
    5  # searches per task (each with another seeded order) before its combination is reported unrealisable
)
BUDGET_GROWTH = 2  # each attempt after the second searches with this many times the last budget
# The key marking a task that is refused only for a hidden prerequisite (made only on request):
# loaders keep it as an extra field; an agent that checks what it is shown cannot pass it.
HIDDEN_PREREQUISITE_KEY = "refused_only_for_hidden_prerequisite"
HIDDEN_REFUSAL = (
    "every state found is refused only for a hidden prerequisite (an expanded constraint the "
    "agent is not shown) while every constraint the agent is shown holds and the goal goes "
    "through: no agent could refuse it for a reason it can check"
)


@dataclass(frozen=True)
class Unrealised:
    """A combination no task was made for, and why."""

    goal: str
    variant: int
    assignment: list[list[Any]]
    outcome: bool
    reason: str
    missing: int  # how many of the asked-for tasks are missing


@dataclass
class DomainReport:
    """Coverage of one domain's generation."""

    domain: str
    seed: int
    per_assignment: int
    goals: int = 0
    variants: int = 0
    assignments: int = 0
    realised: int = 0  # combinations with every asked-for task made
    tasks: int = 0
    must_succeed: int = 0
    verified: int = 0  # tasks whose reference path on the strict oracle gave the expected outcome
    unrealisable: list[Unrealised] = field(default_factory=list)  # should have been realised, and was not
    excluded: list[Unrealised] = field(default_factory=list)  # left out by design (hidden prerequisite)
    hidden_prerequisite_tasks: int = 0  # made anyway, on request, and marked
    seconds: float = 0.0
    combinations: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "seed": self.seed,
            "per_assignment": self.per_assignment,
            "goals": self.goals,
            "variants": self.variants,
            "assignments": self.assignments,
            "realised": self.realised,
            "tasks": self.tasks,
            "must_succeed": self.must_succeed,
            "verified": self.verified,
            "unrealisable": [u.__dict__ for u in self.unrealisable],
            "excluded": [u.__dict__ for u in self.excluded],
            "hidden_prerequisite_tasks": self.hidden_prerequisite_tasks,
            "seconds": round(self.seconds, 3),
            "combinations": self.combinations,
        }


@dataclass
class DomainTasks:
    """A generated task file (goal -> tasks, in the published layout) and its report."""

    domain: str
    tasks: dict[str, list[dict[str, Any]]]
    report: DomainReport
    variants: list[Variant] = field(default_factory=list, repr=False)

    def to_json(self) -> bytes:
        return orjson.dumps(self.tasks, option=orjson.OPT_INDENT_2) + b"\n"

    def task_list(self) -> list[Task]:
        """The generated tasks as loaded task objects (goal order, then generation order)."""
        return [
            task_from_json(entry, domain=self.domain, goal=goal, index=i)
            for goal, entries in self.tasks.items()
            for i, entry in enumerate(entries)
        ]


def world_database(domain: Domain, seed: int) -> dict[str, Any]:
    """The domain's world database, its people renamed from the seeded pools."""
    source = resources.files("sopbench.generation").joinpath("worlds", f"{domain.name}.json")
    if not source.is_file():
        raise KeyError(f"no world database for domain {domain.name!r} (expected worlds/{domain.name}.json)")
    return renamed_people(orjson.loads(source.read_bytes()), seed, domain.name)


def renamed_people(world: dict[str, Any], seed: int, domain: str) -> dict[str, Any]:
    return _renamed_people(world, random.Random(f"people:{domain}:{seed}"))


_USERNAME = re.compile(r"^[a-z][a-z_]{1,20}$")
_FULL_NAME = re.compile(r"^[A-Z][a-z]+ [A-Z][a-z]+$")


def _renamed_people(world: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Every user name (keys of top-level collections of records) and full name, renamed consistently."""
    names: dict[str, str] = {}
    used: set[str] = set()

    def new_name(old: str, full: bool) -> str:
        while True:
            first, last = person(rng)
            candidate = f"{first.capitalize()} {last.capitalize()}" if full else f"{first}_{last}"
            if candidate not in used:
                used.add(candidate)
                names[old] = candidate
                return candidate

    for collection in world.values():
        if (
            isinstance(collection, dict)
            and collection
            and all(isinstance(v, dict) for v in collection.values())
        ):
            for key in collection:
                if _USERNAME.match(key) and any(f in collection[key] for f in ("password", "identification")):
                    new_name(key, False)

    def rename(data: Any) -> Any:
        if isinstance(data, dict):
            return {names.get(k, k) if isinstance(k, str) else k: rename(v) for k, v in data.items()}
        if isinstance(data, list):
            return [rename(v) for v in data]
        if isinstance(data, str):
            if data in names:
                return names[data]
            if _FULL_NAME.match(data):
                return names.get(data) or new_name(data, True)
        return data

    return rename(world)


def _seed_for(*parts: object) -> int:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def generate_domain(
    name: str,
    *,
    seed: int = 0,
    goals_wanted: Iterable[str] | None = None,
    per_assignment: int = 1,
    budget: int = DEFAULT_BUDGET,
    progress: Callable[[str], None] | None = None,
    world: Mapping[str, Any] | None = None,
    include_hidden_prerequisites: bool = False,
) -> DomainTasks:
    """Generate, verify and word the tasks of one domain; deterministic for ``seed``.

    A combination whose every realisation is refused only for a hidden prerequisite (see
    ``HIDDEN_REFUSAL``) is reported in ``report.excluded``; with ``include_hidden_prerequisites`` it is
    made anyway and its tasks carry ``HIDDEN_PREREQUISITE_KEY: true``.

    ``world`` is the database the search starts from (its people are renamed per seed); by
    default the one shipped for the domain (``worlds/<domain>.json``). A custom domain brings its own.
    """
    if per_assignment < 1:
        raise ValueError("per_assignment must be at least 1")
    started = time.perf_counter()
    domain = get_domain(name)
    wanted = None if goals_wanted is None else list(goals_wanted)
    if wanted is not None:
        unknown = sorted(set(wanted) - set(goals(domain.catalogue)))
        if unknown:
            raise KeyError(
                f"{name}: unknown goal(s) {', '.join(unknown)}; goals: {', '.join(goals(domain.catalogue))}"
            )
    variants = domain_variants(
        domain.catalogue,
        random.Random(_seed_for("sample", name, seed)),
        full_sop_only=name in FULL_SOP_ONLY_DOMAINS,
        only_goals=wanted,
    )
    start = world_database(domain, seed) if world is None else renamed_people(dict(world), seed, name)
    realiser = Realiser(domain, start, budget=budget)
    report = DomainReport(name, seed, per_assignment)
    report.goals = len({v.goal for v in variants})
    report.variants = len(variants)
    tasks: dict[str, list[dict[str, Any]]] = {}
    for variant in variants:
        if progress is not None:
            progress(variant.goal)
        wording_rng = random.Random(_seed_for("instruction", name, seed, variant.goal, variant.number))
        instruction = user_instruction(domain, variant.goal, wording_rng)
        graph = action_graph(domain.catalogue, variant.goal, variant.original).to_json()
        for number, assignment in enumerate(variant.assignments):
            report.assignments += 1
            made: list[dict[str, Any]] = []
            produced: set[bytes] = set()
            reason = ""
            hidden = False
            for k in range(per_assignment):
                built: dict[str, Any] = {}
                for attempt in range(ATTEMPTS):  # another seeded order of the candidates each time
                    rng = random.Random(
                        _seed_for("task", name, seed, variant.goal, variant.number, number, k, attempt)
                    )
                    built = {}
                    verify = _acceptor(domain, variant, assignment, realiser, instruction, graph, rng, built)
                    # The first search also asks that a refusal rest on a constraint the agent is
                    # shown; a combination whose failure can only be hidden is still made after it.
                    # Later searches get a larger budget (a restart with more room, not the same one).
                    realiser.budget = budget * BUDGET_GROWTH ** max(attempt - 1, 0)
                    outcome = realiser.realise(
                        variant, assignment, rng, produced, verify, shown_refusal=attempt == 0
                    )
                    realiser.budget = budget
                    if outcome.state is not None:
                        break
                    if built.get("hidden_refusal") and attempt >= 1:
                        break  # refused only for a hidden prerequisite: more searches find more of the same
                if outcome.state is None and built.get("hidden_refusal") and include_hidden_prerequisites:
                    rng = random.Random(
                        _seed_for("hidden", name, seed, variant.goal, variant.number, number, k)
                    )
                    built = {}
                    verify = _acceptor(
                        domain,
                        variant,
                        assignment,
                        realiser,
                        instruction,
                        graph,
                        rng,
                        built,
                        allow_hidden=True,
                    )
                    outcome = realiser.realise(
                        variant, assignment, rng, produced, verify, shown_refusal=False
                    )
                    if outcome.state is not None:
                        report.hidden_prerequisite_tasks += 1
                if outcome.state is None:
                    reason = outcome.reason
                    if built.get("hidden_refusal"):
                        reason, hidden = HIDDEN_REFUSAL, True
                    break
                produced.add(outcome.state.fingerprint())
                made.append(built["task"])
            report.combinations.append(
                {
                    "goal": variant.goal,
                    "variant": variant.number,
                    "constraints_original": dump(variant.original),
                    "assignment": [list(item) for item in assignment.key()],
                    "outcome": assignment.outcome,
                    "tasks": len(made),
                }
            )
            if len(made) == per_assignment:
                report.realised += 1
            else:
                (report.excluded if hidden else report.unrealisable).append(
                    Unrealised(
                        variant.goal,
                        variant.number,
                        [list(i) for i in assignment.key()],
                        assignment.outcome,
                        reason,
                        per_assignment - len(made),
                    )
                )
            report.tasks += len(made)
            report.verified += len(made)
            report.must_succeed += len(made) if assignment.outcome else 0
            tasks.setdefault(variant.goal, []).extend(made)
    report.seconds = time.perf_counter() - started
    return DomainTasks(name, tasks, report, variants)


def _acceptor(
    domain: Domain,
    variant: Variant,
    assignment: Assignment,
    realiser: Realiser,
    instruction: str,
    graph: Mapping[str, Any],
    rng: random.Random,
    built: dict[str, Any],
    *,
    allow_hidden: bool = False,
) -> Callable[[State], bool]:
    """The search's final test of a state: build the task, run it on the strict oracle. With
    ``allow_hidden`` a task refused only for a hidden prerequisite is kept, and marked."""

    def verify(state: State) -> bool:
        hidden = not assignment.outcome and realiser.refusal_unseen(variant, state)
        if hidden and not allow_hidden:
            built["hidden_refusal"] = True  # a task no agent could pass (see HIDDEN_REFUSAL)
            return False
        task = _task_json(variant, assignment, state, realiser, instruction, graph, rng)
        if hidden:
            task[HIDDEN_PREREQUISITE_KEY] = True
        if not _verified(domain, task_from_json(task, domain=domain.name, goal=variant.goal), assignment):
            return False
        built["task"] = task
        return True

    return verify


def _task_json(
    variant: Variant,
    assignment: Assignment,
    state: State,
    realiser: Realiser,
    instruction: str,
    graph: Mapping[str, Any],
    rng: random.Random,
) -> dict[str, Any]:
    names = realiser.variables(variant, assignment)
    known = {n: state.known[n] for n in names if n in state.known}
    return {
        "initial_database": state.db,
        "constraint_parameters": state.params,
        "user_known": known,
        "constraints": dump(variant.expanded),
        "constraints_original": dump(variant.original),
        "action_should_succeed": assignment.outcome,
        "user_instruction": instruction,
        "user_prompt": user_prompt(variant.goal, known, rng),
        "directed_action_graph": graph,
        "user_goal": variant.goal,
    }


def _verified(domain: Domain, task: Task, assignment: Assignment) -> bool:
    """The published acceptance test on the strict oracle: required actions, then the goal."""
    try:
        run = run_reference_path(domain, task)
    except Exception:  # noqa: BLE001 - a task the oracle cannot run is not a task
        return False
    return run.goal_succeeded == assignment.outcome


def assignment_text(assignment: Assignment) -> str:
    return "; ".join(f"{text}={value}" for text, value in assignment.key())


__all__ = [
    "HIDDEN_PREREQUISITE_KEY",
    "HIDDEN_REFUSAL",
    "DomainReport",
    "DomainTasks",
    "Unrealised",
    "generate_domain",
    "single_text",
    "world_database",
]
