"""Rules (the SOP of one service action) and SOP catalogues."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._codec import ConstraintError, check_acyclic, validate
from ._expr import Expr, Single, rename, singles
from ._render import format_call


@dataclass(frozen=True, slots=True)
class HelperCall:
    """A helper identity: the helper's name plus its bound parameter values.

    ``HelperCall("check_user", {"username": "alice"})`` is not the same helper as the one for ``bob``.
    """

    name: str
    args: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, name: str, args: Mapping[str, Any] | None = None) -> HelperCall:
        return cls(name, tuple((args or {}).items()))

    @property
    def arguments(self) -> dict[str, Any]:
        return dict(self.args)

    def __str__(self) -> str:
        return format_call(self.name, self.arguments)


@dataclass(frozen=True, slots=True)
class Rule:
    """The SOP of one service action: its constraint expression over the action's parameters.

    ``params`` are the action's parameter names (the variables the expression may bind).
    ``read_only`` marks actions without side effects: an extra call of one never fails a trace.
    """

    action: str
    expr: Expr | None
    params: tuple[str, ...] = ()
    read_only: bool = False

    def validate(self) -> None:
        validate(self.expr, self.params, path=f"{self.action}.constraints")

    def required_helpers(
        self, bindings: Mapping[str, Any], verifiers: Mapping[str, Expr | None] | None = None
    ) -> list[HelperCall]:
        """The helper identities whose calls verify this rule for one call's argument ``bindings``.

        ``verifiers`` maps a constraint name to the helper expression that verifies it (a domain's
        verification processes and links); a single without an entry is itself a helper. Every
        alternative of an Or is listed; duplicates are removed, first occurrence kept.
        """
        return helper_calls(self.expr, bindings, verifiers or {})


def helper_calls(
    expr: Expr | None, bindings: Mapping[str, Any], verifiers: Mapping[str, Expr | None]
) -> list[HelperCall]:
    """``Rule.required_helpers`` of a rule ``expr``: the helper identities whose calls verify it."""
    return _bound_helpers(_helper_plan(expr, verifiers), bindings)


# How the helpers of an expression are found, whatever the bindings: each single it names (left to
# right, argument checks left out) with the helpers of its verification process, or None when the
# single is itself the helper.
_HelperPlan = tuple[tuple[Single, tuple[Single, ...] | None], ...]


def _helper_plan(expr: Expr | None, verifiers: Mapping[str, Expr | None]) -> _HelperPlan:
    plan: list[tuple[Single, tuple[Single, ...] | None]] = []
    for single in singles(expr):
        process = verifiers.get(single.name)
        if single.name in verifiers and process is None:
            continue  # verified without a helper (an argument check)
        # A process is a tree of helper calls (never of constraints, even a same-named one).
        plan.append((single, None if process is None else tuple(singles(process))))
    return tuple(plan)


def _bound_helpers(plan: _HelperPlan, bindings: Mapping[str, Any]) -> list[HelperCall]:
    found: list[HelperCall] = []  # a list: an argument value may be unhashable (a list from a model)
    for single, process in plan:
        if process is None:
            helper = HelperCall(single.name, tuple(single.bind(bindings).items()))
            if helper not in found:
                found.append(helper)
            continue
        args = single.bind(bindings)
        for part in process:
            helper = HelperCall(part.name, tuple(part.bind(args).items()))
            if helper not in found:
                found.append(helper)
    return found


def _offered(plan: _HelperPlan, unoffered: frozenset[str]) -> _HelperPlan:
    kept: list[tuple[Single, tuple[Single, ...] | None]] = []
    for single, process in plan:
        if process is None:
            if single.name not in unoffered:
                kept.append((single, None))
        else:
            kept.append((single, tuple(part for part in process if part.name not in unoffered)))
    return tuple(kept)


# Expressions whose helper plans a catalogue keeps (its rules' parts and processes are far fewer).
_SUGGESTION_PLANS = 4096


@dataclass(frozen=True)
class Sop:
    """A catalogue of rules (action -> Rule) and of how each constraint is verified.

    ``verifiers[c]`` is the expression of helper calls that verify constraint ``c`` (written in
    ``c``'s parameter names), or ``None`` when ``c`` needs no helper (a pure argument check).
    A single naming neither a verifier key nor anything else is taken to be a helper tool.
    """

    rules: Mapping[str, Rule]
    verifiers: Mapping[str, Expr | None] = field(default_factory=dict)
    # Helpers no agent is given (published: internal_get_database): they still verify when called,
    # but explanations never tell an agent to call them.
    unoffered: frozenset[str] = frozenset()
    # Expression (by identity, kept alive with it) -> its helper plan with the helpers no agent is
    # offered left out: worked out once, as a guard's explanations ask about the same parts.
    _suggestions: dict[int, tuple[Expr | None, _HelperPlan]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for action, rule in self.rules.items():
            if rule.action != action:
                raise ConstraintError(f"rules[{action!r}]", f"rule is for {rule.action!r}")

    def validate(self) -> None:
        """Check parameter maps and that no helper (transitively) requires itself."""
        for rule in self.rules.values():
            rule.validate()
        edges: dict[str, set[str]] = {}
        for rule in self.rules.values():
            edges[rule.action] = set(self._helper_names(rule.expr))
        for name, process in self.verifiers.items():
            edges.setdefault(name, set()).update(self._helper_names(process))
        check_acyclic(edges)

    def _helper_names(self, expr: Expr | None) -> Iterable[str]:
        return (s.name for s in singles(expr))

    def rule(self, action: str) -> Rule | None:
        return self.rules.get(action)

    def suggested_helpers(self, expr: Expr | None, bindings: Mapping[str, Any]) -> list[HelperCall]:
        """The helper calls to suggest for verifying ``expr`` with ``bindings``: those an agent is
        offered (all of them when none is)."""
        plan = self._suggestion_plan(expr)
        return _bound_helpers(plan, bindings)

    def _suggestion_plan(self, expr: Expr | None) -> _HelperPlan:
        """``_helper_plan`` of ``expr`` with the helpers no agent is offered left out (unless every
        helper is one): whether a helper is offered depends on its name alone, not on the bindings."""
        cache = self._suggestions
        known = cache.get(id(expr))
        if known is not None and known[0] is expr:
            return known[1]
        plan = _helper_plan(expr, self.verifiers)
        if self.unoffered:
            offered = _offered(plan, self.unoffered)
            if any(process is None or process for _, process in offered):
                plan = offered
        if len(cache) >= _SUGGESTION_PLANS:
            cache.clear()  # expressions not of this catalogue's rules, asked about one by one
        cache[id(expr)] = expr, plan
        return plan

    def verifier(self, single: Single) -> Expr | None:
        """The helper expression verifying ``single``, in the caller's variable names."""
        return rename(self.verifiers[single.name], single.param_map)
