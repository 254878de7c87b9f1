"""Realising an assignment: a database, user-known values and parameters that give every constraint
instance its assigned truth, found by a bounded, deterministic local search checked by the oracle.

The search state is (database, constraint parameters, user-known values). Its cost is the number of
constraint instances of the verification form whose truth, computed by the domain's own rules on
that state, differs from the assignment (a rule that raises counts as a difference). Moves change
one thing: a variable to another candidate (an entity of the world, a same-named field, a fresh
pool value), one database value near the entities the variables name (a number around a threshold,
a date around "now", another value the same field takes elsewhere, an entry added to or removed
from a collection), or one constraint parameter. The first move that lowers the cost is taken;
states that realised earlier assignments of the domain are warm starts. At cost zero the task is
verified on the strict oracle by its reference path (required linked actions, then the goal).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from sopbench.constraints import And, Chain, Expr, Single, singles

from ._backtrack import Backtracking
from ._descent import Descent
from ._enumerate import Assignment, Variant, single_text
from ._space import DEFAULT_BUDGET
from ._state import GoalCall, Outcome, ShownSop, State
from ._values import fits_schema, structured_candidates

WARM_STARTS = 24
ASSIGN_BUDGET = 4000  # evaluations of the backtracking over variables, per start
RESTARTS = 3  # descents from the best starting states


class Realiser(Backtracking, Descent):
    """Realises assignments of one domain over one world database."""

    def realise(
        self,
        variant: Variant,
        assignment: Assignment,
        rng: random.Random,
        avoid: set[bytes],
        verify,
        *,
        shown_refusal: bool = True,
    ) -> Outcome:
        """A verified state for the assignment. With ``shown_refusal``, a task to be refused must
        also break the SOP as the agent is shown it (not only a hidden prerequisite of it)."""
        targets: list[tuple[Single, bool]] = [(s, v) for s, v in assignment.required.items()]
        if assignment.outcome:
            # A permitted goal must also work: its own checks (a matching password) must pass.
            goal_params = self.domain.catalogue.graph_params(variant.goal)
            targets.append((GoalCall(variant.goal, tuple((p, p) for p in goal_params)), True))
            # ... and so must the actions an agent calls with the extra values to verify that
            # it is permitted (a login before reading the balance a constraint speaks of).
            targets += [(helper, True) for helper in self.credential_helpers(variant, assignment)]
        elif shown_refusal and (settled := _truth_under(variant.original, assignment.required)) is not None:
            if settled:
                # The assignment makes every constraint the agent is shown hold: only a hidden
                # prerequisite can refuse it, so no budget is spent looking for a shown failure.
                return Outcome(None, reason="the SOP as shown holds under this assignment")
            # (when it makes the shown SOP fail, that needs no target of its own)
        elif shown_refusal:
            # When one instance the assignment leaves free decides the shown SOP, the target is that
            # instance alone: it is checked as soon as its own variables are chosen, and a failure
            # names only them (a guest who has not reached the day's limit is rejected before any
            # order is tried for that guest).
            deciding = _deciding_literal(variant.original, assignment.required)
            shown_expr: Expr | None = variant.original if deciding is None else deciding
            shown = f"{variant.goal}#{variant.number}"
            if deciding is not None:
                shown += f":{'not ' if deciding.negated else ''}{deciding.name}"
            self._shown[shown] = shown_expr
            shown_vars = dict.fromkeys(
                var for single in singles(shown_expr) for _, var in single.params or ()
            )
            targets.append((ShownSop(shown, tuple((var, var) for var in shown_vars)), False))
        names = self.variables(variant, assignment)
        kinds = {n: self.kinds(n, variant.verification, variant.goal) for n in names}
        thresholds = [
            v for v in self.params.values() if isinstance(v, int | float) and not isinstance(v, bool)
        ]
        candidates = {n: self.index.for_variable(n, kinds[n], rng, thresholds) for n in names}
        for n in names:
            schema = self.schema(n, variant.verification, variant.goal)
            if schema is not None:
                candidates[n] = candidates[n] + structured_candidates(schema, self.index, self.params)
            entries = self.entries(n, variant.verification, variant.goal)
            enums = [list(e["enum"]) for e in entries if "enum" in e]
            if enums:
                candidates[n] = enums[0] + candidates[n]
            # Values an agent could not even pass (wrong JSON type, outside an enum) make no task.
            candidates[n] = [v for v in candidates[n] if all(fits_schema(e, v) for e in entries)]
        constrained = {v for single, _ in targets for _, v in single.params or ()}
        for n in names:  # a seeded rotation of the best guesses varies tasks between seeds
            if n not in constrained:
                # Nothing checks it (a bill's description, a review's comment): a fresh pool value
                # reads better than some other record's field.
                fresh = [v for v in candidates[n] if isinstance(v, str) and v not in self.index.stored]
                candidates[n] = fresh + [v for v in candidates[n] if v not in fresh]
                head = fresh
            else:
                head = candidates[n][: min(4, len(candidates[n]))]
            rng.shuffle(head)
            candidates[n][: len(head)] = head
        starts = [self._initial(names, candidates)]
        for warm in self.warm[:WARM_STARTS]:
            # Only the checked variables come from an earlier task; the others stay fresh.
            known = {
                n: warm.known[n] if n in warm.known and n in constrained else starts[0].known[n]
                for n in names
            }
            starts.append(State(warm.db, warm.params, known))
        evaluations = 0
        scored: list[tuple[int, int, State]] = []
        for start in starts:
            scored.append((len(self.wrong(start, targets)), len(scored), start))
            evaluations += 1
        scored.sort(key=lambda item: (item[0], item[1]))
        # First, on the databases of the two best starts, choose the variables by backtracking
        # (each instance checked as soon as its variables are chosen); only then move the database.
        # The two backtracking searches order the variables differently (see ``_assign``'s
        # ``by_links``): neither order suits every combination, and two orders cost no more than one twice.
        for number, (_, _, start) in enumerate(scored[:2]):
            found, used = self._assign(
                start,
                targets,
                names,
                candidates,
                ASSIGN_BUDGET * self.budget // DEFAULT_BUDGET,
                avoid,
                verify,
                by_links=number == 0,
            )
            evaluations += used
            if found is not None:
                self._remember(found)
                return Outcome(found, evaluations=evaluations)
        best_wrong: list[Single] = []
        moving = evaluations  # the database moves get their own budget
        for _, _, start in scored[:RESTARTS]:
            if evaluations - moving >= self.budget:
                break
            state, wrong, used = self._descend(
                start,
                targets,
                names,
                candidates,
                self.budget - (evaluations - moving),
                avoid,
                verify,
            )
            evaluations += used
            if state is not None:
                self._remember(state)
                return Outcome(state, evaluations=evaluations)
            if not best_wrong or len(wrong) < len(best_wrong):
                best_wrong = wrong
        texts = [single_text(s) + (" must hold" if dict(targets)[s] else " must fail") for s in best_wrong]
        reason = (
            "no state within the search budget gives " + "; ".join(texts)
            if texts
            else "every instance got its truth but the oracle's reference path disagreed with the expected outcome"
        )
        return Outcome(None, reason=reason, evaluations=evaluations, wrong=texts)

    def _remember(self, state: State) -> None:
        self.warm.insert(0, state)
        del self.warm[WARM_STARTS * 2 :]


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


__all__ = ["DEFAULT_BUDGET", "Realiser", "State"]
