"""The state of each constraint of a goal's SOP at the moment of the goal call, for readers.

A viewer shows, next to a conversation, which constraints of the task's SOP held and which the agent
had verified when it called the goal (or, when it never called it, at the end). This reads the
episode the way the sound judgements do: the calls' outcomes come from a replay on the agent's
lenient system, the truths from the task's strict oracle after the earlier calls, and "verified" is
the core procedure judgement asked about that one constraint (with innate implications counted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sopbench.constraints import Rule, Single, Sop, format_single, singles
from sopbench.evaluation import ToolCall, Trace, judge_procedure
from sopbench.traces import Record, detect_output_format

from ._calls import environment_outcomes, scored_calls
from ._engine import _oracle, _task_facts
from ._episode import episode_calls
from ._judgements import ReplayOracle, trace_of
from ._oracle_replay import replay_on_oracle
from ._protocol import SOUND, Protocol
from ._tables import domain_tables
from ._values import as_tuples

__all__ = ["ConstraintState", "GoalStates", "goal_constraint_states"]


@dataclass(frozen=True, slots=True)
class ConstraintState:
    """One leaf of the goal's SOP: is it true, and had the agent verified it?"""

    single: Single  # as written in the SOP (possibly negated)
    text: str  # the constraint with the episode's values filled in
    holds: bool | None  # the constraint (negation included) holds; None: it cannot be evaluated
    verified: bool  # the agent's earlier successful calls verify it (as the procedure judgement reads them)


@dataclass(frozen=True, slots=True)
class GoalStates:
    goal: str
    goal_step: int | None  # the step of the first goal call; None: never called (states at the end)
    bindings: Mapping[str, Any]  # the values the constraints were bound to
    states: tuple[ConstraintState, ...]  # one per leaf of the SOP, left to right

    def state_of(self, position: int) -> ConstraintState:
        return self.states[position]


def goal_constraint_states(
    record: Record, run_index: int, protocol: Protocol = SOUND, *, credit_cards: str | None = None
) -> GoalStates:
    """The state of every constraint of ``record.task``'s SOP just before the first goal call of
    run ``run_index`` (or after the last call when the goal was never called).

    Bindings are the goal call's arguments, or the values the user knows when there is no goal call.
    """
    task = record.task
    if credit_cards is None:
        credit_cards = "dict" if protocol.switches.credit_cards_as_shipped else "list"
    tables = domain_tables(record.domain or task.domain, credit_cards)
    executed, _ = episode_calls(record.runs[run_index], SOUND)
    calls = scored_calls(executed, python_eval=False)
    facts = _task_facts(task, tables)
    succeeded = environment_outcomes(calls, tables, task, facts.fresh_database())
    goal = task.goal
    position = next((i for i, call in enumerate(calls) if call.name == goal), None)
    before = calls if position is None else calls[:position]
    goal_arguments = None if position is None else calls[position].arguments
    bindings: Mapping[str, Any] = goal_arguments if isinstance(goal_arguments, dict) else task.user_known
    oracle = _oracle(task, tables, facts, protocol.switches.session_before_credentials)
    try:
        replay_on_oracle(before, oracle, tables, protocol.switches, detect_output_format([record]), None)
        base = trace_of(before, succeeded[: len(before)], tables)[0].calls
        probe = ToolCall(goal, {k: as_tuples(v) for k, v in bindings.items()}, None, False)
        states = []
        for single in singles(task.constraints_original):
            try:
                value = oracle.value_of(single.positive, bindings)
                truth: bool | None = value is True or (type(value) is not bool and value == True)  # noqa: E712
                holds = truth != single.negated
            except Exception:  # noqa: BLE001 - an unbound variable or a failing check: unknown
                holds = None
            sop = Sop({goal: Rule(goal, single.positive, tuple(bindings))}, tables.verifiers)
            judgement, _ = judge_procedure(Trace((*base, probe)), sop, ReplayOracle(goal, False, {}))
            states.append(ConstraintState(single, format_single(single, bindings), holds, judgement.passed))
    finally:
        oracle.close()
    step = None if position is None else calls[position].step
    return GoalStates(goal, step, dict(bindings), tuple(states))
