"""What one assignment asks of the search: the targets a state must meet and each variable's
candidates, in the order the searches try them."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from sopbench.constraints import And, Chain, Expr, Single, singles

from ._enumerate import Assignment, Variant
from ._space import SearchSpace
from ._state import GoalCall, ShownSop, Targets
from ._values import fits_schema, structured_candidates

ROTATED_GUESSES = 4  # a checked variable's best candidates, shuffled by the seed


def shown_sop_holds(variant: Variant, assignment: Assignment) -> bool:
    """Whether the assignment makes every constraint the agent is shown hold (a refusal could then
    only come from a hidden prerequisite, and no search is needed to say so)."""
    return _truth_under(variant.original, assignment.required) is True


def search_targets(
    space: SearchSpace, variant: Variant, assignment: Assignment, *, shown_refusal: bool
) -> Targets:
    """The assigned truth of every instance, and what the outcome asks besides: a permitted goal
    must also work; with ``shown_refusal`` a refused one must break the SOP as the agent is shown it."""
    wanted: list[tuple[Single, bool]] = list(assignment.required.items())
    if assignment.outcome:
        # A permitted goal must also work: its own checks (a matching password) must pass.
        goal_params = space.domain.catalogue.graph_params(variant.goal)
        wanted.append((GoalCall(variant.goal, tuple((p, p) for p in goal_params)), True))
        # ... and so must the actions an agent calls with the extra values to verify that
        # it is permitted (a login before reading the balance a constraint speaks of).
        wanted += [(helper, True) for helper in space.credential_helpers(variant, assignment)]
        return Targets(tuple(wanted))
    if not shown_refusal or _truth_under(variant.original, assignment.required) is not None:
        # (when the assignment settles that the shown SOP fails, that needs no target of its own)
        return Targets(tuple(wanted))
    # When one instance the assignment leaves free decides the shown SOP, the target is that
    # instance alone: it is checked as soon as its own variables are chosen, and a failure
    # names only them (a guest who has not reached the day's limit is rejected before any
    # order is tried for that guest).
    deciding = _deciding_literal(variant.original, assignment.required)
    shown_expr: Expr | None = variant.original if deciding is None else deciding
    shown = f"{variant.goal}#{variant.number}"
    if deciding is not None:
        shown += f":{'not ' if deciding.negated else ''}{deciding.name}"
    shown_vars = dict.fromkeys(var for single in singles(shown_expr) for _, var in single.params or ())
    wanted.append((ShownSop(shown, tuple((var, var) for var in shown_vars)), False))
    return Targets(tuple(wanted), shown_expr)


def candidate_values(
    space: SearchSpace, variant: Variant, names: Sequence[str], targets: Targets, rng: random.Random
) -> dict[str, list[Any]]:
    """Each variable's candidates: the world's values of its kinds, values built for a structured
    parameter, a parameter's enumerated values first; only values an agent could pass; the best
    few guesses in a seeded order (so that tasks vary between seeds)."""
    thresholds = [v for v in space.params.values() if isinstance(v, int | float) and not isinstance(v, bool)]
    candidates = {
        n: space.index.for_variable(n, space.kinds(n, variant.verification, variant.goal), rng, thresholds)
        for n in names
    }
    for n in names:
        schema = space.schema(n, variant.verification, variant.goal)
        if schema is not None:
            candidates[n] = candidates[n] + structured_candidates(schema, space.index, space.params)
        entries = space.entries(n, variant.verification, variant.goal)
        enums = [list(e["enum"]) for e in entries if "enum" in e]
        if enums:
            candidates[n] = enums[0] + candidates[n]
        # Values an agent could not even pass (wrong JSON type, outside an enum) make no task.
        candidates[n] = [v for v in candidates[n] if all(fits_schema(e, v) for e in entries)]
    constrained = targets.variables
    for n in names:  # a seeded rotation of the best guesses varies tasks between seeds
        if n not in constrained:
            # Nothing checks it (a bill's description, a review's comment): a fresh pool value
            # reads better than some other record's field.
            fresh = [v for v in candidates[n] if isinstance(v, str) and v not in space.index.stored]
            candidates[n] = fresh + [v for v in candidates[n] if v not in fresh]
            head = fresh
        else:
            head = candidates[n][: min(ROTATED_GUESSES, len(candidates[n]))]
        rng.shuffle(head)
        candidates[n][: len(head)] = head
    return candidates


def _deciding_literal(expr: Expr | None, truths: Mapping[Single, bool]) -> Single | None:
    """The literal the SOP is equivalent to once the instances' assigned truths hold, when exactly
    one of its instances is left free and the SOP's truth follows that instance's; else None."""
    free = list(dict.fromkeys(s.positive for s in singles(expr) if s.positive not in truths))
    if len(free) != 1:
        return None
    (instance,) = free
    if_holds = _truth_under(expr, {**truths, instance: True})
    if_fails = _truth_under(expr, {**truths, instance: False})
    if if_holds is None or if_fails is None or if_holds == if_fails:
        return None
    return Single(instance.name, instance.params, negated=not if_holds)


def _truth_under(expr: Expr | None, truths: Mapping[Single, bool]) -> bool | None:
    """The truth of an SOP that the instances' assigned truths settle, or None when they do not
    (an instance the assignment leaves free or does not have decides it)."""
    if expr is None:
        return True
    if isinstance(expr, Single):
        value = truths.get(Single(expr.name, expr.params, False))
        return None if value is None else value != expr.negated
    conjunction = isinstance(expr, And | Chain)
    values = [_truth_under(child, truths) for child in expr.children]
    if (not conjunction) in values:
        return not conjunction
    return conjunction if all(v is not None for v in values) else None
