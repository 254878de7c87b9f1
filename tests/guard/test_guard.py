"""The runtime guard: allowed after the right helper calls, refused otherwise, with the reason."""

import json
import random
from pathlib import Path
from types import SimpleNamespace

import pytest

from sopbench.constraints import And, Chain, Not, Or, Rule, Single
from sopbench.diagnosis import mutants, reference_calls
from sopbench.domains import LenientSystem, get_domain
from sopbench.guard import Guard, Refused, ToolCall, execute_tool_calls
from sopbench.scoring import SOUND, EpisodeCall, score_episode
from sopbench.tasks import iter_all_tasks

TASKS = Path(__file__).resolve().parents[2].parent / "shared" / "sopbench" / "tasks"


def check_user(user):
    return ToolCall("check_user", {"user": user}, True)


def refund_guard(expr):
    return Guard.from_rules([Rule("refund", expr, ("user", "amount"))])


def test_allowed_only_after_the_helper_call_for_the_same_user():
    guard = refund_guard(Single.of("check_user", {"user": "user"}))
    refund = ToolCall("refund", {"user": "bob", "amount": 5})
    refused = guard.check(refund, [])
    assert not refused.allowed
    assert [u.constraint for u in refused.unmet] == ["check_user(user=bob)"]
    assert [str(h) for h in refused.unmet[0].helpers] == ["check_user(user=bob)"]
    assert "check_user(user=bob)" in refused.explanation
    assert not guard.check(refund, [check_user("alice")]).allowed  # alice does not verify bob
    assert guard.check(refund, [check_user("bob")]).allowed
    # a helper call that failed verifies nothing
    assert not guard.check(refund, [ToolCall("check_user", {"user": "bob"}, False, succeeded=False)]).allowed
    # actions without a rule are not guarded
    assert guard.check(ToolCall("hello", {}), []).allowed


def test_and_or_chain_and_negation():
    user = {"user": "user"}
    both = refund_guard(And([Single.of("check_user", user), Single.of("check_id", user)]))
    refund = ToolCall("refund", {"user": "bob"})
    id_ok = ToolCall("check_id", {"user": "bob"}, True)
    assert not both.check(refund, [check_user("bob")]).allowed
    assert both.check(refund, [check_user("bob"), id_ok]).allowed

    either = refund_guard(Or([Single.of("check_user", user), Single.of("check_id", user)]))
    decision = either.check(refund, [])
    assert not decision.allowed and {u.constraint for u in decision.unmet} == {
        "check_user(user=bob)",
        "check_id(user=bob)",
    }
    assert either.check(refund, [id_ok]).allowed
    # an alternative the agent saw to be false does not count
    assert not either.check(refund, [ToolCall("check_id", {"user": "bob"}, (True, False))]).allowed

    ordered = refund_guard(Chain([Single.of("check_user", user), Single.of("check_id", user)]))
    assert ordered.check(refund, [check_user("bob"), id_ok]).allowed
    swapped = ordered.check(refund, [id_ok, check_user("bob")])
    assert not swapped.allowed and "in this order" in swapped.explanation

    new_only = refund_guard(Not(Single.of("user_exists", user)))  # NOT: a check that answered False
    assert not new_only.check(refund, []).allowed
    assert new_only.check(refund, [ToolCall("user_exists", {"user": "bob"}, (True, False))]).allowed


def test_a_domain_guard_suggests_only_offered_helpers():
    guard = Guard.for_domain("bank")
    call = ToolCall("deposit_funds", {"username": "alice", "amount": 10, "unit": "dollar"})
    decision = guard.check(call, [])
    assert not decision.allowed
    helpers = {str(h) for u in decision.unmet for h in u.helpers}
    assert "internal_check_username_exist(username=alice)" in helpers
    assert not any("internal_get_database" in h for h in helpers)
    # read-only actions that are not a task's goal are not refused (the evaluator does not count them)
    assert guard.check(ToolCall("get_account_balance", {"username": "alice"}), []).allowed


def test_wrapped_plain_tools_refuse_with_the_explanation_and_share_a_history():
    guard = refund_guard(Single.of("check_user", {"user": "user"}))
    done = []

    def refund(user, amount=0):
        done.append(user)
        return True

    history = []
    safe_refund = guard.wrap(refund, history)
    safe_check = guard.wrap(lambda user: user == "bob", history, name="check_user")
    with pytest.raises(Refused) as refused:
        safe_refund("bob", amount=3)
    assert "check_user(user=bob)" in str(refused.value) and done == []
    assert safe_check("carol") is False  # a failed check verifies nothing
    with pytest.raises(Refused):
        safe_refund("carol")
    safe_check("bob")
    assert safe_refund("bob", amount=3) is True and done == ["bob"]


def test_a_wrapped_tool_names_its_arguments_in_the_order_of_its_parameters_however_called():
    guard = refund_guard(Single.of("check_user", {"user": "user"}))

    def refund(user, amount=0, *, note=""):
        return True

    def keyword_only(*, user, amount=0):
        return True

    for tool in (refund, keyword_only):
        history = []
        safe = guard.wrap(tool, history, name="refund")
        with pytest.raises(Refused) as refused:
            safe(amount=3, user="bob")  # keywords in another order than the parameters
        assert str(refused.value).startswith("refund(user=bob, amount=3) was not executed")
        with pytest.raises(Refused) as refused:
            safe(user="bob")  # a default left out is not an argument
        assert str(refused.value).startswith("refund(user=bob) was not executed")
        with pytest.raises(TypeError):
            safe(amount=3)  # a required parameter missing: not judged, not run
        with pytest.raises(TypeError):
            safe(user="bob", colour="red")  # a parameter the tool does not have
        assert history == []
    with pytest.raises(Refused) as refused:
        guard.wrap(refund, [])("bob", 3, note="x")  # by position as well
    assert str(refused.value).startswith("refund(user=bob, amount=3, note=x) was not executed")


def test_openai_tool_calls_run_only_when_allowed():
    guard = refund_guard(Single.of("check_user", {"user": "user"}))
    executed = []
    tools = {"check_user": lambda user: True, "refund": lambda user: executed.append(user) or "refunded"}
    history = []
    as_object = SimpleNamespace(id="c1", function=SimpleNamespace(name="refund", arguments='{"user": "bob"}'))
    messages = execute_tool_calls(guard, [as_object], tools, history)
    assert messages[0]["role"] == "tool" and messages[0]["tool_call_id"] == "c1"
    assert "not executed" in messages[0]["content"] and executed == []
    calls = [
        {"id": "c2", "type": "function", "function": {"name": "check_user", "arguments": '{"user": "bob"}'}},
        {"id": "c3", "type": "function", "function": {"name": "refund", "arguments": '{"user": "bob"}'}},
        {"id": "c4", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
        {"id": "c5", "type": "function", "function": {"name": "refund", "arguments": "{bad"}},
    ]
    replies = [m["content"] for m in execute_tool_calls(guard, calls, tools, history)]
    assert replies[:2] == ["True", "refunded"] and executed == ["bob"]
    assert replies[2] == "Error: Tool nope not found." and "not JSON" in replies[3]


@pytest.mark.skipif(not TASKS.exists(), reason="../shared/sopbench/tasks not found: published tasks needed")
def test_the_guard_agrees_with_the_evaluators_procedure_judgement_on_every_published_task():
    """Over each task's reference trace and its mutants, cut at the goal call: the guard allows every
    call exactly when the sound evaluator accepts the procedure. The only exceptions: an Or whose
    deciding alternative is an argument check (hotel's maximum stay), whose truth the guard cannot see."""
    rng = random.Random(42)
    agree, guard_too_lenient = 0, []
    for task in iter_all_tasks(TASKS):
        domain = get_domain(task.domain)
        if not domain.tools[task.goal].offered:
            continue
        reference = reference_calls(domain, task)
        fixtures = {
            "reference": reference,
            **{k: v[0] for k, v in mutants(domain, task, reference, rng).items()},
        }
        guard = Guard.for_task(task)
        for kind, calls in fixtures.items():
            goal_at = next((i for i, (tool, _) in enumerate(calls) if tool == task.goal), None)
            if goal_at is None:
                continue
            system = LenientSystem(domain, task.initial_database, task.constraint_parameters)
            history, episode, allowed = [], [], True
            for number, (tool, args) in enumerate(calls[: goal_at + 1]):
                allowed = guard.check(ToolCall(tool, args), history).allowed and allowed
                outcome = system.execute(tool, args)
                history.append(ToolCall(tool, args, outcome.content("value"), outcome.ok))
                episode.append(EpisodeCall(tool, json.dumps(args), outcome.content("value"), 2 * number + 2))
            accepted = score_episode(task, episode, system.db, SOUND).checks["dirgraph_satisfied"]
            if accepted == allowed:
                agree += 1
            else:
                assert allowed and not accepted, (task.domain, task.index, kind)  # never refuses a good call
                guard_too_lenient.append((task.domain, task.goal, kind))
    assert agree == 1724
    assert len(guard_too_lenient) == 12
    assert {(d, k) for d, _, k in guard_too_lenient} == {("hotel", "execute_despite_false_constraint")}
