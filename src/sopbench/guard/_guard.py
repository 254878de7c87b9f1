"""The runtime guard: judge a service call, before it runs, with the evaluator's procedure judgement.

The guard holds an SOP catalogue and answers one question: given the calls made so far (with their
outputs), was the SOP of this next call verified? It asks the per-call part of the evaluator's
``judge_procedure`` (``sopbench.evaluation.next_call_problem``), so a guarded agent and a scored
trace are held to one definition (see ``_decision``). ``Guard.check`` reads a given history afresh;
a ``GuardSession`` keeps one conversation's calls indexed, so its checks do not slow down as the
conversation grows.
"""

from __future__ import annotations

import functools
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sopbench.constraints import Expr, Rule, Sop, singles
from sopbench.evaluation import CallScan, ToolCall
from sopbench.tasks import Task

from ._decision import Decision, checked_call, decide, observed_truth
from ._explain import Explainer
from ._file import read_sop_file
from ._session import GuardSession
from ._wrap import History, guard_tool

Expand = Callable[[ToolCall], list[ToolCall]]

# Lists of calls followed for ``wrap`` and ``execute_tool_calls`` (by identity), the least recently
# used dropped beyond this many.
FOLLOWED_HISTORIES = 64


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
        self._followed: OrderedDict[int, tuple[Sequence[ToolCall], GuardSession]] = OrderedDict()
        self._following = threading.Lock()

    @classmethod
    def from_rules(cls, rules: Iterable[Rule], verifiers: Mapping[str, Expr | None] | None = None) -> Guard:
        """A guard over your own rules; ``verifiers`` says which helpers verify a named constraint
        (``None``: an argument check that needs no helper); a single without one is itself a helper."""
        return cls(Sop({rule.action: rule for rule in rules}, dict(verifiers or {})))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Guard:
        """A guard over the rules of an SOP file (JSON: see ``docs/guard.md``); ``LoadError`` (one
        line naming the file and the place) when it cannot be used."""
        sop, goal = read_sop_file(path)
        return cls(sop, goal=goal)

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

    @functools.cached_property
    def questions(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each helper the SOP names with the parameters it binds: what a session indexes calls by."""
        parts = [part for rule in self.sop.rules.values() for part in singles(rule.expr)]
        parts += [part for process in self.sop.verifiers.values() for part in singles(process)]
        return tuple(dict.fromkeys((part.name, tuple(p for p, _ in part.params or ())) for part in parts))

    @functools.cached_property
    def explainer(self) -> Explainer:
        """How a session lists a refusal's unverified parts, worked out once per rule of the SOP."""
        return Explainer(self.sop)

    def session(self, history: Iterable[ToolCall] = ()) -> GuardSession:
        """A new conversation under this guard (starting after ``history``): ``check`` each call
        before it runs, ``record`` it after; each check costs the same at any length."""
        return GuardSession(self, history)

    def following(self, history: Sequence[ToolCall]) -> GuardSession:
        """The session that follows the list ``history`` (one per list, shared by every tool wrapped
        with it), brought up to date with it."""
        if type(history) is not list and (
            isinstance(history, str | bytes) or not isinstance(history, Sequence)
        ):
            raise TypeError(
                f"guard.wrap: history must be a list of ToolCall or a GuardSession, got {type(history).__name__}"
            )
        key = id(history)
        with self._following:  # guards are shared between threads (one list each)
            followed = self._followed.get(key)
            if followed is None:
                # The list is kept with its session, so that its id is not another list's meanwhile.
                followed = self._followed[key] = history, GuardSession(self)
                while len(self._followed) > FOLLOWED_HISTORIES:
                    self._followed.popitem(last=False)
            else:
                self._followed.move_to_end(key)
        session = followed[1]
        session.sync(history)
        return session

    def wrap(
        self, func: Callable[..., Any], history: History, *, name: str | None = None
    ) -> Callable[..., Any]:
        """``func`` behind this guard (see ``guard_tool``): refused calls raise ``Refused``;
        ``history`` is a list of calls or a ``GuardSession``."""
        return guard_tool(self, func, history, name=name)

    def expand(self, call: ToolCall) -> list[ToolCall]:
        """``call`` as the judgement reads it (for a domain: with the checks it made itself)."""
        return [call] if self._expand is None else self._expand(call)

    def attempted(self, call: ToolCall) -> ToolCall:
        """``call``, not yet run, as the judgement reads it."""
        return self.expand(ToolCall(call.name, call.arguments, None, True, call.step))[0]

    def check(self, call: ToolCall, history: Sequence[ToolCall] = ()) -> Decision:
        """Whether ``call`` may run after ``history`` (the calls made so far, with their outputs and
        whether they succeeded; a failed call verifies nothing). It reads the whole history each
        time; a ``session()`` gives the same answers at a cost that does not grow with it.
        ``TypeError`` naming the culprit when ``call`` or an entry of ``history`` is not a
        ``ToolCall`` (a dict, None, ...)."""
        checked_call(call, "the call")
        if history is None or isinstance(history, str | bytes | Mapping):
            raise TypeError(f"Guard.check: history must be a list of ToolCall, got {type(history).__name__}")
        calls: list[ToolCall] = []
        for i, done in enumerate(history):
            calls.extend(self.expand(checked_call(done, f"history[{i}]")))
        return decide(self.sop, self.goal, call, self.attempted(call), CallScan(calls, answer=observed_truth))
