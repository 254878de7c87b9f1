"""How a refusal lists its unverified parts (``Unmet``) and writes them for the agent: ``Explainer``,
with what does not depend on the call worked out once per rule of an SOP.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sopbench.constraints import Expr, HelperCall, Rule, Single, Sop, format_single, format_value, singles
from sopbench.evaluation import KeptTexts, value_key


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


# One helper a part of a rule suggests: its name and, per parameter, the call's variable that gives
# its value (a parameter whose variable the call does not bind is left out, as ``Single.bind`` does).
_Suggestion = tuple[str, tuple[tuple[str, str], ...]]


@dataclass(frozen=True, slots=True)
class _Part:
    """A distinct single of a rule, ready to be listed as unverified: its text's pieces and the
    helpers it suggests; ``plain`` False when it binds a literal or a parameter twice (then it is
    listed the long way, as ``_decision._unmet`` lists it). ``quick``: for a part whose helpers have
    names of their own (so that no two of them can be one helper call, whatever the values), the
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
    ``shown`` renders the values of ``variables`` (at the positions ``shown`` lists; the templates
    may number a wider list of values, a rule's); ``suggested``: per helper, its name and, per
    parameter, the position of its variable's value."""

    variables: tuple[str, ...]
    constraint: str
    text: str
    suggested: tuple[tuple[str, tuple[str, ...], tuple[int, ...]], ...]
    shown: tuple[int, ...]

    def helpers(self, values: Sequence[Any]) -> tuple[HelperCall, ...]:
        """The helpers to suggest, bound to ``values`` (numbered as the templates number them)."""
        return tuple(
            [
                HelperCall(name, tuple(zip(keys, [values[i] for i in positions], strict=True)))
                for name, keys, positions in self.suggested
            ]
        )


class Explainer:
    """A refusal's unverified parts (``Unmet``) and their text, as ``_decision._unmet`` lists them,
    with what does not depend on the call (which singles a rule has, which helpers each suggests and
    how their parameters are bound) worked out once per rule, so that a refusal pays only for its own
    values."""

    def __init__(self, sop: Sop) -> None:
        self.sop = sop
        self._plans: dict[int, tuple[Rule, _RulePlan]] = {}

    def unmet(
        self, rule: Rule, arguments: Mapping[str, Any], alone: Callable[[Expr], bool]
    ) -> tuple[tuple[Unmet, ...], str]:
        """The parts of ``rule`` not verified on their own for a call with ``arguments``, and their
        text (``"; ".join(str(u) for u in unmet)``)."""
        plan = self._rule_plan(rule)
        if plan.variables is not None:
            try:
                values = [arguments[v] for v in plan.variables]
            except KeyError:  # a variable the call does not bind: written part by part below
                pass
            else:
                missing = tuple([i for i, part in enumerate(plan.parts) if not alone(part.single)])
                return plan.listing(missing).unmet(values)
        return self._unmet_by_part(plan.parts, arguments, alone)

    def _unmet_by_part(
        self, parts: tuple[_Part, ...], arguments: Mapping[str, Any], alone: Callable[[Expr], bool]
    ) -> tuple[tuple[Unmet, ...], str]:
        unmet: list[Unmet] = []
        texts: list[str] = []
        seen: dict[str, str] = {}  # variable -> its value rendered (parts share the call's variables)
        for part in parts:
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
                    unmet.append(Unmet(quick.constraint.format(*rendered), quick.helpers(values)))
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

    def _rule_plan(self, rule: Rule) -> _RulePlan:
        known = self._plans.get(id(rule))
        if known is not None and known[0] is rule:
            return known[1]
        parts = tuple(self._part(single) for single in dict.fromkeys(singles(rule.expr)))
        plan = _RulePlan(parts)
        self._plans[id(rule)] = rule, plan
        return plan

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
        quick = (
            _quick(head, params, offered, _positions(params, offered))
            if plain and len({name for name, _ in offered}) == len(offered)
            else None
        )
        return _Part(single, plain, head, tuple(params), offered, quick)


class _RulePlan:
    """A rule's parts and, when every part is written from templates (``_Quick``), the call's
    variables they read together (``variables``; else None) and, per set of unverified parts met so
    far, their listing: a refusal renders each value it shows once and fills one template."""

    __slots__ = ("parts", "variables", "_quick", "_listings")

    def __init__(self, parts: tuple[_Part, ...]) -> None:
        self.parts = parts
        self.variables: tuple[str, ...] | None = None
        self._quick: tuple[_Quick, ...] = ()
        self._listings: dict[tuple[int, ...], _Listing] = {}
        if all(part.quick is not None for part in parts):
            self.variables = tuple(
                dict.fromkeys(v for part in parts for v in part.quick.variables)  # type: ignore[union-attr]
            )
            at = {v: i for i, v in enumerate(self.variables)}
            self._quick = tuple(_quick(part.head, part.params, part.suggestions, at) for part in parts)

    def listing(self, missing: tuple[int, ...]) -> _Listing:
        """How the parts at ``missing`` (positions in ``parts``) are listed, as templates over the
        values of ``variables``."""
        known = self._listings.get(missing)
        if known is None:
            quick = [self._quick[i] for i in missing]
            shown = tuple(sorted({i for q in quick for i in q.shown}))
            known = self._listings[missing] = _Listing(tuple(quick), shown, "; ".join(q.text for q in quick))
        return known


class _Listing:
    """Some parts of a rule, listed as unverified from their templates (over a rule's ``variables``):
    ``shown``, the positions of the values their text shows; ``text``, the whole listing's.

    The parts' helpers are bound once per listing: parts that suggest the same helper with the same
    values (``get_account_balance(username=...)`` verifies several) share one ``HelperCall``, and
    helpers bound to the same values one argument tuple.

    A listing is a function of the values it shows alone, and a conversation refuses the same parts
    for the same user again and again (an agent retries; other actions share the parts): the
    listings of values of plain types are kept (a few hundred per listing), so that a refusal
    repeated builds neither its texts nor its ``Unmet`` again."""

    __slots__ = ("shown", "text", "_bound", "_helpers", "_parts", "_made")

    def __init__(self, parts: tuple[_Quick, ...], shown: tuple[int, ...], text: str) -> None:
        self.shown = shown
        self.text = text
        bound: dict[tuple[tuple[str, int], ...], int] = {}  # (parameter, value's position)s -> number
        helpers: dict[tuple[str, int], int] = {}  # (name, its arguments' number) -> number
        listed = []
        for quick in parts:
            numbers = []
            for name, keys, positions in quick.suggested:
                arguments = bound.setdefault(tuple(zip(keys, positions, strict=True)), len(bound))
                numbers.append(helpers.setdefault((name, arguments), len(helpers)))
            listed.append((quick.constraint, tuple(numbers)))
        self._bound = tuple(bound)
        self._helpers = tuple(helpers)
        self._parts = tuple(listed)
        self._made: KeptTexts[tuple[tuple[Unmet, ...], str]] = KeptTexts(_LISTINGS_KEPT)

    def unmet(self, values: list[Any]) -> tuple[tuple[Unmet, ...], str]:
        key = value_key([values[i] for i in self.shown])
        if key is not None:
            made = self._made.get(key)
            if made is not None:
                return made
        rendered = [""] * len(values)
        for i in self.shown:
            rendered[i] = format_value(values[i])
        arguments = [tuple([(p, values[i]) for p, i in pairs]) for pairs in self._bound]
        helpers = [HelperCall(name, arguments[bound]) for name, bound in self._helpers]
        listed = tuple(
            [
                Unmet(constraint.format(*rendered), tuple([helpers[h] for h in suggested]))
                for constraint, suggested in self._parts
            ]
        )
        made = listed, self.text.format(*rendered)
        return made if key is None else self._made.keep(key, made)


# Listings kept per set of unverified parts of a rule.
_LISTINGS_KEPT = 256


def _positions(params: tuple[tuple[str, str], ...], suggestions: tuple[_Suggestion, ...]) -> dict[str, int]:
    """The variables a part reads (its own, then its helper's), numbered in that order."""
    variables = dict.fromkeys([v for _, v in params] + [v for _, bound in suggestions for _, v in bound])
    return {v: i for i, v in enumerate(variables)}


def _quick(
    head: str,
    params: tuple[tuple[str, str], ...],
    suggestions: tuple[_Suggestion, ...],
    at: Mapping[str, int],
) -> _Quick:
    """The templates of a part with plain parameter maps and helpers of distinct names, for a call
    that binds every variable the part reads (what ``format_single`` and ``Unmet`` write),
    numbering each variable's value as ``at`` does."""
    variables = tuple(_positions(params, suggestions))
    constraint = _escaped(head) + ", ".join(f"{_escaped(p)}={{{at[v]}}}" for p, v in params) + ")"
    helpers = [
        _escaped(name) + "(" + ", ".join(f"{_escaped(p)}={{{at[v]}}}" for p, v in bound) + ")"
        for name, bound in suggestions
    ]
    text = _unmet_text(constraint, helpers)
    suggested = tuple(
        (name, tuple(p for p, _ in bound), tuple(at[v] for _, v in bound)) for name, bound in suggestions
    )
    return _Quick(variables, constraint, text, suggested, tuple(sorted({at[v] for v in variables})))


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
