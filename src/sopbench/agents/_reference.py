"""The reference agent: follows the goal's SOP using only what an agent is shown.

It reads the offered tools, the SOP of each offered action and how each constraint is checked
(``EpisodeSetup.sops`` / ``verifiers``, the structured form of the prompt), the user's known values
(what the user answers when asked; ``user_prompt`` states them too), the constraint parameters the
prompt states, and the tool results it gets back. It never reads the database, the task's graph,
its expanded constraints or its expected outcome, and never asks an oracle.

Procedure: walk the goal's SOP in order. A constraint is checked by making the calls that verify
it (logging in for ``logged_in_user``, ``get_account_balance`` for a balance, ...), each only after
that helper's own SOP was verified the same way; its truth is then read from the results with the
constraint's meaning (the domain's check, fed with the results the agent saw, never with the
database). An Or is settled by checking its branches in order until one holds. When every
constraint holds the agent executes the goal; otherwise it declines, saying which constraint fails.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from sopbench.constraints import And, Chain, Expr, Single, python_literal, singles
from sopbench.domains import Context, ToolKind, get_domain

from ._baselines import exit_turn, known_arguments
from ._protocol import Agent, AgentTurn, EpisodeSetup, Message, ToolCallRequest, register_agent


@dataclass(frozen=True, slots=True)
class _Call:
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Say:
    text: str


@dataclass(frozen=True, slots=True)
class Observation:
    text: str
    value: Any  # the text read as a Python literal when it is one, else the text

    @property
    def ok(self) -> bool:
        return not (self.value is False or self.text.startswith("Error") or _is_exception(self.text))


def _is_exception(text: str) -> bool:
    head = text.split(":", 1)[0]
    return head.endswith(("Error", "Exception")) and " " not in head


def read_output(text: str) -> Observation:
    try:
        value = python_literal(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        value = text
    return Observation(text, value)


class _Need(Exception):
    """A check needs a tool result the agent has not seen yet."""

    def __init__(self, tool: str, arguments: dict[str, Any]) -> None:
        super().__init__(tool)
        self.call = _Call(tool, arguments)


def _key(tool: str, arguments: Mapping[str, Any]) -> str:
    return tool + json.dumps(arguments, sort_keys=True, default=str)


Plan = Generator[Any, Observation | None, Any]


@register_agent("reference")
class Reference(Agent):
    """Verifies prerequisites in order, settles an Or by checking it, executes the goal only when
    every constraint holds, and otherwise declines with the reason."""

    name = "reference"

    async def start(self, setup: EpisodeSetup) -> None:
        self.setup = setup
        self.domain = get_domain(setup.domain)
        self.offered = {tool["function"]["name"]: tool["function"]["parameters"] for tool in setup.tools}
        self.known = setup.task.user_known
        parameters = dict(self.domain.catalogue.default_parameters)
        parameters.update(setup.task.constraint_parameters)
        self.session = self.domain.new_session()
        self.sections = _Sections(self)
        self.context = Context(self.sections, parameters, self.session, self._recall, self.domain.options)
        self.seen: dict[str, Observation] = {}
        self.in_progress: set[str] = set()
        self.ids = itertools.count()
        self.pending: _Call | None = None
        self.plan = self._procedure()
        self.finished = False

    async def act(self, messages: Sequence[Message]) -> AgentTurn:
        if self.finished:
            return exit_turn()
        answer = None
        if self.pending is not None:
            answer = read_output(str(_last_tool_content(messages)))
        step = self.plan.send(answer) if self.pending is not None else next(self.plan)
        if isinstance(step, _Call):
            self.pending = step
            call_id = f"call_{next(self.ids)}"
            return AgentTurn(tool_calls=(ToolCallRequest(call_id, step.tool, json.dumps(step.arguments)),))
        self.pending = None
        self.finished = True
        return AgentTurn(content=step.text)

    # ---- the procedure ----------------------------------------------------------------------------
    def _procedure(self) -> Plan:
        goal = self.setup.task.goal
        arguments = known_arguments(self.setup, goal, self.known)
        holds, why = yield from self._verify(self.setup.sops.get(goal), arguments)
        if not holds:
            yield _Say(f"I cannot carry out {goal}: {why}.")
            return
        result = yield from self._call(goal, arguments)
        if result is None or not result.ok:
            yield _Say(
                f"I tried {goal} but it did not go through ({'not callable' if result is None else result.text})."
            )
            return
        yield _Say(f"Done: {goal} went through.")

    def _verify(
        self, expr: Expr | None, bindings: Mapping[str, Any]
    ) -> Generator[Any, Any, tuple[bool, str]]:
        """Whether ``expr`` holds, checked in order with tool calls; the reason when it does not."""
        if expr is None:
            return True, ""
        if isinstance(expr, Single):
            return (yield from self._verify_single(expr, bindings))
        if isinstance(expr, And | Chain):
            for child in expr.children:
                holds, why = yield from self._verify(child, bindings)
                if not holds:
                    return False, why
            return True, ""
        reasons = []
        for child in expr.children:  # Or / Gate: the first branch that holds settles it
            holds, why = yield from self._verify(child, bindings)
            if holds:
                return True, ""
            reasons.append(why)
        return False, " and ".join(reasons) or "no alternative holds"

    def _verify_single(
        self, single: Single, bindings: Mapping[str, Any]
    ) -> Generator[Any, Any, tuple[bool, str]]:
        arguments = single.bind(bindings)
        wording = self.domain.describe_single(single, self.context.params)
        process = self.setup.verifiers.get(single.name)
        if process is not None:
            # A process parameter the constraint does not bind (a login's identification) is
            # one the user knows under its own name.
            done = yield from self._run_process(process, {**self.known, **arguments})
            if not done:
                return False, f'I could not check "{wording}"'
        value = yield from self._value(single.name, arguments)
        if value is _UNSEEABLE and process is not None:
            # The wording covers data no offered tool shows (every account's loans): the agent
            # goes by the prescribed check, i.e. by what it showed of each record it was made
            # about (the user's own loans); a record it showed nothing of does not count.
            value = self._narrowed_value(single.name, arguments, process)
        if value is None:
            return False, f'I could not establish "{wording}"'
        if value is _UNSEEABLE:
            return True, ""  # nothing the agent can see speaks against it
        holds = bool(value) != single.negated
        return holds, "" if holds else f'"{wording}" does not hold'

    def _narrowed_value(self, name: str, arguments: dict[str, Any], process: Expr) -> Any:
        """The check over each record the process was made about, from results already seen
        (no call is made); every such record must agree, else ``_UNSEEABLE``."""
        sections = self.sections
        values = []
        for subject in _process_subjects(process, {**self.known, **arguments}):
            sections.within = (subject,)
            try:
                values.append(self.domain.checks[name](self.context, **arguments))
            except Exception:  # noqa: BLE001 - needs a result not seen (or cannot conclude): no say
                continue
            finally:
                sections.within = ()
        return all(values) if values else _UNSEEABLE

    def _run_process(self, process: Expr, arguments: Mapping[str, Any]) -> Generator[Any, Any, bool]:
        """Make the calls of a verification process (an Or: the first way the agent can take)."""
        if not self._checkable(process):
            return True  # only a tool no agent is offered could check it: there is nothing to call
        if isinstance(process, Single):
            result = yield from self._call(process.name, process.bind(arguments))
            return result is not None
        if isinstance(process, And | Chain):
            for child in process.children:
                if not (yield from self._run_process(child, arguments)):
                    return False
            return True
        for child in process.children:
            if self._possible(child, arguments) and (yield from self._run_process(child, arguments)):
                return True
        return False

    def _checkable(self, process: Expr) -> bool:
        return any(single.name in self.offered for single in singles(process))

    def _possible(self, process: Expr, arguments: Mapping[str, Any]) -> bool:
        if isinstance(process, Single):
            return process.name in self.offered and self._complete(process.name, process.bind(arguments))
        if isinstance(process, And | Chain):
            return all(self._possible(c, arguments) for c in process.children)
        return any(self._possible(c, arguments) for c in process.children)

    def _complete(self, tool: str, arguments: Mapping[str, Any]) -> bool:
        required = self.offered[tool].get("required", [])
        return all(name in arguments for name in required)

    def _value(self, name: str, arguments: dict[str, Any]) -> Generator[Any, Any, Any]:
        """A constraint's truth value from what the agent has seen (None: it cannot tell)."""
        check = self.domain.checks.get(name)
        for _ in range(16):
            try:
                if check is not None:
                    return check(self.context, **arguments)
                result = self._recall(name, **arguments)
                return result[1] if isinstance(result, tuple) else result
            except _Need as need:
                seen = yield from self._call(need.call.tool, need.call.arguments)
                if seen is None:
                    return None
            except _Unseeable:
                return _UNSEEABLE
            except Exception:  # noqa: BLE001 - results that do not allow the conclusion
                return None
        return None

    def _recall(self, tool: str, /, **arguments: Any) -> Any:
        """A tool's result as the system would have returned it, rebuilt from the text the agent saw.

        A reader that needs no data (a date conversion) is worked out by the agent itself, as a
        model would in its head: it costs no call.
        """
        seen = self.seen.get(_key(tool, arguments))
        if seen is None and self.sections.within:
            raise _Unseeable(tool)  # narrowed to what was seen (see _narrowed_value)
        if seen is None:
            worked_out = self._work_out(tool, arguments)
            if worked_out is not _UNKNOWN:
                return worked_out
            raise _Need(tool, dict(arguments))
        spec = self.domain.tools.get(tool)
        if spec is not None and spec.kind is ToolKind.READ:
            return (seen.ok, seen.value)
        return seen.value

    def _work_out(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        spec = self.domain.tools.get(tool)
        if spec is None or spec.kind is not ToolKind.READ:
            return _UNKNOWN
        context = Context(_NoData(), self.context.params, {}, _no_call, self.domain.options)
        try:
            return spec.impl(context, **arguments)
        except Exception:  # noqa: BLE001 - it needs data (or fails): only a call can tell
            return _UNKNOWN

    def _call(self, tool: str, arguments: dict[str, Any]) -> Generator[Any, Any, Observation | None]:
        """Call ``tool`` once its own SOP holds; None when the agent cannot or may not call it."""
        key = _key(tool, arguments)
        if key in self.seen:
            return self.seen[key]
        if tool not in self.offered or not self._complete(tool, arguments) or key in self.in_progress:
            return None
        self.in_progress.add(key)
        try:
            holds, _ = yield from self._verify(
                self.setup.sops.get(tool) if tool != self.setup.task.goal else None, arguments
            )
        finally:
            self.in_progress.discard(key)
        if not holds:
            return None
        seen = yield _Call(tool, arguments)
        self.seen[key] = seen
        effect = self.domain.effects.get(tool)
        if effect is not None and seen.ok:
            effect(self.session, **arguments)
        return seen


_UNKNOWN = object()
_UNSEEABLE = object()


class _Unseeable(LookupError):
    """A check reads a part of the database that no offered tool shows."""


class _NoData(dict):
    """A database that has nothing in it: any read fails."""

    def __getitem__(self, key: object) -> NoReturn:
        raise LookupError(key)

    def get(self, key: object, default: object = None) -> NoReturn:
        raise LookupError(key)

    def __iter__(self) -> NoReturn:
        raise LookupError("database")

    def __contains__(self, key: object) -> bool:
        raise LookupError(key)


def _no_call(*_args: object, **_kwargs: object) -> NoReturn:
    raise LookupError("no tool calls while working something out")


class _Sections(dict):
    """The database as far as the agent has seen it: a check that reads a whole section (the hotel's
    ``rooms``) gets it from the offered listing tool named after that section, once called."""

    def __init__(self, agent: Reference) -> None:
        super().__init__()
        self.agent = agent
        self.within: tuple[str, ...] = ()  # records a section is narrowed to (see _verify_single)

    def __getitem__(self, key: str) -> Any:
        agent = self.agent
        readers = [
            tool
            for tool, parameters in agent.offered.items()
            if (tool.endswith(f"_{key}") or f"_{key}_" in tool)
            and not parameters.get("required")
            and tool in agent.domain.tools
            and agent.domain.tools[tool].kind is ToolKind.READ
        ]
        if len(readers) != 1:
            if self.within:
                return dict.fromkeys(self.within)
            raise _Unseeable(key)
        return agent._recall(readers[0])[1]


def _process_subjects(process: Expr, arguments: Mapping[str, Any]) -> tuple[str, ...]:
    """The records a verification process is made about: the string arguments of its calls."""
    found = [v for single in singles(process) for v in single.bind(arguments).values()]
    return tuple(dict.fromkeys(v for v in found if isinstance(v, str)))


def _last_tool_content(messages: Sequence[Message]) -> Any:
    for message in reversed(messages):
        if message.get("role") == "tool":
            return message.get("content")
    return ""
