"""The constraint expression model: immutable, typed, hashable.

An expression is one of ``Single``, ``And``, ``Or``, ``Chain``, ``Gate``, or ``None`` (no constraint,
always true). A ``Single`` names either a constraint (whose truth a domain computes) or a helper tool
(whose result is the truth); its parameter map binds the callee's parameter names to the caller's
variable names. ``None`` params and ``{}`` params are kept apart so that the published encoding
round-trips exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias, overload

from ._literals import python_literal

NEGATION_PREFIX = "not "
LITERAL_PREFIX = "value "

ParamMap: TypeAlias = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Single:
    """One constraint or helper, with its parameter map (callee parameter -> caller variable)."""

    name: str
    params: ParamMap | None = None
    negated: bool = False

    @classmethod
    def of(cls, name: str, params: Mapping[str, str] | None = None, negated: bool = False) -> Single:
        """Build from a plain mapping; a ``"not "`` prefix on ``name`` negates."""
        if name.startswith(NEGATION_PREFIX):
            name, negated = name[len(NEGATION_PREFIX) :], not negated
        return cls(name, None if params is None else tuple(params.items()), negated)

    @property
    def param_map(self) -> dict[str, str]:
        return dict(self.params or ())

    @property
    def positive(self) -> Single:
        return Single(self.name, self.params, False) if self.negated else self

    def bind(self, bindings: Mapping[str, Any], *, require_all: bool = False) -> dict[str, Any]:
        """The callee's arguments for this single, taken from the caller's variable bindings.

        Variables the caller does not bind are left out (with ``require_all``: raise ``KeyError``,
        as the published oracle did); ``"value <literal>"`` maps give the literal.
        """
        args: dict[str, Any] = {}
        for param, var in self.params or ():
            if var.startswith(LITERAL_PREFIX):
                args[param] = python_literal(var[len(LITERAL_PREFIX) :])
            elif require_all or var in bindings:
                args[param] = bindings[var]
        return args


class _Group:
    """Shared behaviour of the four group operators; ``children`` is always a tuple."""

    __slots__ = ("children",)
    op: ClassVar[str] = ""
    children: tuple[Expr, ...]

    def __init__(self, children: Iterable[Expr]) -> None:
        object.__setattr__(self, "children", tuple(children))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Group) and type(other) is type(self) and other.children == self.children

    def __hash__(self) -> int:
        return hash((self.op, self.children))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self.children)!r})"


class And(_Group):
    """Every child must hold; order does not matter."""

    __slots__ = ()
    op = "and"


class Or(_Group):
    """At least one child must hold."""

    __slots__ = ()
    op = "or"


class Chain(_Group):
    """Every child must hold, checked in order (later children presuppose earlier ones)."""

    __slots__ = ()
    op = "chain"


class Gate(_Group):
    """The first child that holds decides (an ordered disjunction; the inverse of a chain)."""

    __slots__ = ()
    op = "gate"


Group: TypeAlias = And | Or | Chain | Gate
Expr: TypeAlias = Single | And | Or | Chain | Gate
GROUP_TYPES: dict[str, type[Group]] = {"and": And, "or": Or, "chain": Chain, "gate": Gate}
_INVERSE: dict[type[Group], type[Group]] = {And: Or, Or: And, Chain: Gate, Gate: Chain}


def Not(expr: Expr | None) -> Expr:  # noqa: N802 - reads as a constructor, like And/Or
    """The logical inverse (De Morgan): singles toggle negation, and<->or, chain<->gate."""
    if expr is None:
        raise ValueError("cannot negate the empty constraint (it is always true)")
    if isinstance(expr, Single):
        return Single(expr.name, expr.params, not expr.negated)
    return _INVERSE[type(expr)](Not(child) for child in expr.children)


def singles(expr: Expr | None) -> Iterator[Single]:
    """Every ``Single`` leaf, left to right."""
    if expr is None:
        return
    if isinstance(expr, Single):
        yield expr
    else:
        for child in expr.children:
            yield from singles(child)


def count_singles(expr: Expr | None) -> int:
    return sum(1 for _ in singles(expr))


def holds(expr: Expr | None, truth: Callable[[Single], bool | None]) -> bool:
    """Evaluate with left-to-right short-circuit; ``truth`` gets the positive single.

    ``truth`` may answer None for a fact it does not know (a runtime guard sees only what the agent
    saw): an unknown single may hold, whichever way it is written (``None != negated`` is true).

    and/chain stop at the first false child, or/gate at the first true one; children after that are
    never asked about (which is what lets a chain guard a check that would fail on missing data).
    """
    if expr is None:
        return True
    if isinstance(expr, Single):
        return truth(expr.positive) != expr.negated
    if isinstance(expr, And | Chain):
        return all(holds(child, truth) for child in expr.children)
    return any(holds(child, truth) for child in expr.children)


@overload
def rename(expr: Expr, outer: Mapping[str, str] | None) -> Expr: ...


@overload
def rename(expr: Expr | None, outer: Mapping[str, str] | None) -> Expr | None: ...


def rename(expr: Expr | None, outer: Mapping[str, str] | None) -> Expr | None:
    """Re-express ``expr`` (written in a callee's parameter names) in the caller's variable names.

    Each map value that the caller's map ``outer`` names is replaced by the caller's variable.
    """
    if expr is None or not outer:
        return expr
    if isinstance(expr, Single):
        if expr.params is None:
            return expr
        return Single(expr.name, tuple((p, outer.get(v, v)) for p, v in expr.params), expr.negated)
    return type(expr)(rename(child, outer) for child in expr.children)
