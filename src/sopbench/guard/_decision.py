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
from sopbench.constraints import Expr, HelperCall, Rule, Single, Sop, format_single, format_value, singles
from sopbench.evaluation import CallLookup, CallScan, ToolCall, next_call_review


@dataclass(frozen=True, slots=True)
class Unmet:
    """One constraint of a refused call that was not verified, and the helper calls that would verify
    it (each bound to the call's own arguments as far as they determine it)."""

    constraint: str
    helpers: tuple[HelperCall, ...]

    def __str__(self) -> str:
        return _unmet_text(self.constraint, [str(h) for h in self.helpers])


def _unmet_text(constraint: str, helpers: list[str]) -> str:
    way = " or ".join(helpers) or "no helper (it cannot be verified by a call)"
    return f'"{constraint}" (verify with {way})'


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


# One helper a part of a rule suggests: its name and, per parameter, the call's variable that gives
# its value (a parameter whose variable the call does not bind is left out, as ``Single.bind`` does).
_Suggestion = tuple[str, tuple[tuple[str, str], ...]]


@dataclass(frozen=True, slots=True)
class _Part:
    """A distinct single of a rule, ready to be listed as unverified: its text's pieces and the
    helpers it suggests; ``plain`` False when it binds a literal or a parameter twice (then it is
    listed the long way, ``_unmet``). ``quick``: for a part that suggests at most one helper, the
    call's variables it reads and its ``Unmet`` as templates over their rendered values (used when
    the call binds them all)."""

    single: Single
    plain: bool
    head: str
    params: tuple[tuple[str, str], ...]
    suggestions: tuple[_Suggestion, ...]
    quick: _Quick | None = None


@dataclass(frozen=True, slots=True)
class _Quick:
    """``Unmet(constraint.format(*shown), helpers)`` and its text ``text.format(*shown)``, where
    ``shown`` renders the values of ``variables``; ``helper``: the one helper's name and, per
    parameter, the position of its variable (None: no helper)."""

    variables: tuple[str, ...]
    constraint: str
    text: str
    helper: tuple[str, tuple[str, ...], tuple[int, ...]] | None


class Explainer:
    """A refusal's unverified parts (``Unmet``) and their text, as ``_unmet`` lists them, with what
    does not depend on the call (which singles a rule has, which helpers each suggests and how their
    parameters are bound) worked out once per rule, so that a refusal pays only for its own values."""

    def __init__(self, sop: Sop) -> None:
        self.sop = sop
        self._parts: dict[int, tuple[Rule, tuple[_Part, ...]]] = {}

    def unmet(
        self, rule: Rule, arguments: Mapping[str, Any], alone: Callable[[Expr], bool]
    ) -> tuple[tuple[Unmet, ...], str]:
        """The parts of ``rule`` not verified on their own for a call with ``arguments``, and their
        text (``"; ".join(str(u) for u in unmet)``)."""
        unmet: list[Unmet] = []
        texts: list[str] = []
        seen: dict[str, str] = {}  # variable -> its value rendered (parts share the call's variables)
        for part in self._rule_parts(rule):
            if alone(part.single):
                continue
            quick = part.quick
            if quick is not None:
                try:
                    values = [arguments[v] for v in quick.variables]
                except KeyError:  # a variable the call does not bind: written the long way below
                    pass
                else:
                    rendered = []
                    for variable, value in zip(quick.variables, values, strict=True):
                        text = seen.get(variable)
                        if text is None:
                            text = seen[variable] = format_value(value)
                        rendered.append(text)
                    helpers: tuple[HelperCall, ...] = ()
                    if quick.helper is not None:
                        name, keys, positions = quick.helper
                        helpers = (
                            HelperCall(name, tuple(zip(keys, [values[i] for i in positions], strict=True))),
                        )
                    unmet.append(Unmet(quick.constraint.format(*rendered), helpers))
                    texts.append(quick.text.format(*rendered))
                    continue
            if not part.plain:
                listed = Unmet(
                    format_single(part.single, arguments),
                    tuple(self.sop.suggested_helpers(part.single, arguments)),
                )
                unmet.append(listed)
                texts.append(str(listed))
                continue
            found: list[HelperCall] = []
            shown: list[str] = []
            for name, params in part.suggestions:
                helper = HelperCall(name, tuple((p, arguments[v]) for p, v in params if v in arguments))
                if helper not in found:  # a list: an argument value may be unhashable
                    found.append(helper)
                    inner = ", ".join(f"{p}={format_value(value)}" for p, value in helper.args)
                    shown.append(f"{name}({inner})")
            constraint = part.head + _bound_text(part.params, arguments)
            unmet.append(Unmet(constraint, tuple(found)))
            texts.append(_unmet_text(constraint, shown))
        return tuple(unmet), "; ".join(texts)

    def _rule_parts(self, rule: Rule) -> tuple[_Part, ...]:
        known = self._parts.get(id(rule))
        if known is not None and known[0] is rule:
            return known[1]
        parts = tuple(self._part(single) for single in dict.fromkeys(singles(rule.expr)))
        self._parts[id(rule)] = rule, parts
        return parts

    def _part(self, single: Single) -> _Part:
        head = f"{'NOT ' if single.negated else ''}{single.name}("
        params = single.params or ()
        plan = [(single.name, params)] if single.name not in self.sop.verifiers else []
        process = self.sop.verifiers.get(single.name)
        own = dict(params)  # the single's parameter -> the call's variable
        for helper in singles(process):
            plan.append((helper.name, tuple((p, own[v]) for p, v in helper.params or () if v in own)))
        plain = _plain_map(params) and all(_plain_map(helper.params or ()) for helper in singles(process))
        offered = tuple([(name, bound) for name, bound in plan if name not in self.sop.unoffered] or plan)
        quick = _quick(head, params, offered) if plain and len(offered) <= 1 else None
        return _Part(single, plain, head, tuple(params), offered, quick)


def _quick(head: str, params: tuple[tuple[str, str], ...], suggestions: tuple[_Suggestion, ...]) -> _Quick:
    """The templates of a part with plain parameter maps and at most one helper to suggest, for a
    call that binds every variable the part reads (what ``format_single`` and ``Unmet`` write)."""
    variables = tuple(
        dict.fromkeys([v for _, v in params] + [v for _, bound in suggestions for _, v in bound])
    )
    at = {v: i for i, v in enumerate(variables)}
    constraint = _escaped(head) + ", ".join(f"{_escaped(p)}={{{at[v]}}}" for p, v in params) + ")"
    helpers = [
        _escaped(name) + "(" + ", ".join(f"{_escaped(p)}={{{at[v]}}}" for p, v in bound) + ")"
        for name, bound in suggestions
    ]
    text = _unmet_text(constraint, helpers)
    helper = None
    if suggestions:
        name, bound = suggestions[0]
        helper = name, tuple(p for p, _ in bound), tuple(at[v] for _, v in bound)
    return _Quick(variables, constraint, text, helper)


def _escaped(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _plain_map(params: tuple[tuple[str, str], ...]) -> bool:
    """Whether a parameter map binds each parameter once and to a variable (not to a literal)."""
    return len({p for p, _ in params}) == len(params) and not Single("", params).bind({})


def _bound_text(params: tuple[tuple[str, str], ...], arguments: Mapping[str, Any]) -> str:
    """The arguments of ``format_single``'s text (the head written already) and its closing paren."""
    return (
        ", ".join(f"{p}={format_value(arguments[v])}" if v in arguments else f"{p}={v}" for p, v in params)
        + ")"
    )
