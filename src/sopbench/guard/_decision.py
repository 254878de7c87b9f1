"""What the guard answers about one call, and how it decides: the evaluator's procedure judgement
over the calls seen so far (a ``sopbench.evaluation.CallLookup``), with a sentence for the agent.

The evaluator knows the truth of every constraint from its oracle; the guard knows only what the
agent saw: a helper named like a constraint that answered ``True`` or ``False`` settles that
constraint; any other constraint is taken to hold, so that choosing between alternatives (an Or)
still demands that one of them be verified.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sopbench._json import JsonBoundError, check_json_depth
from sopbench.constraints import Expr, Single, Sop, format_single, singles
from sopbench.evaluation import CallLookup, CallScan, ToolCall, next_call_review

from ._explain import Explainer, Unmet


@dataclass(frozen=True, slots=True)
class Decision:
    """Whether a call may run; when not, its unverified constraints and a sentence for the agent."""

    allowed: bool
    unmet: tuple[Unmet, ...] = ()
    explanation: str = ""

    def __bool__(self) -> bool:
        return self.allowed


class Refused(PermissionError):
    """A guarded tool was called before its SOP was verified; ``decision`` says what is missing."""

    def __init__(self, decision: Decision) -> None:
        super().__init__(decision.explanation)
        self.decision = decision


def checked_call(call: object, where: str, caller: str = "Guard.check") -> ToolCall:
    """``call`` when it is a ``ToolCall`` with a text name and object arguments within the bound on
    JSON from a model; otherwise ``TypeError`` saying, for ``caller``, what ``where`` holds instead."""
    if not isinstance(call, ToolCall):
        hint = (
            " (build one: ToolCall(name, arguments, output, succeeded))" if isinstance(call, Mapping) else ""
        )
        raise TypeError(f"{caller}: {where} must be a ToolCall, got {type(call).__name__}{hint}")
    if not isinstance(call.name, str):
        raise TypeError(f"{caller}: {where}: the name must be text, got {type(call.name).__name__}")
    if type(call.arguments) is not dict and not isinstance(call.arguments, Mapping):
        raise TypeError(
            f"{caller}: {where}: the arguments must be a mapping, got {type(call.arguments).__name__}"
        )
    try:
        check_json_depth(dict(call.arguments))
    except JsonBoundError as exc:
        raise TypeError(f"{caller}: {where}: the arguments are {exc}") from None
    return call


def observed_truth(output: object) -> bool | None:
    """A helper's answer as a truth value, or None when it is not a yes/no answer."""
    if isinstance(output, tuple) and len(output) == 2 and output[0] is True:
        output = output[1]
    if isinstance(output, bool):
        return output
    if isinstance(output, str) and output.strip() in ("True", "False"):
        return output.strip() == "True"
    return None


class ObservedFacts:
    """``sopbench.evaluation.Oracle`` over what the agent has seen, never over hidden state.

    A constraint's truth is the latest successful answer of a helper of the same name with the same
    arguments when that answer is a boolean (``True``, ``(True, False)``, or the text ``"False"``);
    otherwise it is unknown (None), and the judgement takes it that it may hold. ``calls``: the
    calls seen, as a sequence or as a lookup that reads answers with ``observed_truth`` (a
    ``CallIndex(answer=observed_truth)``, as a guard session keeps).
    """

    goal_permitted = True
    final_state = None

    def __init__(self, calls: Sequence[ToolCall] | CallLookup, goal: str) -> None:
        self.calls = calls
        self.goal = goal
        self._lookup: CallLookup
        if type(calls) is list or type(calls) is tuple or isinstance(calls, Sequence):
            self._lookup = CallScan(calls, answer=observed_truth)
        else:
            self._lookup = calls

    def holds(self, step: int, single: Single, bindings: Mapping[str, Any]) -> bool | None:
        return self._lookup.latest_answer(single.name, single.bind(bindings), step)


def decide(
    sop: Sop,
    goal: str | None,
    call: ToolCall,
    attempted: ToolCall,
    calls: CallLookup,
    explainer: Explainer | None = None,
) -> Decision:
    """Whether ``call`` (read by the judgement as ``attempted``) may run after ``calls``; a refusal's
    unverified parts are listed by ``explainer`` (one kept per SOP: the same parts and texts as
    without one, worked out faster)."""
    problem, alone = next_call_review(calls, attempted, sop, ObservedFacts(calls, goal or ""))
    if problem is None:
        return Decision(True)
    rule = sop.rule(call.name)
    assert rule is not None and rule.expr is not None  # a call without a rule has no problem
    if rule.read_only and call.name != goal:
        return Decision(True, explanation=f"read-only {call} runs although {problem}")
    if explainer is None:
        unmet = tuple(_unmet(sop, rule.expr, attempted, alone))
        listed = "; ".join(str(u) for u in unmet)
    else:
        unmet, listed = explainer.unmet(rule, attempted.arguments, alone)
    explanation = f"{call} was not executed: its SOP is not verified: {problem}."
    if unmet:
        explanation += " Unverified: " + listed + "."
    return Decision(False, unmet, explanation)


def _unmet(sop: Sop, expr: Expr, attempted: ToolCall, alone: Callable[[Expr], bool]) -> Iterable[Unmet]:
    """Each distinct constraint of the rule that, on its own, is not verified before the call."""
    for single in dict.fromkeys(singles(expr)):
        if alone(single):
            continue
        helpers = sop.suggested_helpers(single, attempted.arguments)
        yield Unmet(format_single(single, attempted.arguments), tuple(helpers))
