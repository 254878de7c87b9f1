"""The procedure judgement: was each call's SOP verified by the successful calls before it?

Semantics, for every call of an action that has a rule:
- only the helper calls *before* it count, and only those that succeeded;
- a helper identity includes its bound parameters (``check_user(alice)`` does not verify ``bob``);
- a constraint with a verification process is verified when the process is (an Or inside a process
  is a choice of ways to verify); a constraint with a ``None`` process needs no helper; any other
  single names a helper that must have been called;
- And: every child verified; Chain: children verified in order; Or/Gate in a constraint: one
  *true* branch verified (when no branch is true, every branch must have been checked);
- calls of read-only actions other than the goal never fail the trace: their unmet rules are notes.

The calls before a call are read through a ``CallLookup``: a scan of the trace (``judge_procedure``)
or an index kept call by call (``next_call_review``, for a runtime guard, in ``_review``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from typing import Any

from sopbench.constraints import And, Chain, Expr, Or, Single, Sop, format_single, holds, render

from ._index import CallLookup, CallScan
from ._model import UNCLASSIFIED, Judgement, Oracle, ToolCall, Trace, UnverifiedConstraint


def step_label(calls: Sequence[ToolCall] | CallLookup, position: int) -> int:
    """How explanations name the call at ``position``: its own step label, else its 1-based position."""
    step = calls[position].step
    return position + 1 if step is None else step


def judge_procedure(trace: Trace, sop: Sop, oracle: Oracle) -> tuple[Judgement, list[str]]:
    problems: list[str] = []
    unverified: list[UnverifiedConstraint] = []
    notes: list[str] = []
    scan = CallScan(trace.calls)
    for step, call in enumerate(trace.calls):
        found = _procedure_check(_PrefixVerifier(scan, step, sop, oracle, call.arguments), sop, call)
        if found is None:
            continue
        problem, failing = found
        rule = sop.rule(call.name)
        text = f"{call} at step {step_label(trace.calls, step)}: {problem}"
        if rule is not None and rule.read_only and call.name != oracle.goal:
            notes.append(f"(read-only, not counted) {text}")
        else:
            problems.append(text)
            unverified.append(failing)
    return Judgement(not problems, tuple(problems), tuple(unverified)), notes


def procedure_problem(calls: Sequence[ToolCall], position: int, sop: Sop, oracle: Oracle) -> str | None:
    """Why the call at ``position`` was not procedurally verified by the calls before it, or None.

    The per-call part of ``judge_procedure`` (which also decides what counts): a runtime guard asks
    it about a call before executing it, with the calls made so far in front of it.
    """
    call = calls[position]
    found = _procedure_check(
        _PrefixVerifier(CallScan(calls), position, sop, oracle, call.arguments), sop, call
    )
    return None if found is None else found[0]


def _procedure_check(
    checker: _PrefixVerifier, sop: Sop, call: ToolCall
) -> tuple[str, UnverifiedConstraint] | None:
    """The problem text and the constraint left unverified for ``call``, made at ``checker.step``
    after the calls ``checker`` reads, or None."""
    rule = sop.rule(call.name)
    if rule is None or rule.expr is None:
        return None
    if checker.earliest(rule.expr, call.arguments, 0, in_process=False) is not None:
        return None
    failing = UNCLASSIFIED if checker.failing is None else _unverified(*checker.failing)
    return _text(checker.problem) or "its procedure was not verified", failing


_NO_PROCESS: Any = object()  # a constraint without a verification process: a helper tool

# A problem's text, or how to write it: most problems found are dropped (an alternative that fails
# while another succeeds), so their text is written only when it is kept.
Text = str | Callable[[], str]


def _text(text: Text | None) -> str | None:
    return text() if callable(text) else text


class _PrefixVerifier:
    """Finds, for an expression, the earliest prefix of the trace that verifies it."""

    def __init__(
        self,
        calls: CallLookup,
        step: int,
        sop: Sop,
        oracle: Oracle,
        arguments: Mapping[str, Any] | None = None,
    ) -> None:
        self.calls = calls
        self.step = step
        self.sop = sop
        self.verifiers = sop.verifiers
        self.oracle = oracle
        # What each single asked with the call's own ``arguments`` from the start (outside a
        # process) answered: the same question as that single's rule alone.
        self.arguments = arguments
        # Keyed by identity: the parts asked about are the rule's own objects, alive all along.
        self.alone: dict[int, int | None] = {}
        self.problem: Text | None = None
        # The expression the first problem is about, and its depth (kept with ``problem``, saved and
        # restored with it).
        self.failing: tuple[Expr, int] | None = None

    def _fail(self, text: Text, expr: Expr, depth: int) -> None:
        if self.problem is None:
            self.problem = text
            self.failing = expr, depth

    def earliest(
        self, expr: Expr, bindings: Mapping[str, Any], after: int, *, in_process: bool, depth: int = 0
    ) -> int | None:
        """Index of the call by which ``expr`` is verified using calls in ``[after, step)``, or None.

        ``after`` itself is returned when nothing needs to be called.
        """
        if isinstance(expr, Single):
            return self._single(expr, bindings, after, in_process, depth)
        if isinstance(expr, Chain):
            position = after
            previous: Expr | None = None
            for child in expr.children:
                found = self.earliest(child, bindings, position, in_process=in_process, depth=depth + 1)
                if found is None:
                    if previous is not None and self._verifiable(child, bindings, in_process):
                        self.problem = functools.partial(_out_of_order, child, previous, bindings)
                        self.failing = expr, depth
                    return None
                position, previous = found, child
            return position
        if isinstance(expr, And):
            children = expr.children
            if _all_singles(children):  # the usual rule: constraints, or a process's helper calls
                if in_process:
                    found_all = [self._helper(child, bindings, after, depth + 1) for child in children]  # type: ignore[arg-type]
                else:
                    found_all = [self._single(child, bindings, after, False, depth + 1) for child in children]  # type: ignore[arg-type]
            else:
                found_all = [
                    self.earliest(child, bindings, after, in_process=in_process, depth=depth + 1)
                    for child in expr.children
                ]
            return None if None in found_all else max(found_all, default=after)  # type: ignore[type-var]
        return self._choice(expr, bindings, after, in_process, depth)

    def _verifiable(self, expr: Expr, bindings: Mapping[str, Any], in_process: bool) -> bool:
        probe = _PrefixVerifier(self.calls, self.step, self.sop, self.oracle)
        return probe.earliest(expr, bindings, 0, in_process=in_process) is not None

    def _choice(
        self, expr: Expr, bindings: Mapping[str, Any], after: int, in_process: bool, depth: int
    ) -> int | None:
        children = expr.children  # type: ignore[union-attr]
        if in_process:
            # Alternatives of a verification process: any one way of checking will do.
            if _all_singles(children):
                return self._any_helper(expr, bindings, after, depth)
            options = [self._quiet(child, bindings, after, in_process, depth + 1) for child in children]
            steps = [f for f in options if f is not None]
            if steps:
                return min(steps)
            self._fail(functools.partial(_none_made, expr, bindings), expr, depth)
            return None
        true_children = [child for child in children if self._holds(child, bindings)]
        if true_children:
            found = [self._quiet(child, bindings, after, in_process, depth + 1) for child in true_children]
            verified = [f for f in found if f is not None]
            if verified:
                return min(verified)
            self._fail(functools.partial(_none_verified, self.sop, true_children, bindings), expr, depth)
            return None
        # No branch holds: the service must not run, and finding that out means checking each branch.
        each = [
            self.earliest(child, bindings, after, in_process=in_process, depth=depth + 1)
            for child in children
        ]
        known = [f for f in each if f is not None]
        return max(known) if len(known) == len(each) else None

    def _any_helper(self, expr: Expr, bindings: Mapping[str, Any], after: int, depth: int) -> int | None:
        """``_choice`` in a process of alternative helper calls: each is asked of the calls (what
        it would say when not made is dropped, as ``_quiet`` drops it)."""
        first_success, step = self.calls.first_success, self.step
        steps = [
            found
            for child in expr.children  # type: ignore[union-attr]
            if (found := first_success(child.name, child.bind(bindings), after, step)) is not None  # type: ignore[union-attr]
        ]
        if steps:
            return min(steps)
        if self.problem is None:  # _fail, written out: a refusal comes here for each constraint
            self.problem, self.failing = functools.partial(_none_made, expr, bindings), (expr, depth)
        return None

    def _quiet(
        self, expr: Expr, bindings: Mapping[str, Any], after: int, in_process: bool, depth: int
    ) -> int | None:
        saved = self.problem, self.failing
        found = self.earliest(expr, bindings, after, in_process=in_process, depth=depth)
        self.problem, self.failing = saved
        return found

    def _holds(self, expr: Expr, bindings: Mapping[str, Any]) -> bool:
        return holds(expr, lambda single: self.oracle.holds(self.step, single, bindings))

    def _single(
        self, single: Single, bindings: Mapping[str, Any], after: int, in_process: bool, depth: int
    ) -> int | None:
        # Inside a verification process every single is a helper call, even when a constraint
        # shares its name (a tool-named constraint is verified by calling that very tool).
        if in_process:
            return self._helper(single, bindings, after, depth)
        found = self._single_once(single, bindings, after, depth)
        if after == 0 and bindings is self.arguments:
            self.alone[id(single)] = found
        return found

    def _single_once(self, single: Single, bindings: Mapping[str, Any], after: int, depth: int) -> int | None:
        process = self.verifiers.get(single.name, _NO_PROCESS)
        if process is _NO_PROCESS:
            return self._helper(single, bindings, after, depth)
        if process is None:
            return after
        # A constraint verified by its process (an expression of helper calls).
        args = single.bind(bindings)
        saved = self.problem, self.failing
        self.problem = None
        if isinstance(process, Single):
            found = self._helper(process, args, after, 0)
        elif isinstance(process, Or) and _all_singles(process.children):
            found = self._any_helper(process, args, after, 0)
        else:
            found = self.earliest(process, args, after, in_process=True)
        inner = self.problem
        self.problem, self.failing = saved
        if found is None and self.problem is None:  # only the first problem is kept (_fail, inlined)
            self.problem = functools.partial(
                _never_verified, single, bindings, process, args, self.sop, inner
            )
            self.failing = single, depth
        return found

    def _helper(self, single: Single, bindings: Mapping[str, Any], after: int, depth: int) -> int | None:
        args = single.bind(bindings)
        found_at = self.calls.first_success(single.name, args, after, self.step)
        if found_at is not None:
            return found_at
        if self.problem is None:  # which failed call to name is looked up only for the text
            self.problem = functools.partial(
                _not_called, single, bindings, self.calls, args, after, self.step
            )
            self.failing = single, depth
        return None


def _all_singles(children: tuple[Expr, ...]) -> bool:
    return all(map(isinstance, children, repeat(Single)))  # no Python frame per child


def _never_verified(
    single: Single,
    bindings: Mapping[str, Any],
    process: Expr,
    args: Mapping[str, Any],
    sop: Sop,
    inner: Text | None,
) -> str:
    helpers = " or ".join([str(h) for h in sop.suggested_helpers(process, args)])
    why = _text(inner)
    detail = f" ({why})" if why and "did not succeed" in why else ""
    return f'"{format_single(single, bindings)}" was never verified{detail}; call {helpers} before it'


def _not_called(
    single: Single,
    bindings: Mapping[str, Any],
    calls: CallLookup,
    args: Mapping[str, Any],
    after: int,
    before: int,
) -> str:
    shown = format_single(single.positive, bindings)
    failed = calls.last_call(single.name, args, after, before)
    if failed is not None:
        return f'"{shown}" was called at step {step_label(calls, failed)} but did not succeed, so it verifies nothing'
    return f'"{shown}" was never called successfully before it'


def _none_verified(sop: Sop, true_children: list[Expr], bindings: Mapping[str, Any]) -> str:
    return "no alternative that holds was verified; verify one of: " + "; ".join(
        f'"{_describe(c, bindings)}" (call {_helper_text(sop, c, bindings)})' for c in true_children
    )


def _helper_text(sop: Sop, expr: Expr, bindings: Mapping[str, Any]) -> str:
    return " and ".join(str(h) for h in sop.suggested_helpers(expr, bindings)) or "nothing"


def _none_made(expr: Expr, bindings: Mapping[str, Any]) -> str:
    return f"none of these checks was made: {_inline(expr, bindings)}"


def _out_of_order(child: Expr, previous: Expr, bindings: Mapping[str, Any]) -> str:
    return (
        f'"{_describe(child, bindings)}" was verified before "{_describe(previous, bindings)}"'
        ", but they must be verified in this order"
    )


def _unverified(expr: Expr, depth: int) -> UnverifiedConstraint:
    if isinstance(expr, Single):
        return UnverifiedConstraint("negation" if expr.negated else "Single", depth)
    return UnverifiedConstraint(type(expr).__name__, depth)


def _describe(expr: Expr, bindings: Mapping[str, Any]) -> str:
    return format_single(expr, bindings) if isinstance(expr, Single) else _inline(expr, bindings)


def _inline(expr: Expr, bindings: Mapping[str, Any]) -> str:
    return " ".join(render(expr, bindings=bindings).split())
