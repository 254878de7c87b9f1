"""Typed inputs and outputs of the trace evaluator."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from sopbench.constraints import Single, format_call


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of a trace, as it happened.

    ``succeeded`` is False when the call raised, was rejected, or returned a failure value: such a
    call verifies nothing and does not execute a service. ``step`` is the label explanations give
    the call (for an episode: the index of the message holding its output); None: its 1-based
    position in the trace.
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    output: Any = None
    succeeded: bool = True
    step: int | None = None

    def __str__(self) -> str:
        return format_call(self.name, self.arguments)


@dataclass(frozen=True)
class Trace:
    """What an agent did: its tool calls in order, the final state, and what it said."""

    calls: tuple[ToolCall, ...]
    final_state: Any = None
    messages: tuple[str, ...] = ()

    def __init__(
        self, calls: Iterable[ToolCall], final_state: Any = None, messages: Iterable[str] = ()
    ) -> None:
        object.__setattr__(self, "calls", tuple(calls))
        object.__setattr__(self, "final_state", final_state)
        object.__setattr__(self, "messages", tuple(messages))


class Oracle(Protocol):
    """Evaluator-only facts about one episode. The policy under test never sees them.

    ``goal``: the service the user asked for; ``goal_permitted``: whether it may be executed;
    ``final_state``: the state the episode must end in; ``holds(step, single, bindings)``: the truth
    of one positive constraint instance at the moment of call ``step`` (before it runs), or None
    when the oracle does not know it (a runtime guard, which sees only what the agent saw: the
    procedure judgement then takes it that the constraint may hold).
    """

    @property
    def goal(self) -> str: ...

    @property
    def goal_permitted(self) -> bool: ...

    @property
    def final_state(self) -> Any: ...

    def holds(self, step: int, single: Single, bindings: Mapping[str, Any]) -> bool | None: ...


@dataclass(frozen=True)
class StaticOracle:
    """An oracle from plain facts: ``facts[(constraint name, frozen bound args)] -> bool``.

    Facts are the same at every step; a constraint without a fact is taken to hold.
    """

    goal: str
    goal_permitted: bool
    final_state: Any = None
    facts: Mapping[tuple[str, tuple[tuple[str, Any], ...]], bool] = field(default_factory=dict)

    def holds(self, step: int, single: Single, bindings: Mapping[str, Any]) -> bool:
        key = (single.name, tuple(sorted(single.bind(bindings).items())))
        return self.facts.get(key, True)

    @staticmethod
    def fact(name: str, **args: Any) -> tuple[str, tuple[tuple[str, Any], ...]]:
        return (name, tuple(sorted(args.items())))


@dataclass(frozen=True, slots=True)
class UnverifiedConstraint:
    """Which part of a rule a failed procedure left unverified (what breakdowns count).

    ``kind``: ``Single``, ``negation`` (a negated single), ``And``, ``Or``, ``Chain``, ``Gate``, or
    ``unclassified`` when nothing structured is known (scorers may add kinds for procedure
    failures that are not an unverified constraint, such as an invalid call). It is the innermost expression whose
    verification failed: a single that was never verified; an Or (or Gate) none of whose true
    branches was verified; a Chain verified out of order (an And or Chain with a missing child
    reports that child). ``depth``: 0 for the rule's own expression, one more per enclosing group
    (None when unclassified).
    """

    kind: str
    depth: int | None


UNCLASSIFIED = UnverifiedConstraint("unclassified", None)


@dataclass(frozen=True, slots=True)
class Judgement:
    """One of the three judgements: whether it passed, and why not (sentences a user can act on).

    ``unverified``: for a failed procedure, the constraint each failing call left unverified (it
    does not take part in equality: two judgements with the same verdict and explanations are equal).
    """

    passed: bool
    explanations: tuple[str, ...] = ()
    unverified: tuple[UnverifiedConstraint, ...] = field(default=(), compare=False)


# A passed judgement has nothing to say: one shared, immutable instance.
PASSED = Judgement(True)


@dataclass(frozen=True, slots=True)
class Verdict:
    """Joint acceptance: a trace passes only when all three judgements pass."""

    database: Judgement
    permission: Judgement
    procedure: Judgement
    notes: tuple[str, ...] = ()  # observations that do not fail the trace

    @property
    def passed(self) -> bool:
        return self.database.passed and self.permission.passed and self.procedure.passed

    @property
    def explanations(self) -> tuple[str, ...]:
        return self.database.explanations + self.permission.explanations + self.procedure.explanations

    def as_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "database": self.database.passed,
            "permission": self.permission.passed,
            "procedure": self.procedure.passed,
            "explanations": list(self.explanations),
            "notes": list(self.notes),
        }
