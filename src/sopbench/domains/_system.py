"""Executable systems: the lenient system agents talk to, and the strict oracle.

The lenient system executes what it is asked, enforcing only each tool's innate check. The strict
oracle wraps a lenient system, keeps the session state (who is logged in, whether the admin password
was given) and enforces a full dependency table (every tool's default SOP, the goal's task SOP)
before delegating. Both evaluate constraint expressions with the published semantics: left-to-right
short-circuit, a single is true when ``(not negated) == value`` where ``value`` is a check's boolean
or the second element of a tool's ``(ok, value)`` pair.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

import orjson

from sopbench._json import JsonBoundError, check_value, decode_bounded
from sopbench.constraints import And, Chain, Expr, Single

from ._mechanism import Context, Domain, ToolKind

OutputFormat = Literal["value", "tuple"]

# Published quirk: the strict oracle updated the session (logged in, admin authenticated) *before*
# checking the credentials, so a wrong password still logged the user in.
SESSION_BEFORE_CREDENTIALS = "session_before_credentials"


def succeeded(raw: Any) -> bool:
    """Whether a tool's return value means success: ``True``, or a pair whose first element is true."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, tuple):
        return bool(raw) and bool(raw[0])
    return raw is not None


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """The result of one tool call as an agent sees it. Never an exception."""

    tool: str
    arguments: Mapping[str, Any]
    raw: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and succeeded(self.raw)

    @property
    def value(self) -> Any:
        return self.raw[1] if isinstance(self.raw, tuple) and len(self.raw) > 1 else self.raw

    def content(self, output_format: OutputFormat = "value") -> str:
        """The text the agent saw: ``str`` of the value (newer runs) or of the whole pair (older runs)."""
        if self.error is not None:
            return self.error
        return str(self.raw if output_format == "tuple" else self.value)


def _detached(raw: Any) -> Any:
    """A result that later calls cannot change: readers return live parts of the database."""
    if isinstance(raw, dict | list) or (
        isinstance(raw, tuple) and any(isinstance(x, dict | list) for x in raw)
    ):
        return copy.deepcopy(raw)
    return raw


_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_PLANS: dict[int, tuple[frozenset[str], tuple[str, ...], dict[str, Any]] | None] = {}


def _keyword_plan(spec: Any) -> tuple[frozenset[str], tuple[str, ...], dict[str, Any]] | None:
    """Parameter names, required names and defaults of a tool taking plain keyword parameters."""
    key = id(spec)
    if key not in _PLANS:
        params = list(spec.signature.parameters.values())
        if all(p.kind in _KEYWORD_KINDS for p in params):
            required = tuple(p.name for p in params if p.default is inspect.Parameter.empty)
            defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
            _PLANS[key] = (frozenset(p.name for p in params), required, defaults)
        else:
            _PLANS[key] = None
    return _PLANS[key]


def tool_not_found_text(name: str) -> str:
    """What an agent is shown when it calls a tool it was not offered (the published wording)."""
    return f"Error: Tool {name} not found."


def tool_not_found(name: str, arguments: Mapping[str, Any] | None = None) -> ToolOutcome:
    return ToolOutcome(name, arguments or {}, error=tool_not_found_text(name))


def parse_arguments(tool: str, arguments: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Arguments as a dict, from a dict or a JSON string; or the error text an agent should see."""
    if isinstance(arguments, Mapping):
        try:
            check_value(dict(arguments))  # stored with the episode: orjson must write it back
        except JsonBoundError as exc:
            return None, f"Error: arguments of {tool} are not valid JSON (JSON {exc})."
        return dict(arguments), None
    if arguments is None or arguments == "":
        return {}, None
    if isinstance(arguments, str | bytes):
        try:
            parsed = decode_bounded(arguments)  # NaN and Infinity read, as the published json did
        except JsonBoundError as exc:
            return None, f"Error: arguments of {tool} are not valid JSON (JSON {exc})."
        except ValueError as exc:
            return None, f"Error: arguments of {tool} are not valid JSON ({exc})."
        if isinstance(parsed, dict):
            return parsed, None
        return None, f"Error: arguments of {tool} must be a JSON object, got {type(parsed).__name__}."
    return None, f"Error: arguments of {tool} must be a JSON object, got {type(arguments).__name__}."


def _snapshot(db: dict[str, Any]) -> Any:
    try:
        return orjson.dumps(db)
    except TypeError:  # a non-string key left by a published quirk (e.g. a None loan key)
        return copy.deepcopy(db)


def _restore(db: dict[str, Any], snapshot: Any) -> None:
    db.clear()
    db.update(orjson.loads(snapshot) if isinstance(snapshot, bytes) else snapshot)


class _Evaluating:
    """Shared constraint evaluation with the published semantics."""

    domain: Domain
    ctx: Context

    def holds(self, expr: Expr | None, arguments: Mapping[str, Any]) -> bool:
        """Truth of ``expr`` for a call with ``arguments``; a check's exception propagates."""
        if expr is None:
            return True
        if isinstance(expr, Single):
            return cast(bool, (not expr.negated) == self.value_of(expr, arguments))
        # Plain loops, not all()/any() over generators: a check that raises StopIteration must
        # surface as StopIteration (as in the published oracle), not as RuntimeError.
        conjunction = isinstance(expr, And | Chain)
        for child in expr.children:
            if self.holds(child, arguments) != conjunction:
                return not conjunction
        return conjunction

    def value_of(self, single: Single, arguments: Mapping[str, Any]) -> Any:
        """The raw truth value of a positive single: a check's result or a tool pair's second element."""
        # A variable the call does not bind raises KeyError, as in the published oracle.
        args = single.bind(arguments, require_all=True)
        check = self.domain.checks.get(single.name)
        result = check(self.ctx, **args) if check is not None else self._invoke_lenient(single.name, args)
        return result if isinstance(result, bool) else result[1]

    # Each system says how a tool-named constraint is evaluated: always on the lenient system.
    _invoke_lenient: Callable[[str, Mapping[str, Any]], Any]

    def close(self) -> None:
        """Break the system's reference cycle (system -> context -> call-back -> system).

        Reference counting then frees a finished system at once instead of leaving its database
        for the cyclic collector. The system must not be used afterwards.
        """
        for part in (self, getattr(self, "lenient", None)):
            if part is not None:
                part.ctx.call = None


class LenientSystem(_Evaluating):
    """The system an agent talks to: executes every call, enforcing only innate checks.

    ``atomic`` (the default) restores the database when a write tool raises half-way; the published
    system kept such partial writes, which replay of recorded trajectories reproduces with
    ``atomic=False``.
    """

    def __init__(
        self,
        domain: Domain,
        database: Mapping[str, Any],
        parameters: Mapping[str, Any] | None = None,
        *,
        copy: bool = True,
        atomic: bool = True,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.domain = domain
        self.options = {**domain.options, **(options or {})}
        self.db: dict[str, Any] = domain.copy_database(database) if copy else database  # type: ignore[assignment]
        self.parameters = dict(domain.catalogue.default_parameters)
        self.parameters.update(parameters or {})
        self.atomic = atomic
        self.session = domain.new_session()  # never updated: innate checks only
        self.ctx = Context(self.db, self.parameters, self.session, self._call, self.options)

    def _call(self, name: str, /, **arguments: Any) -> Any:
        return self.invoke(name, arguments)

    def _invoke_lenient(self, name: str, arguments: Mapping[str, Any]) -> Any:
        return self.invoke(name, arguments)

    def invoke(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Run a tool and return its raw result; raises exactly where the published system raised."""
        spec = self.domain.tools.get(name)
        if spec is None:
            raise AttributeError(f"'{self.domain.system_name}' object has no attribute '{name}'")
        plan = _keyword_plan(spec)
        if plan is not None and plan[0].issuperset(arguments) and all(p in arguments for p in plan[1]):
            # Fast path (the same binding without inspect.Signature.bind, which dominated replays).
            full = {**plan[2], **arguments}
            return self._run_bound(name, spec, full, (), full)
        try:
            bound = spec.signature.bind(**arguments)
        except TypeError:
            spec.impl(self.ctx, **arguments)  # raises the interpreter's own message for this call
            raise
        bound.apply_defaults()
        return self._run_bound(name, spec, bound.arguments, bound.args, bound.kwargs)

    def _run_bound(
        self,
        name: str,
        spec: Any,
        arguments: Mapping[str, Any],
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
    ) -> Any:
        innate_table = self.domain.catalogue.innate
        if name in innate_table:
            innate = innate_table[name]
            if innate is not None and not self.holds(innate, arguments):
                return spec.failure
        elif innate_table:
            return spec.failure  # the published evaluator refuses tools missing from its table
        return spec.impl(self.ctx, *args, **kwargs)

    def execute(self, name: str, arguments: Any, *, offered_only: bool = True) -> ToolOutcome:
        """Run one call from an agent. Never raises: every failure becomes the text the agent sees."""
        spec = self.domain.tools.get(name)
        if spec is None or (offered_only and not spec.offered):
            return tool_not_found(name, arguments if isinstance(arguments, Mapping) else None)
        args, problem = parse_arguments(name, arguments)
        if args is None:
            return ToolOutcome(name, {}, error=problem)
        snapshot = _snapshot(self.db) if self.atomic and spec.kind is ToolKind.WRITE else None
        try:
            return ToolOutcome(name, args, raw=_detached(self.invoke(name, args)))
        except Exception as exc:  # noqa: BLE001 - an agent's bad call must never crash the episode
            if snapshot is not None:
                _restore(self.db, snapshot)
            return ToolOutcome(name, args, error=f"{type(exc).__name__}: {exc}")


def replay_calls(
    system: LenientSystem | StrictSystem,
    calls: Iterable[tuple[str, Mapping[str, Any] | str | None]],
    output_format: OutputFormat | None = None,
) -> list[Any]:
    """Executes recorded calls in order on ``system`` as the environment that recorded them did.

    Each call is ``(name, arguments)``: the arguments are the JSON object the agent sent (the
    system may keep or change it: pass one the caller owns), the text it sent when that was not a
    JSON object (answered with the parse error), or None for a call the environment did not execute
    (it answered that the tool was not found). Every tool of the domain can be called: the caller
    decides what was offered. Returns one outcome per call: with ``output_format``, the text the
    agent was shown; without, whether the call succeeded (cheaper: results are never copied).
    """
    if output_format is not None:
        return [
            tool_not_found_text(name)
            if arguments is None
            else system.execute(name, arguments, offered_only=False).content(output_format)
            for name, arguments in calls
        ]
    tools = system.domain.tools
    invoke = system.invoke
    outcomes: list[bool] = []
    for name, arguments in calls:
        if arguments is None or name not in tools:
            outcomes.append(False)
        elif type(arguments) is str:
            outcomes.append(system.execute(name, arguments, offered_only=False).ok)
        else:
            # What ``execute(...).ok`` says, without the copies execute makes of the arguments
            # (the caller's own) and of the result (only its success is read).
            try:
                outcomes.append(succeeded(invoke(name, arguments)))  # type: ignore[arg-type]
            except Exception:  # noqa: BLE001 - as execute: a failing call is an unsuccessful one
                outcomes.append(False)
    return outcomes


class StrictSystem(_Evaluating):
    """The oracle: enforces a full dependency table and keeps the session state.

    ``dependencies`` maps every tool to the constraint expression it requires (``None`` = none); a
    tool missing from it is refused. ``quirks`` may contain ``SESSION_BEFORE_CREDENTIALS``.
    """

    def __init__(
        self,
        domain: Domain,
        database: Mapping[str, Any],
        parameters: Mapping[str, Any] | None,
        dependencies: Mapping[str, Expr | None],
        *,
        quirks: frozenset[str] = frozenset(),
        copy: bool = True,
        atomic: bool = True,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.domain = domain
        self.lenient = LenientSystem(domain, database, parameters, copy=copy, atomic=atomic, options=options)
        self.db = self.lenient.db
        self.dependencies = dependencies
        self.quirks = quirks
        self.session = domain.new_session()
        self.ctx = Context(
            self.lenient.db, self.lenient.parameters, self.session, self.lenient._call, self.lenient.options
        )

    def _invoke_lenient(self, name: str, arguments: Mapping[str, Any]) -> Any:
        return self.lenient.invoke(name, arguments)

    def permitted(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """Whether the oracle's dependency for ``name`` holds now (exceptions propagate)."""
        if name not in self.dependencies:
            return False
        return self.holds(self.dependencies[name], arguments)

    def invoke(self, name: str, arguments: Mapping[str, Any]) -> Any:
        if not self.permitted(name, arguments):
            return False
        effect = self.domain.effects.get(name)
        if effect is None:
            return self.lenient.invoke(name, arguments)
        if SESSION_BEFORE_CREDENTIALS in self.quirks:
            effect(self.session, **arguments)
            return self.lenient.invoke(name, arguments)
        result = self.lenient.invoke(name, arguments)
        if succeeded(result):
            effect(self.session, **arguments)
        return result

    def execute(self, name: str, arguments: Any, *, offered_only: bool = False) -> ToolOutcome:
        """Like ``LenientSystem.execute``, through the oracle. Never raises. (``offered_only`` is
        taken for the lenient system's signature; the oracle runs every tool of its table.)"""
        if name not in self.domain.tools:
            return tool_not_found(name, arguments if isinstance(arguments, Mapping) else None)
        args, problem = parse_arguments(name, arguments)
        if args is None:
            return ToolOutcome(name, {}, error=problem)
        spec = self.domain.tools[name]
        snapshot = _snapshot(self.db) if self.lenient.atomic and spec.kind is ToolKind.WRITE else None
        try:
            return ToolOutcome(name, args, raw=_detached(self.invoke(name, args)))
        except Exception as exc:  # noqa: BLE001
            if snapshot is not None:
                _restore(self.db, snapshot)
            return ToolOutcome(name, args, error=f"{type(exc).__name__}: {exc}")
