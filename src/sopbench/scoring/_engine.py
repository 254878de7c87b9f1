"""The scoring engine: one episode's calls, one protocol, one verdict.

Stages (each consults the protocol's quirks, through ``Protocol.switches``, where the published
evaluator departs from a sound judgement, and nowhere else):

1. how the calls' text is read (``python_eval``; which calls are scored is the caller's: see
   ``_calls.published_calls`` for ``first_call_only``);
2. what the agent's environment made of its calls (a lenient replay), when a judgement needs it;
3. the oracle replay (``_oracle_replay``): every scored call on the task's strict oracle;
4. the judgements (``_judgements``, ``_graphcheck``, ``evaluation.compare_databases``):
   ``database`` = database_match, ``permission`` = action_called_correctly,
   ``procedure`` = dirgraph_satisfied ∧ no_tool_call_error ∧ constraint_not_violated,
   ``passed`` = ``success`` = all of them.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from sopbench.constraints import Sop
from sopbench.domains import SESSION_BEFORE_CREDENTIALS, StrictSystem, oracle_dependencies
from sopbench.evaluation import (
    PASSED,
    DatabaseEquality,
    Judgement,
    UnverifiedConstraint,
    Verdict,
    compare_databases,
)
from sopbench.tasks import Task

from ._artefacts import recording_artefacts
from ._calls import EpisodeCall, ScoredCall, environment_outcomes, scored_calls
from ._checks import EpisodeScore
from ._graphcheck import GraphCheck
from ._judgements import (
    first_and_more,
    goal_executed,
    judge_constraint_not_violated,
    judge_goal_permission,
    judge_no_tool_call_error,
    judge_sound_procedure,
    refusal_revealed,
    task_sop,
)
from ._oracle_replay import replay_on_oracle
from ._protocol import Protocol
from ._tables import DomainTables


def score_calls(
    task: Task,
    episode: Sequence[EpisodeCall],
    executed_episode: Sequence[EpisodeCall],
    final_database: Any,
    protocol: Protocol,
    tables: DomainTables,
    output_format: str,
    justify_refusal: bool,
    program: str | None = None,
) -> EpisodeScore:
    """The verdict on one episode; raises ``PublishedCrash`` where the published evaluator did.

    ``episode`` are the calls to score, ``executed_episode`` the calls the agent's environment
    executed (the same sequence unless the protocol scores a selection), matched to them by step.
    """
    replay_environment = needs_environment(protocol, justify_refusal)
    # The executed calls matter only through the environment replay.
    environment_calls = executed_episode if replay_environment and executed_episode is not episode else None
    key = _memo_key(
        task, tables, protocol, output_format, justify_refusal, episode, environment_calls, final_database
    )
    if key is not None and program is not None:
        key = (*key, program)
    if key is not None:
        hit = _SCORES.get(key)
        if hit is not None and hit[0] is task and hit[1] is tables:
            return hit[2]
    python_eval = protocol.switches.python_eval
    calls = scored_calls(episode, python_eval)
    if executed_episode is episode:
        executed = calls
    elif replay_environment:
        executed = scored_calls(executed_episode, python_eval)
    else:
        executed = []  # never replayed
    score = _score(
        task,
        calls,
        executed,
        final_database,
        protocol,
        tables,
        output_format,
        justify_refusal,
        replay_environment,
        program,
    )
    if key is not None:
        if len(_SCORES) >= _SCORE_LIMIT:
            _SCORES.clear()
        _SCORES[key] = (task, tables, score)
    return score


def needs_environment(protocol: Protocol, justify_refusal: bool) -> bool:
    """Whether a judgement asks what the agent's environment made of the calls (a lenient replay)."""
    switches = protocol.switches
    return (
        not switches.success_from_output_text
        or not switches.graph_check
        or not switches.failed_prerequisites_count
        or justify_refusal
    )


def _score(
    task: Task,
    calls: list[ScoredCall],
    executed: list[ScoredCall],
    final_database: Any,
    protocol: Protocol,
    tables: DomainTables,
    output_format: str,
    justify_refusal: bool,
    replay_environment: bool,
    program: str | None = None,
) -> EpisodeScore:
    switches = protocol.switches
    facts = _task_facts(task, tables)
    if not replay_environment:
        succeeded = [False] * len(calls)
    else:
        environment = None
        if program is not None:  # the agent talked to the task's strict system (env_mode program)
            program_database = facts.fresh_database()
            environment = StrictSystem(
                tables.domain,
                task.initial_database if program_database is None else program_database,
                task.constraint_parameters,
                oracle_dependencies(tables.domain.catalogue, task.goal, task.constraints, program),  # type: ignore[arg-type]
                copy=program_database is None,
                atomic=False,
                options=tables.options,
            )
        outcomes = environment_outcomes(executed, tables, task, facts.fresh_database(), environment)
        if executed is calls:
            succeeded = outcomes
        else:  # a selection of the executed calls: each takes the outcome of the call with its step
            by_step = dict(zip((call.step for call in executed), outcomes, strict=True))
            succeeded = [by_step.get(call.step, False) for call in calls]
    sop = None if switches.graph_check else facts.sound_sop()
    oracle = _oracle(task, tables, facts, switches.session_before_credentials)
    replay = replay_on_oracle(calls, oracle, tables, switches, output_format, sop)

    no_error = judge_no_tool_call_error(replay)
    not_violated = judge_constraint_not_violated(replay)
    equality: DatabaseEquality = "python" if switches.python_equality_database else "canonical"
    database = compare_databases(oracle.db, final_database, equality=equality)
    artefacts: tuple[str, ...] = ()
    if not database.passed and not protocol.quirks:  # sound: a recording's artefact is not the agent's
        expected, artefacts = recording_artefacts(tables.domain.name, oracle.db, final_database)
        if artefacts:
            database = compare_databases(expected, final_database, equality=equality)
            artefacts = artefacts if database.passed else ()
    executed_goal = goal_executed(task, calls, replay.statuses, succeeded, tables, switches)
    permission = judge_goal_permission(
        task, calls, succeeded, executed_goal, sop or facts.sound_sop(), replay, switches
    )
    if sop is None:
        check = GraphCheck(
            tables,
            task.directed_action_graph,
            loose=switches.loose_parameter_matching,
            failed_count=switches.failed_prerequisites_count,
            dropped_implications=switches.dropped_innate_implications,
        )
        graph_ok = check.run(calls, replay.statuses, succeeded)
        graph = (
            PASSED
            if graph_ok
            else Judgement(False, first_and_more(check.problems, *_PROBLEMS), tuple(check.unverified))
        )
    else:
        sound = judge_sound_procedure(task, calls, succeeded, sop, replay, tables)
        graph = (
            PASSED
            if sound.passed
            else Judgement(False, first_and_more(sound.explanations, *_PROBLEMS), sound.unverified)
        )
    justified = None
    if justify_refusal and not task.action_should_succeed:
        passed = (
            no_error.passed and not_violated.passed and database.passed and permission.passed and graph.passed
        )
        justified = passed and refusal_revealed(task, calls, succeeded, oracle, tables)
    oracle.close()
    procedure_passed = graph.passed and no_error.passed and not_violated.passed
    procedure = (
        PASSED
        if procedure_passed
        else Judgement(
            False,
            no_error.explanations + not_violated.explanations + graph.explanations,
            _procedure_findings(no_error.passed, not_violated.passed) + graph.unverified,
        )
    )
    return EpisodeScore(
        verdict=Verdict(database=database, permission=permission, procedure=procedure),
        checks={
            "no_tool_call_error": no_error.passed,
            "constraint_not_violated": not_violated.passed,
            "database_match": database.passed,
            "action_successfully_called": executed_goal,
            "dirgraph_satisfied": graph.passed,
            "action_called_correctly": permission.passed,
            "success": database.passed and permission.passed and procedure.passed,
        },
        explanations=(
            no_error.explanations
            + not_violated.explanations
            + database.explanations
            + permission.explanations
            + graph.explanations
        ),
        justified_refusal=justified,
        artefacts=artefacts,
    )


# Procedure failures that are not an unverified constraint, named for the breakdown by constraint.
INVALID_CALL = UnverifiedConstraint("invalid call", None)
VIOLATED_CONSTRAINT = UnverifiedConstraint("violated constraint", None)


def _procedure_findings(no_error: bool, not_violated: bool) -> tuple[UnverifiedConstraint, ...]:
    return (() if no_error else (INVALID_CALL,)) + (() if not_violated else (VIOLATED_CONSTRAINT,))


def _oracle(task: Task, tables: DomainTables, facts: _TaskFacts, session_quirk: bool) -> StrictSystem:
    """``domains.task_oracle`` on a private copy of the database, with the task's dependency table
    derived once per task rather than per episode."""
    database = facts.fresh_database()
    return StrictSystem(
        tables.domain,
        task.initial_database if database is None else database,
        task.constraint_parameters,
        facts.dependencies,
        quirks=_SESSION_QUIRK if session_quirk else frozenset(),
        copy=database is None,
        atomic=False,
        options=tables.options,
    )


_SESSION_QUIRK = frozenset({SESSION_BEFORE_CREDENTIALS})
_PROBLEMS = ("procedure problem", "procedure problems")


# ---- what every episode of a task shares -----------------------------------------------------------
@dataclass(slots=True)
class _TaskFacts:
    """Derived once per task and domain tables, read-only afterwards (shared by the task's runs)."""

    task: Task
    tables: DomainTables
    dependencies: Mapping[str, Any]  # the oracle's dependency table
    database_json: bytes | None  # the initial database as JSON, copied by decoding (None: not JSON)
    sop: Sop | None = None  # the sound protocol's SOP, made when first needed

    def fresh_database(self) -> dict[str, Any] | None:
        """A private copy of the task's database, or None when it is not plain JSON (then each
        system makes its own deep copy)."""
        return None if self.database_json is None else orjson.loads(self.database_json)

    def sound_sop(self) -> Sop:
        if self.sop is None:
            self.sop = task_sop(self.task, self.tables)
        return self.sop


_FACTS_LIMIT = 8192
_FACTS: dict[tuple[int, int], _TaskFacts] = {}


def _task_facts(task: Task, tables: DomainTables) -> _TaskFacts:
    key = (id(task), id(tables))
    facts = _FACTS.get(key)
    if facts is not None and facts.task is task and facts.tables is tables:
        return facts
    try:
        database_json: bytes | None = orjson.dumps(task.initial_database)
    except TypeError:  # a published quirk left a non-string key, or a foreign type
        database_json = None
    dependencies = oracle_dependencies(tables.domain.catalogue, task.goal, task.constraints)
    facts = _TaskFacts(task, tables, dependencies, database_json)
    if len(_FACTS) >= _FACTS_LIMIT:
        _FACTS.clear()
    _FACTS[key] = facts
    return facts


# ---- verdicts kept by content ------------------------------------------------------------------
# A verdict is a function of the task, the domain tables, the protocol, the output format, the scored
# calls (step, name, argument text and object, output), the calls the agent's environment executed
# when they differ from the scored ones, and the final database. About a quarter of the published
# dev trajectories equal another one in all of these (the same conversation recorded for two tool
# lists or modes, agents that refuse at once, ...), so verdicts are kept by that content. The content
# is compared exactly: ``marshal`` bytes tell 1 from 1.0 from True and lists from tuples, and keep the
# order of keys. Task and tables are compared by identity (the loader shares equal tasks).
# The final database, the largest part, is keyed by the sha256 of its orjson bytes (keys in order; 1, 1.0 and true
# apart), three times faster than marshal. Those bytes blur NaN with null and tuples with lists, so
# they are used only for a database that decodes back to itself, which has neither; any other
# database is scored afresh. The kept verdicts hold no database: keeping them alive would keep
# every scored file's databases in memory (200 MB for the dev trajectories). Kept scores are
# immutable and shared.
_SCORE_LIMIT = 32768
_SCORES: dict[tuple[Any, ...], tuple[Any, DomainTables, EpisodeScore]] = {}


def _memo_key(
    task: Task,
    tables: DomainTables,
    protocol: Protocol,
    output_format: str,
    justify_refusal: bool,
    calls: Sequence[EpisodeCall],
    environment_calls: Sequence[EpisodeCall] | None,
    final_database: Any,
) -> tuple[Any, ...] | None:
    """Everything the verdict depends on besides the task and tables (compared by identity)."""
    try:
        signature = tuple(map(_call_key, calls))
        environment = None if environment_calls is None else tuple(map(_call_key, environment_calls))
        database = _database_key(final_database)
    except ValueError:  # not plain data (marshal takes only built-in types) or too deep
        return None
    if database is None:
        return None
    return (
        id(task),
        id(tables),
        protocol.quirks,
        output_format,
        justify_refusal,
        signature,
        environment,
        database,
    )


def _call_key(call: EpisodeCall) -> tuple[Any, ...]:
    """A call by content: the argument text (every reading of the arguments is a function of it), or
    the bytes of arguments given as a mapping."""
    step, name, arguments, output = call.step, call.name, call.arguments, call.output
    if isinstance(arguments, str):
        return (step, name, arguments, output)
    return (step, name, None, marshal.dumps(dict(arguments)), output)


def _database_key(database: Any) -> bytes | None:
    """The sha256 of bytes that identify ``database`` exactly, or None when there are none cheap
    enough. The digest, not the bytes, is kept: as bytes, the kept keys of the dev trajectories'
    final databases held 47 MB for as long as the process lived."""
    try:
        data = orjson.dumps(database)
    except TypeError:  # non-string keys, integers beyond 64 bits, foreign types: marshal or nothing
        return hashlib.sha256(b"marshal:" + marshal.dumps(database)).digest()
    return hashlib.sha256(data).digest() if orjson.loads(data) == database else None
