"""A guard session answers exactly what ``Guard.check`` answers over the whole history, at every step.

``Guard.check(call, history)`` reads the history afresh (the definition); ``GuardSession`` keeps it
indexed. Random histories over the real domains' SOPs (every action's default rule and published
tasks' own rules with Or and Chain), and over random rule files (``Guard.from_rules``: And, Or,
Chain, Gate, negations, verification processes and argument checks), with helper calls bound to
matching, mismatching and odd values (1, 1.0 and True; 0.0 and -0.0; NaN; lists; tuples): the two
agree on every decision, explanation included, and so do wrapped tools.
"""

from __future__ import annotations

import inspect
import math
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sopbench.constraints import And, Chain, Gate, Or, Rule, Single, Sop, singles
from sopbench.domains import PUBLISHED_DOMAINS
from sopbench.evaluation import CallIndex, next_call_review, procedure_problem
from sopbench.guard import (
    Guard,
    GuardSession,
    ObservedFacts,
    Refused,
    ToolCall,
    execute_tool_calls,
    observed_truth,
)
from sopbench.tasks import iter_all_tasks

TASKS = Path(__file__).resolve().parents[2].parent / "shared" / "sopbench" / "tasks"
NAN = math.nan
VALUES = ["alice", "bob", 1, 1.0, True, 0, 0.0, -0.0, None, NAN, ("t", 1), ["t", 1], {"k": "alice"}, "it's"]
OUTPUTS = [
    True,
    False,
    (True, False),
    (True, True),
    (False, True),
    "True",
    " False ",
    None,
    1,
    {"ok": True},
    "done",
]


@cache
def domain_guards() -> tuple[Guard, ...]:
    """The seven benchmark domains' guards (not every registered domain: other tests register their own)."""
    return tuple(Guard.for_domain(domain) for domain in PUBLISHED_DOMAINS)


@cache
def task_guards() -> tuple[Guard, ...]:
    """One published task per domain and shape of its goal's rule where it has an Or or a Chain."""
    if not TASKS.exists():
        return ()
    chosen: dict[tuple[str, bool, bool], Guard] = {}
    for task in iter_all_tasks(TASKS):
        guard = Guard.for_task(task)
        rule = guard.sop.rule(task.goal)
        text = repr(rule.expr if rule else None)
        shape = (task.domain, "Or(" in text, "Chain(" in text)
        if (shape[1] or shape[2]) and shape not in chosen:
            chosen[shape] = guard
    return tuple(chosen.values())


HELPERS = ["check_user", "check_id", "lookup", "user_exists", "has_funds"]


def single(draw: st.DrawFn, names: list[str]) -> Single:
    params = draw(st.lists(st.sampled_from(["user", "order", "amount"]), max_size=2, unique=True))
    literal = draw(st.booleans()) and not params
    mapping = {"flag": "value True"} if literal else {p: p for p in params}
    return Single.of(draw(st.sampled_from(names)), mapping, negated=draw(st.booleans()))


def expression(draw: st.DrawFn, names: list[str], depth: int = 0):
    if depth >= 2 or draw(st.integers(0, 2)) == 0:
        return single(draw, names)
    kind = draw(st.sampled_from([And, Or, Chain, Gate]))
    return kind([expression(draw, names, depth + 1) for _ in range(draw(st.integers(1, 3)))])


@st.composite
def rules_guard(draw: st.DrawFn) -> Guard:
    """A rule file as ``Guard.from_rules`` takes it: rules over helpers, some constraints verified by
    a process (an Or of helpers or of helpers called together, or one helper of another name), some
    by an argument check."""
    constraints = ["identity_verified", "order_known"]
    verifiers = {}
    for name in constraints:
        kind = draw(st.sampled_from(["process", "joint", "alias", "argument", "none"]))
        if kind == "process":
            verifiers[name] = Or(
                [Single.of(h, {"user": "user"}) for h in draw(st.sets(st.sampled_from(HELPERS), min_size=1))]
            )
        elif kind == "joint":  # helpers to be called together, or another way
            together = draw(st.lists(st.sampled_from(HELPERS), min_size=1, max_size=2, unique=True))
            verifiers[name] = Or(
                [
                    And([Single.of(h, {"user": "user"}) for h in together]),
                    Single.of(draw(st.sampled_from(HELPERS)), {}),
                ]
            )
        elif kind == "alias":
            verifiers[name] = Single.of(draw(st.sampled_from(HELPERS)), {"user": "user"})
        elif kind == "argument":
            verifiers[name] = None
    names = HELPERS + constraints
    read_only = draw(st.booleans())
    rules = [
        Rule("refund", expression(draw, names), ("user", "order", "amount")),
        Rule("peek", expression(draw, names), ("user",), read_only=read_only),
    ]
    return Guard.from_rules(rules, verifiers)


def vocabulary(sop: Sop) -> dict[str, tuple[str, ...]]:
    """Every name a call may have in a history over ``sop``, with the parameters it is called with."""
    names: dict[str, set[str]] = {}
    for rule in sop.rules.values():
        names.setdefault(rule.action, set()).update(rule.params)
        for part in singles(rule.expr):
            names.setdefault(part.name, set()).update(p for p, _ in part.params or ())
    for process in sop.verifiers.values():
        for part in singles(process):
            names.setdefault(part.name, set()).update(p for p, _ in part.params or ())
    return {name: tuple(sorted(params)) for name, params in sorted(names.items())}


def related_names(sop: Sop, action: str) -> set[str]:
    """The names ``action``'s rule names, and the helpers that verify them."""
    rule = sop.rule(action)
    names = {part.name for part in singles(rule.expr if rule else None)}
    return names | {part.name for name in names for part in singles(sop.verifiers.get(name))}


@st.composite
def guard_and_calls(draw: st.DrawFn) -> tuple[Guard, list[ToolCall]]:
    sources = [rules_guard(), st.sampled_from(domain_guards())]
    if task_guards():
        sources.append(st.sampled_from(task_guards()))
    guard = draw(st.one_of(*sources))
    words = vocabulary(guard.sop)
    # Calls mostly of one action and of what its rule names, with arguments from a few values, so
    # that helpers match, fail, repeat and come in the wrong order often.
    guarded = sorted(action for action, rule in guard.sop.rules.items() if rule.expr is not None)
    focus = draw(st.sampled_from(guarded))
    related = sorted({focus} | related_names(guard.sop, focus))
    pool = draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=3))
    calls = []
    for _ in range(draw(st.integers(1, 40))):
        name = draw(st.sampled_from(related if draw(st.integers(0, 4)) else sorted(words)))
        params = words[name]
        present = [p for p in params if draw(st.integers(0, 5)) > 0]  # now and then a parameter is left out
        arguments = {p: draw(st.sampled_from(pool)) for p in present}
        calls.append(ToolCall(name, arguments, draw(st.sampled_from(OUTPUTS)), draw(st.booleans())))
    return guard, calls


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(guard_and_calls())
def test_a_session_decides_as_a_full_reading_of_the_history_at_every_step(case):
    guard, calls = case
    session = guard.session()
    for position, call in enumerate(calls):
        assert session.check(call) == guard.check(call, calls[:position]), position
        session.record(call)
    assert session.history == tuple(calls) and len(session) == len(calls)
    assert guard.session(calls).check(calls[-1]) == guard.check(calls[-1], calls)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(guard_and_calls())
def test_the_review_of_a_next_call_finds_what_the_walk_of_the_trace_finds(case):
    """``next_call_review`` writes the walk out once per rule of the usual shapes: at every step its
    problem, and what each part of the rule answers on its own, are what the walk of the whole trace
    (``procedure_problem``, over the same calls and a rule of that part alone) finds."""
    guard, calls = case
    sop = guard.sop
    read: list[ToolCall] = []
    index = CallIndex(answer=observed_truth)
    for position, call in enumerate(calls):
        attempted = guard.attempted(call)
        trace = [*read, attempted]
        oracle = ObservedFacts(read, guard.goal or "")
        problem, alone = next_call_review(index, attempted, sop, ObservedFacts(index, guard.goal or ""))
        assert problem == procedure_problem(trace, len(read), sop, oracle), position
        rule = sop.rule(call.name)
        for part in dict.fromkeys(singles(rule.expr if rule else None)):
            on_its_own = Sop({call.name: Rule(call.name, part)}, sop.verifiers, sop.unoffered)
            assert alone(part) == (procedure_problem(trace, len(read), on_its_own, oracle) is None), part
        for done in guard.expand(call):
            read.append(done)
            index.append(done)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(guard_and_calls())
def test_wrapped_tools_on_a_list_and_on_a_session_refuse_what_the_guard_refuses(case):
    guard, calls = case
    on_list: list[ToolCall] = []
    session = guard.session()
    for call in calls:
        expected = guard.check(call, on_list)

        def tool(output=call.output, **arguments):
            return output

        # Named parameters, as a real tool has (the wrapper binds the call to its signature).
        tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY) for p in call.arguments]
        )

        outcomes = []
        for history in (on_list, session):
            try:
                guard.wrap(tool, history, name=call.name)(**call.arguments)
                outcomes.append(None)
            except Refused as refused:
                outcomes.append(refused.decision)
        assert outcomes == [None, None] if expected.allowed else outcomes == [expected, expected]
    assert tuple(on_list) == session.history


def test_a_session_follows_a_list_that_is_cleared_or_edited():
    guard = Guard.from_rules([Rule("refund", Single.of("check_user", {"user": "user"}), ("user",))])
    refund = ToolCall("refund", {"user": "bob"})
    history = [ToolCall("check_user", {"user": "bob"}, True)]
    follower = guard.following(history)
    assert follower.check(refund).allowed
    history[0] = ToolCall("check_user", {"user": "bob"}, False, succeeded=False)  # its last call replaced
    assert guard.following(history) is follower and not follower.check(refund).allowed
    history[:] = [ToolCall("check_user", {"user": "bob"}, True), ToolCall("hello", {}, True)]
    assert follower.check(refund).allowed is False and guard.following(history).check(refund).allowed
    history[1:] = [
        ToolCall("check_user", {"user": "bob"}, False, succeeded=False),
        ToolCall("hello", {}, True),
    ]
    assert guard.following(history).check(refund).allowed  # an earlier success still verifies
    history[0:1] = []  # shortened: read again
    assert not guard.following(history).check(refund).allowed
    history.clear()
    assert len(guard.following(history)) == 0 and not follower.check(refund).allowed
    history.append(ToolCall("check_user", {"user": "bob"}, (True, True)))
    assert guard.following(history).check(refund).allowed


def test_execute_tool_calls_takes_a_session_and_records_into_it():
    guard = Guard.from_rules([Rule("refund", Single.of("check_user", {"user": "user"}), ("user",))])
    session = guard.session()
    tools = {"check_user": lambda user: user == "bob", "refund": lambda user: "refunded"}
    call = {"id": "c1", "function": {"name": "refund", "arguments": '{"user": "bob"}'}}
    check = {"id": "c2", "function": {"name": "check_user", "arguments": '{"user": "bob"}'}}
    replies = [m["content"] for m in execute_tool_calls(guard, [call, check, call], tools, session)]
    assert "not executed" in replies[0] and replies[1:] == ["True", "refunded"]
    assert [c.name for c in session.history] == ["check_user", "refund"]
    assert isinstance(session, GuardSession)


@pytest.mark.parametrize("result", [False, None, (False, "no such user")])
def test_a_result_that_says_it_failed_verifies_nothing(result):
    guard = Guard.from_rules([Rule("refund", Single.of("check_user", {"user": "user"}), ("user",))])
    session = guard.session()
    recorded = session.record(ToolCall("check_user", {"user": "bob"}), result)
    assert not recorded.succeeded and recorded.output == result
    assert not session.check(ToolCall("refund", {"user": "bob"})).allowed


@pytest.mark.parametrize(
    ("recorded", "asked"),
    [
        (["t", 1], ["t", 1]),
        ({"k": 1}, {"k": 1.0}),
        (NAN, NAN),
        (1, True),
        (1.0, 1),
        (("t", NAN), ("t", NAN)),
        ("1", 1),
    ],
)
def test_odd_argument_values_match_as_they_compare(recorded, asked):
    """Lists, dicts and NaN cannot be looked up by hash: they are compared one by one, as ``==`` does."""
    guard = Guard.from_rules([Rule("refund", Single.of("check_user", {"user": "user"}), ("user",))])
    refund = ToolCall("refund", {"user": asked})
    for outcomes in ([False], [True], [False, True], [True, False]):
        history = [ToolCall("check_user", {"user": recorded}, ok, succeeded=ok) for ok in outcomes]
        decision = guard.session(history).check(refund)
        assert decision == guard.check(refund, history)
        assert decision.allowed == (True in outcomes and recorded == asked)


def test_bad_calls_and_histories_are_named_and_nothing_is_recorded():
    guard = Guard.from_rules([Rule("refund", Single.of("check_user", {"user": "user"}), ("user",))])
    session = guard.session([ToolCall("check_user", {"user": "bob"}, True)])
    cases = [
        (lambda: session.check(None), "GuardSession.check: the call must be a ToolCall, got NoneType"),
        (
            lambda: session.record({"name": "refund"}),
            "GuardSession.record: the call must be a ToolCall, got dict (build",
        ),
        (
            lambda: session.record(ToolCall("refund", None)),
            "GuardSession.record: the call: the arguments must be a mapping",
        ),
        (lambda: guard.session(None), "guard.session: history must be a list of ToolCall, got NoneType"),
        (
            lambda: guard.session([ToolCall("a"), "b"]),
            "guard.session: history[1] must be a ToolCall, got str",
        ),
        (
            lambda: guard.wrap(len, None)("x"),
            "guard.wrap: history must be a list of ToolCall or a GuardSession",
        ),
        (
            lambda: guard.wrap(len, [None], name="hello")("x"),
            "GuardSession.sync: history[0] must be a ToolCall",
        ),
    ]
    for attempt, wording in cases:
        with pytest.raises(TypeError) as raised:
            attempt()
        assert str(raised.value).startswith(wording)
    assert len(session) == 1 and session.check(ToolCall("refund", {"user": "bob"})).allowed


def test_a_refusal_names_odd_names_and_values_as_the_full_reading_does():
    """A session writes a refusal's unverified parts from templates made once per rule: names and
    parameters with braces, values that render with quotes, a variable the call leaves out, a
    helper suggested twice with equal values, and a literal all come out as ``Guard.check`` writes them."""
    verifiers = {
        "known {0}": Or([Single.of("look{}up", {"who}": "user"}), Single.of("look{}up", {"who}": "buyer"})]),
        "flagged": Single.of("flag", {"on": "value True"}),
        "named {x}": Single.of("ch{e}ck", {"p{": "user"}),
    }
    rules = [
        Rule(
            "pay",
            And([Single.of("known {0}", {"user": "user", "buyer": "buyer"}), Single.of("flagged", {})]),
            ("user", "buyer"),
        ),
        Rule("send", Single.of("known {0}", {"user": "user", "buyer": "buyer"}), ("user", "buyer")),
        Rule("hold", Single.of("named {x}", {"user": "user"}), ("user",)),
    ]
    guard = Guard.from_rules(rules, verifiers)
    for call in [
        ToolCall("pay", {"user": "bob", "buyer": "bob"}),  # the two suggestions are one helper call
        ToolCall("pay", {"user": "it's {0}", "buyer": "x y"}),
        ToolCall("send", {"user": "bob"}),  # buyer left out: the parameter shows its variable
        ToolCall("send", {"user": ["a", "b"], "buyer": {"k": "{}"}}),
        ToolCall("hold", {"user": "it's {0}"}),  # one helper to suggest: written from templates
        ToolCall("hold", {}),
        ToolCall("hold", {"user": "{}"}),
    ]:
        decision = guard.session().check(call)
        assert not decision.allowed and decision == guard.check(call, [])
        if call.name == "send" and "buyer" in call.arguments:
            assert (
                "look{}up(who}=" in decision.explanation
                and "known {0}(user=['a', 'b']" in decision.explanation
            )
    assert decision.explanation.endswith(
        """Unverified: "named {x}(user='{}')" (verify with ch{e}ck(p{='{}'))."""
    )


def test_refusals_kept_by_their_values_tell_equal_values_of_other_types_apart():
    """Refusals are kept by the values they show (a retry costs no new text): 1, 1.0 and True, or
    0.0 and -0.0, are equal but written apart, and NaN equals nothing; each refusal still reads
    as the walk of the whole trace writes it, values of the call's own type included."""
    verifiers = {"known": Or([Single.of("lookup", {"who": "user"}), Single.of("scan", {})])}
    guard = Guard.from_rules([Rule("pay", And([Single.of("known", {"user": "user"})]), ("user",))], verifiers)
    session = guard.session()
    for _ in range(2):
        for value in [1, 1.0, True, 0.0, -0.0, 0, False, NAN, "1", None]:
            call = ToolCall("pay", {"user": value})
            decision = session.check(call)
            expected = guard.check(call, [])
            assert decision == expected and decision.explanation == expected.explanation
            assert procedure_problem([call], 0, guard.sop, ObservedFacts([], "")) in decision.explanation
            shown = decision.unmet[0].helpers[0].args[0][1]
            assert type(shown) is type(value) and repr(shown) == repr(value)


def test_a_first_refusal_written_from_templates_reads_as_the_walk_of_the_trace_writes_it():
    """A constraint none of whose checks was made is written from templates made once per rule: values
    with quotes, braces, runs of spaces or the words of a failure (then the problem tells what its
    checks found), and a helper whose call failed (then the problem names that call), read as the
    walk of the whole trace (``procedure_problem``) writes them, first and kept."""
    verifiers = {
        "known": Or([Single.of("lookup", {"who": "user"}), Single.of("scan", {})]),
        "funded": Or([Single.of("balance", {"who": "user"}), Single.of("scan", {})]),
        "logged_in": Single.of("login", {"who": "user"}),
    }
    parts = {
        "known": Single.of("known", {"user": "user"}),
        "funded": Single.of("funded", {"user": "user", "amount": "amount"}),
        "logged_in": Single.of("logged_in", {"user": "user"}),
    }
    rules = [
        Rule("pay", And([parts["known"], parts["funded"]]), ("user", "amount")),
        Rule("send", And([parts["logged_in"], parts["funded"]]), ("user", "amount")),
    ]
    guard = Guard.from_rules(rules, verifiers)
    values = [
        "bob",
        "it's {0}",
        "a  b",
        "x did not succeed",
        "did  not  succeed",
        "did not\nsucceed",
        2.5,
        NAN,
        ["a  b"],
    ]
    failed = [
        ToolCall("login", {"who": "bob"}, False, succeeded=False),
        ToolCall("login", {"who": 2.5}, None, False),
    ]
    for history in ([], failed):
        session = guard.session(history)
        for _ in range(2):
            for user in values:
                for name in ("pay", "send"):
                    for arguments in ({"user": user, "amount": user}, {"amount": user}):
                        call = ToolCall(name, arguments)
                        decision = session.check(call)
                        assert decision == guard.check(call, history)
                        trace = [*history, call]
                        problem = procedure_problem(
                            trace, len(history), guard.sop, ObservedFacts(history, "")
                        )
                        assert decision.explanation.startswith(
                            f"{call} was not executed: its SOP is not verified: {problem}."
                        )
