"""One conversation under a guard: its calls kept indexed, so a check costs the same at any length.

``Guard.check(call, history)`` reads the whole history again for every call; a ``GuardSession``
keeps what the judgement asks of it (a ``sopbench.evaluation.CallIndex`` of the calls as the
judgement reads them) and brings it up to date one call at a time, with verdicts and explanations
identical to ``Guard.check`` over the same history.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from sopbench.constraints import Sop
from sopbench.domains import succeeded
from sopbench.evaluation import CallIndex, ToolCall

from ._decision import Decision, checked_call, decide, observed_truth
from ._explain import Explainer


class Judge(Protocol):
    """What a session needs of its guard (``Guard`` is one): the SOP, the goal, how a call is read."""

    @property
    def sop(self) -> Sop: ...

    @property
    def goal(self) -> str | None: ...

    @property
    def questions(self) -> tuple[tuple[str, tuple[str, ...]], ...]: ...

    @property
    def explainer(self) -> Explainer: ...

    def expand(self, call: ToolCall) -> list[ToolCall]: ...

    def attempted(self, call: ToolCall) -> ToolCall: ...


_NO_RESULT: Any = object()


class GuardSession:
    """The guard's state for one conversation (one agent episode, one MCP session): ``check`` a call
    before it runs, ``record`` it once it has run. Build one with ``guard.session()``.

    Its cost: each recorded call is read once (the domain's expansion included) and indexed by its
    name and bound arguments; memory grows by a few list entries per call. A check is a handful of
    binary searches in the calls of the helpers its SOP names, whatever came before.
    """

    def __init__(self, guard: Judge, history: Iterable[ToolCall] = ()) -> None:
        self.guard = guard
        self._history: list[ToolCall] = []
        self._calls = self._new_index()
        if history is None or isinstance(history, str | bytes | Mapping):
            raise TypeError(
                f"guard.session: history must be a list of ToolCall, got {type(history).__name__}"
            )
        self._follow(list(history), 0, "guard.session")

    def _new_index(self) -> CallIndex:
        calls = CallIndex(answer=observed_truth)
        for name, keys in self.guard.questions:
            calls.expect(name, keys)
        return calls

    def __len__(self) -> int:
        return len(self._history)

    @property
    def history(self) -> tuple[ToolCall, ...]:
        """The calls recorded so far, in order."""
        return tuple(self._history)

    def check(self, call: ToolCall) -> Decision:
        """Whether ``call`` may run now: ``guard.check(call, session.history)``, without reading the
        history again. ``TypeError`` naming what is wrong when ``call`` is not a ``ToolCall``."""
        checked_call(call, "the call", "GuardSession.check")
        guard = self.guard
        return decide(guard.sop, guard.goal, call, guard.attempted(call), self._calls, guard.explainer)

    def record(self, call: ToolCall, result: Any = _NO_RESULT) -> ToolCall:
        """Add a call that has run. Given its ``result``, ``call`` is recorded with it as output and
        as succeeded unless the result says it failed (``False``, ``None``, or a pair whose first
        element is false); without one, ``call`` is recorded as it is (its output and ``succeeded``:
        ``ToolCall(name, arguments, None, False)`` for a call that raised). Returns what was recorded.
        ``TypeError`` naming what is wrong when ``call`` is not a ``ToolCall``: nothing is recorded."""
        checked_call(call, "the call", "GuardSession.record")
        return self._add(call, result)

    def _record_checked(self, call: ToolCall, result: Any) -> ToolCall:
        """``record(call, result)`` for a call this session has just checked (so its type and
        arguments are known to be good): what a guarded tool records once it has run."""
        return self._add(call, result)

    def _add(self, call: ToolCall, result: Any = _NO_RESULT) -> ToolCall:
        if result is not _NO_RESULT:
            call = ToolCall(call.name, call.arguments, result, succeeded(result), call.step)
        self._history.append(call)
        for read in self.guard.expand(call):
            self._calls.append(read)
        return call

    def sync(self, history: Sequence[ToolCall]) -> None:
        """Follow ``history``, a list the caller appends to: the calls added since the last look are
        recorded; when the calls already recorded are no longer its beginning (it was cleared,
        shortened or edited), the session starts over from it. A list whose length and last call
        are as last seen is taken to be unchanged (that look costs the same at any length): to
        change an earlier call, give the guard a new list."""
        known = len(self._history)
        if len(history) == known and (not known or history[-1] is self._history[-1]):
            return  # as last seen (only this session's wrappers append to it): nothing to read
        if len(history) >= known:
            try:
                same = list(history[:known]) == self._history  # identical calls compare at C speed
            except Exception:  # noqa: BLE001 - an edited entry whose output cannot be compared
                same = False
            if same:
                self._follow(history, known, "GuardSession.sync")
                return
        self._history = []
        self._calls = self._new_index()
        self._follow(history, 0, "GuardSession.sync")

    def _follow(self, history: Sequence[ToolCall], start: int, caller: str) -> None:
        for i in range(start, len(history)):
            self._add(checked_call(history[i], f"history[{i}]", caller))
