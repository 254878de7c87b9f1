"""The search behind generation: what it returns meets its targets, it keeps to its budget, and it
never hands back a state it was told to avoid."""

from __future__ import annotations

import random

import pytest

from sopbench.domains import get_domain
from sopbench.generation import domain_variants, world_database
from sopbench.generation.search import (
    Problem,
    Realiser,
    SearchSpace,
    State,
    backtrack,
    candidate_values,
    descend,
    search_targets,
)


@pytest.fixture(scope="module")
def bank() -> tuple[SearchSpace, list]:
    domain = get_domain("bank")
    space = SearchSpace(domain, world_database(domain, 0))
    cases = [
        (variant, assignment)
        for variant in domain_variants(domain.catalogue, random.Random(0), only_goals=["transfer_funds"])
        for assignment in variant.assignments
    ]
    assert cases, "no combination of transfer_funds"
    return space, cases


def _problem(space: SearchSpace, variant, assignment, verify, avoid=frozenset()) -> Problem:
    targets = search_targets(space, variant, assignment, shown_refusal=False)
    names = space.variables(variant, assignment)
    candidates = candidate_values(space, variant, names, targets, random.Random(1))
    return Problem(tuple(names), candidates, targets, avoid, verify)


def test_a_realised_state_meets_every_target_and_is_not_one_to_avoid(bank) -> None:
    space, cases = bank
    realiser = Realiser(space)
    made = 0
    for variant, assignment in cases[:6]:
        outcome = realiser.realise(variant, assignment, random.Random(2), set(), lambda s: True)
        if outcome.state is None:
            continue
        made += 1
        problem = _problem(space, variant, assignment, lambda s: True)
        assert space.wrong(outcome.state, problem.targets) == []
        # The same combination again, its first state to be avoided: another state, or none.
        avoid = {outcome.state.fingerprint()}
        again = realiser.realise(variant, assignment, random.Random(2), avoid, lambda s: True)
        assert again.state is None or again.state.fingerprint() not in avoid
    assert made >= 3


@pytest.mark.parametrize("budget", [1, 7, 60])
def test_each_search_keeps_to_its_budget_when_the_oracle_refuses_everything(bank, budget: int) -> None:
    space, cases = bank
    variant, assignment = next((v, a) for v, a in cases if a.outcome)
    tried: list[State] = []
    problem = _problem(space, variant, assignment, lambda s: tried.append(s) and False)
    start = State(space.world, dict(space.params), {n: problem.candidates[n][0] for n in problem.names})
    for search in (backtrack(space, problem, start, budget), descend(space, problem, start, budget)):
        assert search.state is None
        assert 1 <= search.evaluations <= budget


def test_an_unrealised_assignment_says_why(bank) -> None:
    space, cases = bank
    variant, assignment = next((v, a) for v, a in cases if a.outcome and a.required)
    outcome = Realiser(space).realise(variant, assignment, random.Random(3), set(), lambda s: False, budget=5)
    assert outcome.state is None
    assert outcome.reason.startswith(
        ("no state within the search budget gives", "every instance got its truth")
    )
