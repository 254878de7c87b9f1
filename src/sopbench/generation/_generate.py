"""Generating one domain's task file: enumerate, realise, verify, word, report."""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sopbench.constraints import dump
from sopbench.domains import Domain, action_graph, get_domain, run_reference_path
from sopbench.tasks import Task, task_from_json

from ._coverage import DomainReport, DomainTasks, Unrealised
from ._enumerate import Assignment, Variant, domain_variants, goals
from ._realise import DEFAULT_BUDGET, Realiser
from ._space import SearchSpace
from ._state import Outcome, State
from ._wording import user_instruction, user_prompt
from ._world import renamed_people, world_database

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


def _seed_for(*parts: object) -> int:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class _Generation:
    """What every search of one domain's generation shares."""

    name: str
    domain: Domain
    seed: int
    realiser: Realiser  # with the domain's search space
    budget: int
    per_assignment: int
    include_hidden: bool


@dataclass(frozen=True)
class _VariantWording:
    """What every task of one variant says alike: the user's instruction and the action graph."""

    variant: Variant
    instruction: str
    graph: Mapping[str, Any]


@dataclass
class _Accepted:
    """What the final test saw during one search: the task it accepted, and whether it turned a
    state down because only a hidden prerequisite refused it."""

    task: dict[str, Any] | None = None
    hidden_refusal: bool = False


@dataclass
class _Made:
    """The tasks made for one combination, and why the rest are missing."""

    tasks: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    hidden: bool = False  # missing because only a hidden prerequisite refused them
    hidden_prerequisite_tasks: int = 0  # made anyway, on request


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
    variants = domain_variants(
        domain.catalogue,
        random.Random(_seed_for("sample", name, seed)),
        full_sop_only=name in FULL_SOP_ONLY_DOMAINS,
        only_goals=_wanted_goals(name, domain, goals_wanted),
    )
    start = world_database(domain, seed) if world is None else renamed_people(dict(world), seed, name)
    realiser = Realiser(SearchSpace(domain, start))
    generation = _Generation(
        name, domain, seed, realiser, budget, per_assignment, include_hidden_prerequisites
    )
    report = DomainReport(name, seed, per_assignment)
    report.goals = len({v.goal for v in variants})
    report.variants = len(variants)
    tasks: dict[str, list[dict[str, Any]]] = {}
    for variant in variants:
        if progress is not None:
            progress(variant.goal)
        wording = _variant_wording(generation, variant)
        for number, assignment in enumerate(variant.assignments):
            made = _combination_tasks(generation, wording, number, assignment)
            _record(report, variant, assignment, made)
            tasks.setdefault(variant.goal, []).extend(made.tasks)
    report.seconds = time.perf_counter() - started
    return DomainTasks(name, tasks, report, variants)


def _wanted_goals(name: str, domain: Domain, goals_wanted: Iterable[str] | None) -> list[str] | None:
    """The goals asked for (None: all of them); an unknown one is an error naming the known ones."""
    if goals_wanted is None:
        return None
    wanted = list(goals_wanted)
    unknown = sorted(set(wanted) - set(goals(domain.catalogue)))
    if unknown:
        raise KeyError(
            f"{name}: unknown goal(s) {', '.join(unknown)}; goals: {', '.join(goals(domain.catalogue))}"
        )
    return wanted


def _variant_wording(generation: _Generation, variant: Variant) -> _VariantWording:
    rng = random.Random(
        _seed_for("instruction", generation.name, generation.seed, variant.goal, variant.number)
    )
    instruction = user_instruction(generation.domain, variant.goal, rng)
    graph = action_graph(generation.domain.catalogue, variant.goal, variant.original).to_json()
    return _VariantWording(variant, instruction, graph)


def _combination_tasks(
    generation: _Generation, wording: _VariantWording, number: int, assignment: Assignment
) -> _Made:
    """The asked-for tasks of one combination (each a state no earlier one of it produced), until
    one cannot be made."""
    variant = wording.variant
    made = _Made()
    produced: set[bytes] = set()
    for k in range(generation.per_assignment):
        outcome, accepted = _searched_task(generation, wording, number, assignment, k, produced)
        if outcome.state is None and accepted.hidden_refusal and generation.include_hidden:
            # Made on request, and marked: a task refused only for a hidden prerequisite.
            seed = _seed_for(
                "hidden", generation.name, generation.seed, variant.goal, variant.number, number, k
            )
            outcome, accepted = _search(
                generation,
                wording,
                assignment,
                produced,
                random.Random(seed),
                budget=generation.budget,
                shown_refusal=False,
                allow_hidden=True,
            )
            if outcome.state is not None:
                made.hidden_prerequisite_tasks += 1
        if outcome.state is None or accepted.task is None:
            made.reason = outcome.reason
            if accepted.hidden_refusal:
                made.reason, made.hidden = HIDDEN_REFUSAL, True
            break
        produced.add(outcome.state.fingerprint())
        made.tasks.append(accepted.task)
    return made


def _searched_task(
    generation: _Generation,
    wording: _VariantWording,
    number: int,
    assignment: Assignment,
    k: int,
    produced: set[bytes],
) -> tuple[Outcome, _Accepted]:
    """Up to ``ATTEMPTS`` searches, each with another seeded order of the candidates. The first also
    asks that a refusal rest on a constraint the agent is shown; a combination whose failure can only
    be hidden is still made after it. Later searches get a larger budget (a restart with more room,
    not the same one)."""
    variant = wording.variant
    for attempt in range(ATTEMPTS):
        seed = _seed_for(
            "task", generation.name, generation.seed, variant.goal, variant.number, number, k, attempt
        )
        outcome, accepted = _search(
            generation,
            wording,
            assignment,
            produced,
            random.Random(seed),
            budget=generation.budget * BUDGET_GROWTH ** max(attempt - 1, 0),
            shown_refusal=attempt == 0,
        )
        if outcome.state is not None:
            break
        if accepted.hidden_refusal and attempt >= 1:
            break  # refused only for a hidden prerequisite: more searches find more of the same
    return outcome, accepted


def _search(
    generation: _Generation,
    wording: _VariantWording,
    assignment: Assignment,
    produced: set[bytes],
    rng: random.Random,
    *,
    budget: int,
    shown_refusal: bool,
    allow_hidden: bool = False,
) -> tuple[Outcome, _Accepted]:
    """One search for a task of the combination, with what its final test saw. ``rng`` orders the
    candidates and then words the user's prompt."""
    accepted = _Accepted()
    verify = _acceptor(generation, wording, assignment, rng, accepted, allow_hidden=allow_hidden)
    outcome = generation.realiser.realise(
        wording.variant, assignment, rng, produced, verify, budget=budget, shown_refusal=shown_refusal
    )
    return outcome, accepted


def _record(report: DomainReport, variant: Variant, assignment: Assignment, made: _Made) -> None:
    """Count one combination in the report (and say why, when a task of it is missing)."""
    report.assignments += 1
    report.combinations.append(
        {
            "goal": variant.goal,
            "variant": variant.number,
            "constraints_original": dump(variant.original),
            "assignment": [list(item) for item in assignment.key()],
            "outcome": assignment.outcome,
            "tasks": len(made.tasks),
        }
    )
    if len(made.tasks) == report.per_assignment:
        report.realised += 1
    else:
        (report.excluded if made.hidden else report.unrealisable).append(
            Unrealised(
                variant.goal,
                variant.number,
                [list(i) for i in assignment.key()],
                assignment.outcome,
                made.reason,
                report.per_assignment - len(made.tasks),
            )
        )
    report.tasks += len(made.tasks)
    report.verified += len(made.tasks)
    report.must_succeed += len(made.tasks) if assignment.outcome else 0
    report.hidden_prerequisite_tasks += made.hidden_prerequisite_tasks


def _acceptor(
    generation: _Generation,
    wording: _VariantWording,
    assignment: Assignment,
    rng: random.Random,
    accepted: _Accepted,
    *,
    allow_hidden: bool = False,
) -> Callable[[State], bool]:
    """The search's final test of a state: build the task, run it on the strict oracle. With
    ``allow_hidden`` a task refused only for a hidden prerequisite is kept, and marked."""
    variant, domain = wording.variant, generation.domain

    def verify(state: State) -> bool:
        hidden = not assignment.outcome and generation.realiser.space.refusal_unseen(variant, state)
        if hidden and not allow_hidden:
            accepted.hidden_refusal = True  # a task no agent could pass (see HIDDEN_REFUSAL)
            return False
        task = _task_json(generation.realiser.space, wording, assignment, state, rng)
        if hidden:
            task[HIDDEN_PREREQUISITE_KEY] = True
        if not _verified(domain, task_from_json(task, domain=domain.name, goal=variant.goal), assignment):
            return False
        accepted.task = task
        return True

    return verify


def _task_json(
    space: SearchSpace, wording: _VariantWording, assignment: Assignment, state: State, rng: random.Random
) -> dict[str, Any]:
    variant = wording.variant
    names = space.variables(variant, assignment)
    known = {n: state.known[n] for n in names if n in state.known}
    return {
        "initial_database": state.db,
        "constraint_parameters": state.params,
        "user_known": known,
        "constraints": dump(variant.expanded),
        "constraints_original": dump(variant.original),
        "action_should_succeed": assignment.outcome,
        "user_instruction": wording.instruction,
        "user_prompt": user_prompt(variant.goal, known, rng),
        "directed_action_graph": wording.graph,
        "user_goal": variant.goal,
    }


def _verified(domain: Domain, task: Task, assignment: Assignment) -> bool:
    """The published acceptance test on the strict oracle: required actions, then the goal."""
    try:
        run = run_reference_path(domain, task)
    except Exception:  # noqa: BLE001 - a task the oracle cannot run is not a task
        return False
    return run.goal_succeeded == assignment.outcome


__all__ = ["HIDDEN_PREREQUISITE_KEY", "HIDDEN_REFUSAL", "generate_domain"]
