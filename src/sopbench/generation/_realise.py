"""Realising an assignment: a database, user-known values and parameters that give every constraint
instance its assigned truth, found by a bounded, deterministic local search checked by the oracle.

The search state is (database, constraint parameters, user-known values). Its cost is the number of
constraint instances of the verification form whose truth, computed by the domain's own rules on
that state, differs from the assignment (a rule that raises counts as a difference). Two searches
work on it. ``backtrack`` chooses the variables with the database fixed, each instance checked as
soon as its variables are chosen. ``descend`` also moves the database; each move changes one thing:
a variable to another candidate (an entity of the world, a same-named field, a fresh pool value),
one database value near the entities the variables name (a number around a threshold, a date
around "now", another value the same field takes elsewhere, an entry added to or removed from a
collection), or one constraint parameter; the first move that lowers the cost is taken. The
``Realiser`` decides where they start and how much they may spend: states that realised earlier
assignments of the domain are warm starts. At cost zero the task is verified on the strict oracle
by its reference path (required linked actions, then the goal).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Set

from sopbench.constraints import Single

from ._backtrack import backtrack
from ._descent import descend, follow
from ._enumerate import Assignment, Variant, single_text
from ._problem import candidate_values, search_targets, shown_sop_holds
from ._space import SearchSpace
from ._state import Outcome, Problem, State

DEFAULT_BUDGET = 1500  # cost evaluations per assignment before it is reported unrealisable
WARM_STARTS = 24
ASSIGN_BUDGET = 4000  # evaluations of the backtracking over variables, per start (at the default budget)
BACKTRACKED_STARTS = 2  # the best starts the backtracking tries, each with its own order of the variables
RESTARTS = 3  # descents from the best starting states


class Realiser:
    """Realises the assignments of one domain over its world: the restart policy (which states the
    searches start from, how much each may spend), remembering the states that worked."""

    def __init__(self, space: SearchSpace) -> None:
        self.space = space
        self.warm: list[State] = []  # states that realised earlier assignments, latest first

    def realise(
        self,
        variant: Variant,
        assignment: Assignment,
        rng: random.Random,
        avoid: Set[bytes],
        verify: Callable[[State], bool],
        *,
        budget: int = DEFAULT_BUDGET,
        shown_refusal: bool = True,
    ) -> Outcome:
        """A verified state for the assignment. With ``shown_refusal``, a task to be refused must
        also break the SOP as the agent is shown it (not only a hidden prerequisite of it)."""
        if not assignment.outcome and shown_refusal and shown_sop_holds(variant, assignment):
            # Only a hidden prerequisite can refuse it: no budget is spent looking for a shown failure.
            return Outcome(None, reason="the SOP as shown holds under this assignment")
        space = self.space
        targets = search_targets(space, variant, assignment, shown_refusal=shown_refusal)
        names = space.variables(variant, assignment)
        candidates = candidate_values(space, variant, names, targets, rng)
        problem = Problem(tuple(names), candidates, targets, avoid, verify)
        outcome = self._search(problem, budget)
        if outcome.state is not None:
            self.warm.insert(0, outcome.state)
            del self.warm[WARM_STARTS * 2 :]
        return outcome

    def _search(self, problem: Problem, budget: int) -> Outcome:
        # First, on the databases of the two best starts, choose the variables by backtracking
        # (each instance checked as soon as its variables are chosen); only then move the database.
        # The two backtracking searches order the variables differently (see ``backtrack``'s
        # ``by_links``): neither order suits every combination, and two orders cost no more than one twice.
        starts = self._starts(problem)
        evaluations = len(starts)  # each start's cost
        for number, start in enumerate(starts[:BACKTRACKED_STARTS]):
            found = backtrack(
                self.space, problem, start, ASSIGN_BUDGET * budget // DEFAULT_BUDGET, by_links=number == 0
            )
            evaluations += found.evaluations
            if found.state is not None:
                return Outcome(found.state, evaluations=evaluations)
        best_wrong: list[Single] = []
        moving = evaluations  # the database moves get their own budget
        for start in starts[:RESTARTS]:
            if evaluations - moving >= budget:
                break
            found = descend(self.space, problem, start, budget - (evaluations - moving))
            evaluations += found.evaluations
            if found.state is not None:
                return Outcome(found.state, evaluations=evaluations)
            if not best_wrong or len(found.wrong) < len(best_wrong):
                best_wrong = found.wrong
        return _unrealised(problem, best_wrong, evaluations)

    def _starts(self, problem: Problem) -> list[State]:
        """The states the searches start from, fewest targets wrong first (earlier first among
        equals): the world with each variable's first candidate, then the warm starts."""
        initial = self._initial(problem)
        starts = [initial]
        constrained = problem.targets.variables
        for warm in self.warm[:WARM_STARTS]:
            # Only the checked variables come from an earlier task; the others stay fresh.
            known = {
                n: warm.known[n] if n in warm.known and n in constrained else initial.known[n]
                for n in problem.names
            }
            starts.append(State(warm.db, warm.params, known))
        costs = [len(self.space.wrong(start, problem.targets)) for start in starts]
        return [starts[i] for i in sorted(range(len(starts)), key=lambda i: (costs[i], i))]

    def _initial(self, problem: Problem) -> State:
        """The world, its parameters' defaults, each variable's first candidate (and the fields of
        the records the variables name)."""
        names = problem.names
        known = {n: (problem.candidates[n][0] if problem.candidates[n] else "") for n in names}
        state = State(self.space.world, dict(self.space.params), known)
        for n in names:
            state = follow(state, n, names)
        return state


def _unrealised(problem: Problem, wrong: list[Single], evaluations: int) -> Outcome:
    """No state found: why (the targets the best descent still got wrong, else the oracle)."""
    targets = problem.targets
    texts = [single_text(s) + (" must hold" if targets.truth(s) else " must fail") for s in wrong]
    reason = (
        "no state within the search budget gives " + "; ".join(texts)
        if texts
        else "every instance got its truth but the oracle's reference path disagreed with the expected outcome"
    )
    return Outcome(None, reason=reason, evaluations=evaluations, wrong=texts)


__all__ = ["DEFAULT_BUDGET", "Realiser"]
