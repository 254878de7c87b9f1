"""The runtime guard: judge a service call, before it runs, with the evaluator's procedure judgement.

The guard holds an SOP catalogue and answers one question: given the calls made so far (with their
outputs), was the SOP of this next call verified? It asks ``sopbench.evaluation.procedure_problem``,
the per-call part of the evaluator's ``judge_procedure``, so a guarded agent and a scored trace are
held to one definition. The evaluator knows the truth of every constraint from its oracle; the
guard knows only what the agent saw: a helper named like a constraint that answered ``True`` or
``False`` settles that constraint; any other constraint is taken to hold, so that choosing between
alternatives (an Or) still demands that one of them be verified.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sopbench._json import JsonBoundError, check_json_depth
from sopbench.constraints import Expr, HelperCall, Rule, Single, Sop, format_single, singles
from sopbench.evaluation import ToolCall, procedure_problem
from sopbench.tasks import Task

Expand = Callable[[ToolCall], list[ToolCall]]


@dataclass(frozen=True, slots=True)
class Unmet:
    """One constraint of a refused call that was not verified, and the helper calls that would verify
    it (each bound to the call's own arguments as far as they determine it)."""

    constraint: str
    helpers: tuple[HelperCall, ...]

    def __str__(self) -> str:
        way = " or ".join(str(h) for h in self.helpers) or "no helper (it cannot be verified by a call)"
        return f'"{self.constraint}" (verify with {way})'


@dataclass(frozen=True, slots=True)
class Decision:
    """Whether a call may run; when not, its unverified constraints and a sentence for the agent."""

    allowed: bool
    unmet: tuple[Unmet, ...] = ()
    explanation: str = ""

    def __bool__(self) -> bool:
        return self.allowed


class ObservedFacts:
    """``sopbench.evaluation.Oracle`` over what the agent has seen, never over hidden state.

    A constraint's truth is the latest successful answer of a helper of the same name with the same
    arguments when that answer is a boolean (``True``, ``(True, False)``, or the text ``"False"``);
    otherwise it is unknown (None), and the judgement takes it that it may hold.
    """

    goal_permitted = True
    final_state = None

    def __init__(self, calls: Sequence[ToolCall], goal: str) -> None:
        self.calls = calls
        self.goal = goal

    def holds(self, step: int, single: Single, bindings: Mapping[str, Any]) -> bool | None:
        args = single.bind(bindings)
        for call in reversed(self.calls[:step]):
            if call.succeeded and call.name == single.name and _matches(call.arguments, args):
                answer = observed_truth(call.output)
                if answer is not None:
                    return answer
        return None


def observed_truth(output: object) -> bool | None:
    """A helper's answer as a truth value, or None when it is not a yes/no answer."""
    if isinstance(output, tuple) and len(output) == 2 and output[0] is True:
        output = output[1]
    if isinstance(output, bool):
        return output
    if isinstance(output, str) and output.strip() in ("True", "False"):
        return output.strip() == "True"
    return None


def _matches(arguments: Mapping[str, Any], expected: Mapping[str, Any]) -> bool:
    return all(key in arguments and arguments[key] == value for key, value in expected.items())


def checked_call(call: object, where: str) -> ToolCall:
    """``call`` when it is a ``ToolCall`` with a text name and object arguments within the bound on
    JSON from a model; otherwise ``TypeError`` saying what ``where`` holds instead."""
    if not isinstance(call, ToolCall):
        hint = " (build one: ToolCall(name, arguments, output, succeeded))" if isinstance(call, Mapping) else ""
        raise TypeError(f"Guard.check: {where} must be a ToolCall, got {type(call).__name__}{hint}")
    if not isinstance(call.name, str):
        raise TypeError(f"Guard.check: {where}: the name must be text, got {type(call.name).__name__}")
    if not isinstance(call.arguments, Mapping):
        raise TypeError(f"Guard.check: {where}: the arguments must be a mapping, got {type(call.arguments).__name__}")
    try:
        check_json_depth(dict(call.arguments))
    except JsonBoundError as exc:
        raise TypeError(f"Guard.check: {where}: the arguments are {exc}") from None
    return call


class Guard:
    """Decides, before a call runs, whether its SOP was verified by the calls before it.

    ``Guard(sop)`` guards the actions ``sop`` has rules for; build one from your own rules with
    ``Guard.from_rules``, from a domain's catalogue with ``Guard.for_domain``, or for one benchmark
    task with ``Guard.for_task``. ``goal``: the action a task asks for; it is guarded even when read
    only (other read-only actions are never refused: the evaluator does not count them either).
    ``expand`` turns a call into the calls the judgement sees (a domain adds the checks a successful
    call made itself).
    """

    def __init__(self, sop: Sop, *, goal: str | None = None, expand: Expand | None = None) -> None:
        self.sop = sop
        self.goal = goal
        self._expand = expand

    @classmethod
    def from_rules(cls, rules: Iterable[Rule], verifiers: Mapping[str, Expr | None] | None = None) -> Guard:
        """A guard over your own rules; ``verifiers`` says which helpers verify a named constraint
        (``None``: an argument check that needs no helper); a single without one is itself a helper."""
        return cls(Sop({rule.action: rule for rule in rules}, dict(verifiers or {})))

    @classmethod
    def for_domain(cls, domain: str) -> Guard:
        """A guard over every action of a registered domain, each with its default SOP."""
        from sopbench.scoring import procedure_calls, procedure_sop

        return cls(procedure_sop(domain), expand=lambda call: procedure_calls(domain, call))

    @classmethod
    def for_task(cls, task: Task) -> Guard:
        """A guard for one task: its domain's default SOPs, and the task's own SOP for its goal."""
        from sopbench.scoring import procedure_calls, procedure_sop

        domain = task.domain
        return cls(
            procedure_sop(domain, task), goal=task.goal, expand=lambda call: procedure_calls(domain, call)
        )

    def wrap(
        self, func: Callable[..., Any], history: list[ToolCall], *, name: str | None = None
    ) -> Callable[..., Any]:
        """``func`` behind this guard (see ``guard_tool``): refused calls raise ``Refused``."""
        from ._wrap import guard_tool

        return guard_tool(self, func, history, name=name)

    def _calls(self, call: ToolCall) -> list[ToolCall]:
        return [call] if self._expand is None else self._expand(call)

    def check(self, call: ToolCall, history: Sequence[ToolCall] = ()) -> Decision:
        """Whether ``call`` may run after ``history`` (the calls made so far, with their outputs and
        whether they succeeded; a failed call verifies nothing). ``TypeError`` naming the culprit
        when ``call`` or an entry of ``history`` is not a ``ToolCall`` (a dict, None, ...)."""
        checked_call(call, "the call")
        if history is None or isinstance(history, str | bytes | Mapping):
            raise TypeError(f"Guard.check: history must be a list of ToolCall, got {type(history).__name__}")
        done_calls = [checked_call(done, f"history[{i}]") for i, done in enumerate(history)]
        calls: list[ToolCall] = []
        for done in done_calls:
            calls.extend(self._calls(done))
        attempted = self._calls(ToolCall(call.name, call.arguments, None, True, call.step))[0]
        calls.append(attempted)
        position = len(calls) - 1
        facts = ObservedFacts(calls, self.goal or "")
        problem = procedure_problem(calls, position, self.sop, facts)
        if problem is None:
            return Decision(True)
        rule = self.sop.rule(call.name)
        assert rule is not None and rule.expr is not None  # a call without a rule has no problem
        if rule.read_only and call.name != self.goal:
            return Decision(True, explanation=f"read-only {call} runs although {problem}")
        unmet = tuple(self._unmet(rule.expr, calls, attempted))
        explanation = f"{call} was not executed: its SOP is not verified: {problem}."
        if unmet:
            explanation += " Unverified: " + "; ".join(str(u) for u in unmet) + "."
        return Decision(False, unmet, explanation)

    def _unmet(self, expr: Expr, calls: list[ToolCall], attempted: ToolCall) -> Iterable[Unmet]:
        """Each distinct constraint of the rule that, on its own, is not verified before the call."""
        position = len(calls) - 1
        facts = ObservedFacts(calls, self.goal or "")
        seen: set[Single] = set()
        for single in singles(expr):
            if single in seen:
                continue
            seen.add(single)
            alone = Sop({attempted.name: Rule(attempted.name, single)}, self.sop.verifiers, self.sop.unoffered)
            if procedure_problem(calls, position, alone, facts) is None:
                continue
            helpers = Rule(attempted.name, single).required_helpers(attempted.arguments, self.sop.verifiers)
            offered = [h for h in helpers if h.name not in self.sop.unoffered] or helpers
            yield Unmet(format_single(single, attempted.arguments), tuple(offered))
