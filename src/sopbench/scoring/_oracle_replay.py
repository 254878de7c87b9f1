"""The oracle replay: every scored call on the task's strict oracle.

Each call gets a status (replayed, not replayed, error) and the oracle's output; a call the oracle
cannot run is an *invalid call* (``no_tool_call_error``), an output that differs from the oracle's is
a *violation* (``constraint_not_violated``). For the sound procedure judgement the replay also
records the truth of every constraint of the call's SOP just before it runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sopbench.constraints import Sop, clip, singles
from sopbench.domains import StrictSystem, parameter_problem, tool_not_found_text

from ._calls import ScoredCall
from ._protocol import QuirkSwitches
from ._tables import DomainTables, bind_strict_arguments
from ._values import as_lists, fresh, read_output

STATUS_REPLAYED, STATUS_NOT_REPLAYED, STATUS_ERROR = 0, 1, 2


@dataclass(slots=True)
class OracleReplay:
    """What replaying the scored calls on the strict oracle found."""

    oracle: StrictSystem
    statuses: list[int] = field(default_factory=list)  # one per scored call
    invalid: list[str] = field(default_factory=list)  # one sentence per invalid call
    violations: list[str] = field(default_factory=list)  # one per output that differs from the oracle's
    # (scored call index, constraint name, its parameters) -> truth just before that call
    truths: dict[tuple[int, str, Any], bool] = field(default_factory=dict)


def replay_on_oracle(
    calls: Sequence[ScoredCall],
    oracle: StrictSystem,
    tables: DomainTables,
    switches: QuirkSwitches,
    output_format: str,
    sop: Sop | None,
) -> OracleReplay:
    """Replay ``calls`` on ``oracle``; with ``sop``, also record the truths the sound procedure needs."""
    replay = OracleReplay(oracle)
    tools = tables.domain.tools
    not_replayed = switches.strict_class_lacks_internal_tools
    check_types = not switches.unchecked_argument_types
    replay_unoffered = switches.replay_unoffered_tools
    for index, call in enumerate(calls):
        name = call.name
        if name not in tools:
            replay.statuses.append(STATUS_ERROR)
            replay.invalid.append(f"{_where(call)}: there is no tool {name}")
            continue
        if not replay_unoffered and not _offered(call, tables):
            replay.statuses.append(STATUS_ERROR)
            replay.invalid.append(f"{_where(call)}: {name} is not offered to the agent")
            continue
        if not_replayed and name not in tables.strict_class_tools:
            replay.statuses.append(STATUS_NOT_REPLAYED)
            continue
        arguments = call.arguments
        # One sentence per invalid call: the first reason found is the one given.
        problem = schema_problem(tables, name, call.json_arguments) if check_types else None
        if sop is not None and isinstance(arguments, dict):
            _record_truths(replay, index, call, sop)
        if not isinstance(arguments, Mapping):
            replay.statuses.append(STATUS_ERROR)
            replay.invalid.append(
                f"{_where(call)}: {problem or 'its arguments are not a JSON object the oracle can use'}"
            )
            continue
        try:
            raw = oracle.invoke(
                name, bind_strict_arguments(tables.domain, name, fresh(arguments), copy=False)
            )
        except Exception as exc:  # noqa: BLE001 - the oracle's exception is the finding
            replay.statuses.append(STATUS_ERROR)
            replay.invalid.append(
                f"{_where(call)}: {problem or f'the oracle cannot run it ({type(exc).__name__}: {exc})'}"
            )
            continue
        if problem is not None:
            replay.invalid.append(f"{_where(call)}: {problem}")
        replay.statuses.append(STATUS_REPLAYED)
        if not output_matches(call.output_text, raw, switches, output_format):
            replay.violations.append(
                f"{_where(call)}: the agent saw {quoted(call.output_text)} but the oracle "
                f"returns {quoted(str(raw))}; its SOP does not hold at this point"
            )
    return replay


def _where(call: ScoredCall) -> str:
    # Only for explanations: describing a call is the replay's most expensive string work.
    return f"{call.describe()} at step {call.step}"


def _offered(call: ScoredCall, tables: DomainTables) -> bool:
    if call.name in tables.offered:
        return True
    # Older runs were offered tools that newer ones are not (internal_get_database): the
    # environment's answer shows whether this agent could call it.
    return call.output_text != tool_not_found_text(call.name)


def output_matches(text: str, raw: Any, switches: QuirkSwitches, output_format: str) -> bool:
    """Whether the output the agent saw is the oracle's ``raw`` result (quirk ``pair_output_equivalence``)."""
    seen = read_output(text, python_eval=switches.python_eval)
    if switches.pair_output_equivalence:
        expected = as_lists(raw)
        found = as_lists(seen)
        return bool(found == expected or [True, found] == expected)
    shown = raw if output_format == "tuple" else _value_part(raw)
    return text == str(shown) or as_lists(seen) == as_lists(shown)


def _value_part(raw: Any) -> Any:
    """What newer simulators showed: the second element of a result pair, else the result."""
    return raw[1] if isinstance(raw, tuple) and len(raw) > 1 else raw


def _record_truths(replay: OracleReplay, index: int, call: ScoredCall, sop: Sop) -> None:
    rule = sop.rule(call.name)
    if rule is None or rule.expr is None:
        return
    oracle = replay.oracle
    for single in singles(rule.expr):
        positive = single.positive
        key = (index, positive.name, positive.params)
        if key in replay.truths:
            continue
        try:
            value = oracle.value_of(positive, call.arguments)
        except Exception:  # noqa: BLE001 - a check that cannot be evaluated does not hold
            value = False
        replay.truths[key] = value is True or (type(value) is not bool and value == True)  # noqa: E712


def quoted(text: str, limit: int = 60) -> str:
    """``text`` quoted (unless it already is) and clipped, for explanations."""
    return clip(repr(text) if not text.startswith(("'", '"')) else text, limit)


# ---- the published schemas ---------------------------------------------------------------------------
def schema_problem(tables: DomainTables, tool: str, arguments: dict[str, Any] | None) -> str | None:
    """Why ``arguments`` do not fit ``tool``'s published schema, or None."""
    if arguments is None:
        return "its arguments are not a JSON object"
    schema = tables.schemas.get(tool)
    if schema is None:
        return None
    unknown = [name for name in arguments if name not in schema]
    if unknown:
        return f"{tool} has no parameter {', '.join(unknown)} (parameters: {', '.join(schema) or 'none'})"
    missing = [name for name in tables.required_params.get(tool, ()) if name not in arguments]
    if missing:
        return f"required parameter {', '.join(sorted(missing))} of {tool} is missing"
    for name, value in arguments.items():
        problem = parameter_problem(schema[name], value)
        if problem:
            return f"parameter {name} of {tool} {problem}"
    return None
