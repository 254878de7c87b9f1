"""Which tasks a domain's catalogue calls for: SOP variants per goal, outcome assignments per variant.

This follows the published generator's enumeration (SPEC section 9, steps 1-3):

- goals are the tools that are not ``internal_`` helpers, alphabetically;
- a goal's variants are its required dependency alone, then the required dependency together with
  each non-empty subset of its customizable pool (by increasing size);
- an *assignment* gives every constraint instance of the variant's *verification form* the value
  1 (must hold), 0 (must not hold) or -1 (irrelevant). The verification form is the variant with
  session constraints replaced by the tool calls that establish them (``logged_in_user`` becomes
  ``login_user`` with the credentials), and every referenced tool's own prerequisites chained in
  front of it, so that every instance is a pure function of database, arguments and parameters;
- single / and / or / chain / gate give their successes and failures by the published rules (one
  failing child of an ``and``, one holding child of an ``or``, the first failing step of a chain,
  the first holding branch of a gate; an exclusive-or of two pairs enumerates every case);
- a customizable assignment is merged with the first compatible successful required assignment,
  so failures come from the customizable part and the required variant supplies its own failures;
- assignments that make a ``call_*`` constraint false are dropped, and a goal's variant whose
  expanded SOP another goal already produced is dropped (each goal keeps at least one).

Where the published generator sampled at random (at most four assignments when no merge exists),
the sample here comes from the caller's seeded generator.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

from sopbench.constraints import And, Chain, Expr, Gate, Not, Or, Single, rename, singles
from sopbench.domains import Catalogue, default_dependencies, expand, simplify

# value of a constraint instance in an assignment
HOLDS, FAILS, FREE = 1, 0, -1
Values = dict[Single, int]  # positive single -> HOLDS / FAILS / FREE
# A goal's variant before numbering: its SOP as authored, expanded, in verification form, its assignments.
_Found = tuple[Expr | None, Expr | None, Expr | None, list["Assignment"]]
SAMPLE_LIMIT = 4  # the published generator's cap when it falls back to every combination


@dataclass(frozen=True)
class Assignment:
    """One outcome case of a variant: the truth each constraint instance must have."""

    values: tuple[tuple[Single, int], ...]
    outcome: bool

    @property
    def required(self) -> dict[Single, bool]:
        """The instances that are not free, with the truth they must have."""
        return {single: value == HOLDS for single, value in self.values if value != FREE}

    def key(self) -> tuple[tuple[str, int], ...]:
        """A readable identity: each instance's call text with its value, sorted."""
        return tuple(sorted((_single_text(s), v) for s, v in self.values))


@dataclass(frozen=True)
class Variant:
    """One SOP of a goal: as authored, expanded (the oracle's), and in verification form."""

    goal: str
    number: int  # position among the goal's kept variants
    original: Expr | None
    expanded: Expr | None
    verification: Expr | None
    assignments: tuple[Assignment, ...]


def goals(catalogue: Catalogue) -> list[str]:
    """The goals of a domain: every tool that is not an ``internal_`` helper, alphabetically."""
    return sorted(t for t in catalogue.required if not t.startswith("internal_"))


def domain_variants(
    catalogue: Catalogue,
    rng: random.Random,
    *,
    full_sop_only: bool = False,
    only_goals: Iterable[str] | None = None,
) -> list[Variant]:
    """Every goal's variants with their assignments, goals alphabetically.

    ``full_sop_only`` keeps only the variant equal to the goal's full default SOP (the published
    generator's ``--gen_fulldeptasks``, with which its university tasks were made).
    """
    seen_expanded: set[Expr | None] = set()
    result: list[Variant] = []
    defaults = default_dependencies(catalogue, "full", expanded=True)
    wanted = None if only_goals is None else set(only_goals)
    for goal in goals(catalogue):
        found = _goal_variants(catalogue, goal, defaults, rng)
        if full_sop_only:
            found = [v for v in found if v[1] == defaults.get(goal)]
        kept = _without_repeats(found, seen_expanded)
        seen_expanded.update(expanded for _, expanded, _, _ in kept)
        if wanted is not None and goal not in wanted:
            continue  # still recorded as seen: what is dropped must not depend on the goals asked for
        for number, (original, expanded, verification, assignments) in enumerate(kept):
            result.append(Variant(goal, number, original, expanded, verification, tuple(assignments)))
    return result


def _without_repeats(found: list[_Found], seen: set[Expr | None]) -> list[_Found]:
    """A variant another goal already produced adds nothing new; keep at least one (the last)."""
    kept = list(found)
    i = 0
    while i < len(kept) and len(kept) > 1:
        if kept[i][1] in seen:
            kept.pop(i)
        else:
            i += 1
    return kept


def _goal_variants(
    catalogue: Catalogue, goal: str, defaults: Mapping[str, Expr | None], rng: random.Random
) -> list[_Found]:
    required = catalogue.required.get(goal)
    pool = catalogue.customizable.get(goal, ())
    if required is None and not pool:
        return [(None, None, None, [Assignment((), True)])]
    form = _VerificationForm(catalogue, defaults)
    innate = catalogue.innate.get(goal)
    required_form = form.of(required)
    if innate is not None:
        innate_form = form.of(innate)
        required_form = (
            simplify(And([innate_form, required_form])) if required_form is not None else innate_form
        )
    variants = []
    required_cases = outcome_cases(required_form, limited=True)
    if required is not None:
        variants.append(
            (simplify(required), simplify(expand(required, catalogue)), required_form, required_cases)
        )
    if required is not None and not required_cases[True]:
        required_cases = _sampled(outcome_cases(required_form, limited=False), rng)
    for size in range(1, len(pool) + 1):
        for subset in itertools.combinations(pool, size):
            extra = subset[0] if size == 1 else And(subset)
            extra_form = form.of(extra)
            cases = outcome_cases(extra_form, limited=True)
            original = simplify(And([required, extra])) if required is not None else simplify(extra)
            expanded = simplify(expand(original, catalogue))
            if required_form is None:
                variants.append((original, expanded, extra_form, cases))
                continue
            if not required_cases[True]:
                continue
            merged = _merge(required_cases[True], cases)
            if merged is None or not merged[True] or not merged[False]:
                everything = _merge(
                    outcome_cases(required_form, limited=False)[True],
                    outcome_cases(extra_form, limited=False),
                )
                if everything is None or not (everything[True] or everything[False]):
                    continue
                merged = _sampled(everything, rng)
            verification = simplify(And([required_form, extra_form]))
            variants.append((original, expanded, verification, merged))
    result = []
    for original, expanded, verification, cases in variants:
        assignments = _without_false_calls(original, cases)
        if assignments:
            result.append((original, expanded, verification, assignments))
    return result


Cases = dict[bool, list[Values]]


def outcome_cases(expr: Expr | None, *, limited: bool = True) -> Cases:
    """Successes and failures of ``expr`` as assignments (the published rules; see the module doc).

    ``limited`` is the published k = 1: an ``and`` fails through exactly one child and an ``or``
    holds through exactly one; otherwise every number of failing (holding) children is enumerated.
    """
    if expr is None:
        return {True: [{}], False: []}
    if isinstance(expr, Single):
        positive = expr.positive
        return {not expr.negated: [{positive: HOLDS}], expr.negated: [{positive: FAILS}]}
    exclusive = _exclusive_pair(expr)
    limited = limited and not exclusive
    parts = [outcome_cases(child, limited=limited) for child in expr.children]
    result: Cases = {True: [], False: []}
    n = len(parts)
    if isinstance(expr, And | Or):
        conjunction = isinstance(expr, And)
        counts = range(0, 2) if limited and n > 1 else range(0, n + 1)
        for chosen in counts:  # and: how many children fail; or: how many hold
            failing = chosen if conjunction else n - chosen
            for failed in itertools.combinations(range(n), failing):
                outcome = conjunction == (chosen == 0)
                result[outcome].extend(_combine(parts, set(failed), set()))
    else:
        ordered = isinstance(expr, Chain)
        for i in range(n + 1):
            if ordered:  # the first failing step is i (n: every step holds)
                fail_at, outcome = {i}, i == n
            else:  # the first holding branch is i (n: every branch fails)
                fail_at, outcome = set(range(i)) if i < n else set(range(n)), i < n
            skip = set(range(i + 1, n))
            result[outcome].extend(_combine(parts, fail_at, skip))
    return result


def _combine(parts: Sequence[Cases], fail_at: set[int], skip: set[int]) -> list[Values]:
    """Every consistent product of the children's cases: failing ones, skipped ones, holding ones."""
    choices: list[list[Values]] = []
    for i, part in enumerate(parts):
        if i in fail_at:
            choices.append(part[False])
        elif i in skip:
            keys = {s for case in part[True] + part[False] for s in case}
            choices.append([dict.fromkeys(keys, FREE)])
        else:
            choices.append(part[True])
    combined = []
    for product in itertools.product(*choices):
        merged = _merge_values(product)
        if merged is not None:
            combined.append(merged)
    return combined


def _merge_values(cases: Iterable[Values]) -> Values | None:
    merged: Values = {}
    for case in cases:
        for single, value in case.items():
            known = merged.get(single, FREE)
            if known == FREE:
                merged[single] = value
            elif value != FREE and value != known:
                return None
    return merged


def _compatible(a: Values, b: Values) -> bool:
    return all(a[k] == b[k] or a[k] == FREE or b[k] == FREE for k in a.keys() & b.keys())


def _merge(required_successes: list[Values], extra: Cases) -> Cases | None:
    """Each case of the extra part with the first compatible success of the required part."""
    merged: Cases = {True: [], False: []}
    added = False
    for outcome in (True, False):
        for case in extra[outcome]:
            partner = next((r for r in required_successes if _compatible(case, r)), None)
            if partner is None:
                continue
            added = True
            combined = dict(case)
            for single, value in partner.items():
                if single not in combined or value != FREE:
                    combined[single] = value
            merged[outcome].append(combined)
    return merged if added else None


def _sampled(cases: Cases, rng: random.Random) -> Cases:
    out: Cases = {}
    for outcome, items in cases.items():
        if len(items) <= SAMPLE_LIMIT:
            out[outcome] = list(items)
        else:
            picks = sorted(rng.sample(range(len(items)), SAMPLE_LIMIT))
            out[outcome] = [items[i] for i in picks]
    return out


def _exclusive_pair(expr: Expr) -> bool:
    """An ``or`` of two two-element ``and``s that are each other's inverse (exclusive or / nor)."""
    if not isinstance(expr, Or) or len(expr.children) != 2:
        return False
    left, right = expr.children
    if not (isinstance(left, And) and isinstance(right, And)):
        return False
    if len(left.children) != 2 or len(right.children) != 2:
        return False
    a, b = left.children
    c, d = (Not(x) for x in right.children)
    return (a, b) == (c, d) or (a, b) == (d, c)


def _without_false_calls(original: Expr | None, cases: Cases) -> list[Assignment]:
    calls = {s.positive for s in singles(original) if s.name.startswith("call_")}
    assignments = []
    seen: set[tuple[tuple[tuple[Single, int], ...], bool]] = set()
    for outcome in (True, False):
        for case in cases.get(outcome, []):
            if any(case.get(call, FREE) == FAILS for call in calls):
                continue
            values = tuple(sorted(case.items(), key=lambda item: _single_text(item[0])))
            if (values, outcome) in seen:
                continue
            seen.add((values, outcome))
            assignments.append(Assignment(values, outcome))
    return assignments


class _VerificationForm:
    """Session constraints as the calls that establish them, prerequisites chained in front."""

    def __init__(self, catalogue: Catalogue, defaults: Mapping[str, Expr | None]) -> None:
        self.catalogue = catalogue
        self.defaults = defaults

    @overload
    def of(self, expr: Expr) -> Expr: ...

    @overload
    def of(self, expr: Expr | None) -> Expr | None: ...

    def of(self, expr: Expr | None) -> Expr | None:
        if expr is None:
            return None
        formed = simplify(self._form(expr, frozenset()))
        assert formed is not None, expr  # a catalogue's groups are never empty (the parser refuses them)
        return formed

    def _form(self, expr: Expr, active: frozenset[str]) -> Expr:
        if not isinstance(expr, Single):
            return type(expr)(self._form(child, active) for child in expr.children)
        catalogue = self.catalogue
        link = catalogue.links.get(expr.name)
        if link is not None:
            caller = expr.param_map
            mapping = {p: caller.get(v, v) for p, v in link.params or ()}
            for param in catalogue.graph_params(link.name):
                mapping.setdefault(param, param)
            return self._form(Single(link.name, tuple(mapping.items()), expr.negated), active)
        if expr.name in active:  # a tool whose own prerequisites mention it again
            return expr
        steps: list[Expr] = []
        for table in (catalogue.innate, self.defaults, catalogue.constraint_dependencies):
            prerequisite = table.get(expr.name)
            if prerequisite is None:
                continue
            renamed = rename(prerequisite, expr.param_map)
            formed = self._form(renamed, active | {expr.name})
            steps.append(Not(formed) if expr.negated else formed)
        if not steps:
            return expr
        steps.append(expr)
        return Gate(steps) if expr.negated else Chain(steps)


def _single_text(single: Single) -> str:
    args = ", ".join(f"{p}={v}" for p, v in single.params or ())
    return f"{single.name}({args})"


def single_text(single: Single) -> str:
    """``name(param=variable, ...)``: how reports name a constraint instance."""
    return _single_text(single)
