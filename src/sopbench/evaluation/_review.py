"""The procedure judgement of one next call, for a runtime guard: ``next_call_review``.

The guard asks, before each call, whether its SOP was verified by the calls so far (a ``CallIndex``)
and, for a refusal, which parts of the rule are verified on their own. That is ``_PrefixVerifier``'s
walk (``_procedure``) from the start with the call's own arguments; for the shapes almost every
rule has, the walk is written out once per rule (``_Review``), so that a check pays for its lookups
and not for the walk's dispatch. Its answers are the walk's (tests/guard compare them with
``procedure_problem`` over random rules and histories).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from sopbench.constraints import And, Chain, Expr, Gate, Or, Single, Sop

from ._index import CallLookup
from ._model import Oracle, ToolCall
from ._no_way import NoWayTexts
from ._procedure import (
    _NO_PROCESS,
    Text,
    _all_singles,
    _never_verified,
    _none_made,
    _none_verified,
    _not_called,
    _PrefixVerifier,
    _procedure_check,
    _text,
)


def next_call_problem(calls: CallLookup, call: ToolCall, sop: Sop, oracle: Oracle) -> str | None:
    """``procedure_problem`` for ``call`` made after every call of ``calls`` (a ``CallIndex``, so
    that its cost does not grow with the calls before it); ``oracle`` is asked about step
    ``len(calls)``."""
    return next_call_review(calls, call, sop, oracle)[0]


def next_call_review(
    calls: CallLookup, call: ToolCall, sop: Sop, oracle: Oracle
) -> tuple[str | None, Callable[[Expr], bool]]:
    """``next_call_problem``, and whether a part of the call's rule is verified on its own (as the
    rule ``part`` would be): the parts the judgement already weighed alone are not walked again."""
    rule = sop.rule(call.name)
    if rule is not None and rule.expr is not None:
        plan = _review_plan(sop, rule.expr)
        if plan is not None:
            return plan.review(calls, call.arguments, sop, oracle)
    checker = _PrefixVerifier(calls, len(calls), sop, oracle, call.arguments)
    found = _procedure_check(checker, sop, call)

    def alone(part: Expr) -> bool:
        if id(part) in checker.alone:
            return checker.alone[id(part)] is not None
        return checker.earliest(part, call.arguments, 0, in_process=False) is not None

    return (None if found is None else found[0]), alone


# How a constraint of a reviewed rule is verified: it is a helper, an argument check, or has a
# verification process of helpers, alternatives and conjunctions without an order.
_HELPER, _ARGUMENT, _PROCESS = range(3)


class _Part:
    """A constraint of a reviewed rule, and how it is verified (``kind``): by its verification
    process ``process`` (for a helper or an argument check, which have none, the constraint itself).

    ``ways``: for a process of one helper or of alternatives (a helper, or helpers called together),
    through maps that bind each parameter once and none to a literal (the usual one), each helper's
    name and the parameters it binds with the call's variables that give them; ``texts``, then: the
    constraint's problems when no way was taken (kept by the values they bind unless they name a
    failed call)."""

    __slots__ = ("single", "kind", "process", "ways", "texts")

    def __init__(self, single: Single, kind: int, process: Expr) -> None:
        self.single = single
        self.kind = kind
        self.process = process
        self.ways: tuple[_Way, ...] | None = None
        self.texts: NoWayTexts | None = None
        if kind == _PROCESS and isinstance(process, Single):
            self.ways = _ways(single, (process,))
        elif kind == _PROCESS and isinstance(process, Or | Gate):
            self.ways = _ways(single, process.children)
        if self.ways is not None:
            self.texts = NoWayTexts(single, process)


def _plain_params(single: Single) -> bool:
    """Whether ``single`` binds each parameter once and none to a literal (``"value ..."``)."""
    params = single.params or ()
    return len({p for p, _ in params}) == len(params) and not single.bind({})


# A helper of a process and what it binds: its parameters with the call's variables that give them.
_Lookup = tuple[str, tuple[tuple[str, str], ...]]
# A way to verify a constraint: a helper's lookup, and those of the helpers called with it (an And).
_Way = tuple[str, tuple[tuple[str, str], ...], tuple[_Lookup, ...]]


def _ways(single: Single, alternatives: tuple[Expr, ...]) -> tuple[_Way, ...] | None:
    """Each alternative (a helper, or helpers all to be called) with the parameters each helper
    binds and the call's variables that give them (through ``single``'s own map): how
    ``helper.bind(single.bind(arguments))`` reads the call, for maps bound plainly; None when a map
    is not plain or an alternative is of another shape."""
    if not _plain_params(single):
        return None
    own = dict(single.params or ())
    ways: list[_Way] = []
    for alternative in alternatives:
        parts = alternative.children if isinstance(alternative, And) else (alternative,)
        helpers = [part for part in parts if isinstance(part, Single) and _plain_params(part)]
        if not helpers or len(helpers) != len(parts):
            return None
        lookups = [(h.name, tuple([(p, own[v]) for p, v in h.params or () if v in own])) for h in helpers]
        ways.append((*lookups[0], tuple(lookups[1:])))
    return tuple(ways)


def _all_found(
    lookups: tuple[_Lookup, ...], calls: CallLookup, step: int, arguments: Mapping[str, Any]
) -> int | None:
    """The latest of the first successful calls of ``lookups`` (helpers all to be called), or None."""
    latest = 0
    for name, read in lookups:
        found = calls.first_success(name, {p: arguments[v] for p, v in read if v in arguments}, 0, step)
        if found is None:
            return None
        latest = max(latest, found)
    return latest


class _Choice:
    """Alternatives between constraints in a reviewed rule (an Or or a Gate of singles)."""

    __slots__ = ("parts",)

    def __init__(self, parts: tuple[_Part, ...]) -> None:
        self.parts = parts


class _Review:
    """What the judgement of one call reads of the calls before it, written out for one rule:
    ``_PrefixVerifier.earliest`` on the rule's expression from the start, with the call's own
    arguments, keeping the first problem met and what each constraint on its own answered."""

    __slots__ = ("parts",)

    def __init__(self, parts: tuple[_Part | _Choice, ...]) -> None:
        self.parts = parts

    def review(
        self, calls: CallLookup, arguments: Mapping[str, Any], sop: Sop, oracle: Oracle
    ) -> tuple[str | None, Callable[[Expr], bool]]:
        step = len(calls)
        alone: dict[int, int | None] = {}
        problem: list[Text] = []  # the first problem met, once met
        verified = True
        for part in self.parts:
            if isinstance(part, _Part):
                found = _part_found(part, calls, step, arguments, sop, problem)
                alone[id(part.single)] = found
            else:
                found = _choice_found(part, calls, step, arguments, sop, oracle, problem, alone)
            if found is None:
                verified = False

        def alone_verified(part: Expr) -> bool:
            if id(part) in alone:
                return alone[id(part)] is not None
            checker = _PrefixVerifier(calls, step, sop, oracle, arguments)
            return checker.earliest(part, arguments, 0, in_process=False) is not None

        if verified:
            return None, alone_verified
        return (_text(problem[0]) if problem else None) or "its procedure was not verified", alone_verified


def _part_found(
    part: _Part,
    calls: CallLookup,
    step: int,
    arguments: Mapping[str, Any],
    sop: Sop,
    problem: list[Text] | None,
) -> int | None:
    """``_PrefixVerifier._single`` of a constraint from the start with the call's arguments; its
    problem, when it has one and none was met before, is put in ``problem`` (None: not kept)."""
    single, kind = part.single, part.kind
    if kind == _ARGUMENT:
        return 0
    ways = part.ways
    if ways is not None:
        first_success = calls.first_success
        best: int | None = None
        for name, read, also in ways:
            if not read:
                found = first_success(name, {}, 0, step)
            elif len(read) == 1:
                ((parameter, variable),) = read
                found = first_success(
                    name, {parameter: arguments[variable]} if variable in arguments else {}, 0, step
                )
            else:
                found = first_success(name, {p: arguments[v] for p, v in read if v in arguments}, 0, step)
            if found is not None and also:
                others = _all_found(also, calls, step, arguments)
                found = None if others is None else max(found, others)
            if found is not None and (best is None or found < best):
                best = found
        if best is None and problem == []:
            problem.append(part.texts.problem(arguments, sop, calls, step))  # type: ignore[union-attr]
        return best
    args = single.bind(arguments)
    if kind == _HELPER:
        found = calls.first_success(single.name, args, 0, step)
        if found is None and problem == []:
            problem.append(functools.partial(_not_called, single, arguments, calls, args, 0, step))
        return found
    failure: list[Text] | None = [] if problem == [] else None  # the process's own, for the text
    found = _process_found(part.process, calls, step, args, failure)
    if found is None and problem == [] and failure is not None:
        inner = failure[0] if failure else None
        problem.append(functools.partial(_never_verified, single, arguments, part.process, args, sop, inner))
    return found


def _process_found(
    node: Expr, calls: CallLookup, step: int, args: Mapping[str, Any], failure: list[Text] | None
) -> int | None:
    """``_PrefixVerifier.earliest`` of a verification process without a Chain, from the start: the
    first problem met goes into ``failure`` (None: not kept)."""
    if isinstance(node, Single):
        node_args = node.bind(args)
        found = calls.first_success(node.name, node_args, 0, step)
        if found is None and failure == []:
            failure.append(functools.partial(_not_called, node, args, calls, node_args, 0, step))
        return found
    if isinstance(node, And):
        found_all = [_process_found(child, calls, step, args, failure) for child in node.children]
        return None if None in found_all else max(found_all, default=0)  # type: ignore[type-var]
    # Or, Gate: any one way of checking will do (what a way that fails would say is dropped)
    steps = [
        found
        for child in node.children
        if (found := _process_found(child, calls, step, args, None)) is not None
    ]
    if steps:
        return min(steps)
    if failure == []:
        failure.append(functools.partial(_none_made, node, args))
    return None


def _choice_found(
    choice: _Choice,
    calls: CallLookup,
    step: int,
    arguments: Mapping[str, Any],
    sop: Sop,
    oracle: Oracle,
    problem: list[Text],
    alone: dict[int, int | None],
) -> int | None:
    """``_PrefixVerifier._choice`` of alternatives between constraints, outside a process."""
    true_parts = [
        part
        for part in choice.parts
        if oracle.holds(step, part.single.positive, arguments) != part.single.negated
    ]
    if true_parts:
        found = []
        for part in true_parts:  # each weighed quietly: its problem is not the rule's
            found_at = alone[id(part.single)] = _part_found(part, calls, step, arguments, sop, None)
            if found_at is not None:
                found.append(found_at)
        if found:
            return min(found)
        if not problem:
            problem.append(
                functools.partial(_none_verified, sop, [part.single for part in true_parts], arguments)
            )
        return None
    # No branch holds: the service must not run, and finding that out means checking each branch.
    each = []
    for part in choice.parts:
        found_at = alone[id(part.single)] = _part_found(part, calls, step, arguments, sop, problem)
        each.append(found_at)
    known = [f for f in each if f is not None]
    return max(known) if len(known) == len(each) else None


# Rule expression (by identity, kept alive with it) -> its review, or None when it is walked; with
# the verifiers it was written out for and the helpers not offered (its texts name the others).
_REVIEWS: dict[int, tuple[Expr, Mapping[str, Expr | None], frozenset[str], _Review | None]] = {}
_REVIEWS_KEPT = 4096


def _review_plan(sop: Sop, expr: Expr) -> _Review | None:
    known = _REVIEWS.get(id(expr))
    if known is not None and known[0] is expr and known[1] is sop.verifiers and known[2] == sop.unoffered:
        return known[3]
    plan = _written_out(expr, sop.verifiers)
    if len(_REVIEWS) >= _REVIEWS_KEPT:
        _REVIEWS.clear()  # rules of catalogues made one after another (a task's own SOP)
    _REVIEWS[id(expr)] = expr, sop.verifiers, sop.unoffered, plan
    return plan


def _written_out(expr: Expr, verifiers: Mapping[str, Expr | None]) -> _Review | None:
    """The review of a rule ``expr`` of a shape written out, else None."""
    children = expr.children if isinstance(expr, And) else (expr,)
    parts: list[_Part | _Choice] = []
    for child in children:
        if isinstance(child, Single):
            part = _part_of(child, verifiers)
            if part is None:
                return None
            parts.append(part)
        elif isinstance(child, Or | Gate) and _all_singles(child.children):
            options = [_part_of(option, verifiers) for option in child.children]  # type: ignore[arg-type]
            if None in options:
                return None
            parts.append(_Choice(tuple(options)))  # type: ignore[arg-type]
        else:
            return None
    return _Review(tuple(parts))


def _part_of(single: Single, verifiers: Mapping[str, Expr | None]) -> _Part | None:
    process = verifiers.get(single.name, _NO_PROCESS)
    if process is _NO_PROCESS:
        return _Part(single, _HELPER, single)
    if process is None:
        return _Part(single, _ARGUMENT, single)
    if _unordered(process):
        return _Part(single, _PROCESS, process)
    return None


def _unordered(process: Expr) -> bool:
    """Whether a verification process has no Chain (which ``_process_found`` does not follow)."""
    if isinstance(process, Single):
        return True
    return not isinstance(process, Chain) and all(_unordered(child) for child in process.children)
