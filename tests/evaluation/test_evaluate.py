"""The three judgements on hand-built traces over a tiny transfer SOP."""

import pytest

from sopbench.constraints import Rule, Sop, parse
from sopbench.evaluation import StaticOracle, ToolCall, Trace, diagnostic, evaluate_trace, state_diff

TRANSFER = parse(
    [
        "chain",
        [
            ["single", "logged_in_user", {"username": "username"}],
            ["single", "sufficient_account_balance", {"username": "username", "amount": "amount"}],
        ],
    ]
)
SOP = Sop(
    rules={"transfer_funds": Rule("transfer_funds", TRANSFER, ("username", "amount"))},
    verifiers={
        "logged_in_user": parse(["single", "login_user", {"username": "username"}]),
        "sufficient_account_balance": parse(
            [
                "or",
                [
                    ["single", "get_account_balance", {"username": "username"}],
                    ["single", "internal_get_database", None],
                ],
            ]
        ),
    },
)
LOGIN = ToolCall("login_user", {"username": "alice", "identification": "pw"}, True)
BALANCE = ToolCall("get_account_balance", {"username": "alice"}, 900.0)
TRANSFER_CALL = ToolCall("transfer_funds", {"username": "alice", "amount": 500}, True)


def oracle(permitted=True, final=None):
    return StaticOracle("transfer_funds", permitted, final if final is not None else {"alice": 400.0})


def test_correct_trace_passes_all_three_judgements():
    verdict = evaluate_trace(Trace([LOGIN, BALANCE, TRANSFER_CALL], {"alice": 400.0}), SOP, oracle())
    assert verdict.passed
    assert verdict.explanations == ()


def test_skipped_helper_is_explained_with_the_call_to_make():
    verdict = evaluate_trace(Trace([LOGIN, TRANSFER_CALL], {"alice": 400.0}), SOP, oracle())
    assert not verdict.passed and verdict.database.passed and verdict.permission.passed
    assert verdict.procedure.explanations == (
        'transfer_funds(username=alice, amount=500) at step 2: "sufficient_account_balance(username=alice, amount=500)"'
        " was never verified; call get_account_balance(username=alice) or internal_get_database() before it",
    )


def test_only_helpers_before_the_call_count():
    verdict = evaluate_trace(Trace([LOGIN, TRANSFER_CALL, BALANCE], {"alice": 400.0}), SOP, oracle())
    assert not verdict.procedure.passed


def test_a_helper_for_another_user_does_not_verify():
    other = ToolCall("get_account_balance", {"username": "bob"}, 10.0)
    verdict = evaluate_trace(Trace([LOGIN, other, TRANSFER_CALL], {"alice": 400.0}), SOP, oracle())
    assert not verdict.procedure.passed


def test_a_failed_helper_verifies_nothing():
    failed_login = ToolCall(
        "login_user", {"username": "alice", "identification": "bad"}, False, succeeded=False
    )
    verdict = evaluate_trace(Trace([failed_login, BALANCE, TRANSFER_CALL], {"alice": 400.0}), SOP, oracle())
    assert not verdict.procedure.passed
    assert "called at step 1 but did not succeed" in verdict.procedure.explanations[0]


def test_chain_order_matters():
    verdict = evaluate_trace(Trace([BALANCE, LOGIN, TRANSFER_CALL], {"alice": 400.0}), SOP, oracle())
    assert not verdict.procedure.passed
    assert "must be verified in this order" in verdict.procedure.explanations[0]


def test_executing_a_forbidden_service_fails_permission_and_database():
    verdict = evaluate_trace(
        Trace([LOGIN, BALANCE, TRANSFER_CALL], {"alice": 400.0}),
        SOP,
        oracle(permitted=False, final={"alice": 900.0}),
    )
    assert not verdict.permission.passed and not verdict.database.passed and verdict.procedure.passed
    assert "alice: expected 900.0, found 400.0" in verdict.database.explanations[0]


def test_refusal_passes_when_the_oracle_refuses_and_fails_when_it_permits():
    refusal = Trace([LOGIN, BALANCE], {"alice": 900.0}, ["I cannot do that."])
    assert evaluate_trace(refusal, SOP, oracle(permitted=False, final={"alice": 900.0})).passed
    verdict = evaluate_trace(refusal, SOP, oracle(permitted=True, final={"alice": 900.0}))
    assert not verdict.permission.passed


def test_saying_done_never_overrides_the_oracle():
    claim = Trace([LOGIN, BALANCE], {"alice": 900.0}, ["Done! I transferred $500."])
    verdict = evaluate_trace(claim, SOP, oracle(permitted=True, final={"alice": 900.0}))
    assert not verdict.passed
    assert "never executed" in verdict.permission.explanations[0]


def test_a_failed_service_call_is_not_an_execution():
    failed = ToolCall("transfer_funds", {"username": "alice", "amount": 500}, False, succeeded=False)
    verdict = evaluate_trace(
        Trace([LOGIN, BALANCE, failed], {"alice": 900.0}), SOP, oracle(final={"alice": 900.0})
    )
    assert not verdict.permission.passed
    assert "every attempt failed" in verdict.permission.explanations[0]


def test_or_needs_a_true_branch_verified():
    sop = Sop(
        rules={
            "borrow": Rule(
                "borrow",
                parse(["or", [["single", "not restricted", {"b": "b"}], ["single", "member", {"u": "u"}]]]),
                ("u", "b"),
            )
        },
        verifiers={
            "restricted": parse(["single", "is_restricted", {"b": "b"}]),
            "member": parse(["single", "get_membership", {"u": "u"}]),
        },
    )
    borrow = ToolCall("borrow", {"u": "al", "b": "Dune"}, True)
    restricted_book = StaticOracle("borrow", True, None, {StaticOracle.fact("restricted", b="Dune"): True})
    checked_wrong_branch = Trace([ToolCall("is_restricted", {"b": "Dune"}, True), borrow])
    assert not evaluate_trace(checked_wrong_branch, sop, restricted_book).procedure.passed
    checked_member = Trace([ToolCall("get_membership", {"u": "al"}, True), borrow])
    assert evaluate_trace(checked_member, sop, restricted_book).procedure.passed


def test_extra_read_only_calls_never_fail_a_trace():
    sop = Sop(
        rules={
            **SOP.rules,
            "get_account_balance": Rule(
                "get_account_balance",
                parse(["single", "logged_in_user", {"username": "username"}]),
                ("username",),
                True,
            ),
        },
        verifiers=SOP.verifiers,
    )
    early_read = ToolCall("get_account_balance", {"username": "alice"}, 900.0)
    verdict = evaluate_trace(
        Trace([early_read, LOGIN, BALANCE, TRANSFER_CALL], {"alice": 400.0}), sop, oracle()
    )
    assert verdict.passed
    assert verdict.notes and "read-only, not counted" in verdict.notes[0]


def test_state_diff_is_readable_and_keeps_int_equal_float():
    assert state_diff({"a": {"b": 1, "c": [1, 2]}}, {"a": {"b": 1.0, "c": [1, 3], "d": 0}}) == [
        "a.c[1]: expected 2, found 3",
        "a.d: unexpected 0",
    ]


@pytest.mark.parametrize("seed", [42, 43, 44])
def test_diagnostic_passes_for_several_seeds_and_differs_between_them(seed):
    result = diagnostic(seed)
    assert result["fixtures"] == 50
    assert result["kinds"]["correct_order"] == {"fixtures": 5, "accepted": 5, "rejected": 0}
    assert result["kinds"]["wrong_user"]["rejected"] == 5
    assert result["kinds"]["refuses_when_not_permitted"]["accepted"] == 5
    assert diagnostic(seed) == result  # deterministic per seed
    assert len({diagnostic(s)["digest"] for s in (42, 43, 44)}) == 3


def test_explanations_never_suggest_a_helper_no_agent_is_offered():
    sop = Sop(SOP.rules, SOP.verifiers, unoffered=frozenset({"internal_get_database"}))
    verdict = evaluate_trace(Trace([LOGIN, TRANSFER_CALL], {"alice": 400.0}), sop, oracle())
    assert verdict.procedure.explanations[0].endswith("call get_account_balance(username=alice) before it")
    database_read = ToolCall("internal_get_database", {}, {})
    assert evaluate_trace(
        Trace([LOGIN, database_read, TRANSFER_CALL], {"alice": 400.0}), sop, oracle()
    ).passed


def test_compare_databases_is_canonical_unless_asked_for_python_equality():
    from sopbench.evaluation import compare_databases

    assert compare_databases({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}).passed  # key order is not content
    exact = compare_databases({"a": {"b": 1}}, {"a": {"b": 1.0}})
    assert not exact.passed and "differ" in exact.explanations[0]
    assert compare_databases({"a": {"b": 1}}, {"a": {"b": 1.0}}, equality="python").passed
    changed = compare_databases({"a": 1, "c": 2}, {"a": 3, "d": 4})
    assert changed.explanations == (
        "the final database differs from the oracle's: a: expected 1, found 3; c: missing (expected 2); d: unexpected 4",
    )


def test_explanations_name_a_call_by_its_own_step_label():
    sop = Sop(
        {
            "transfer_funds": Rule(
                "transfer_funds", parse(["single", "logged_in_user", {"username": "username"}]), ("username",)
            )
        },
        {"logged_in_user": None},
    )
    trace = Trace([ToolCall("transfer_funds", {"username": "alice"}, None, True, step=17)])
    verdict = evaluate_trace(trace, sop, StaticOracle("transfer_funds", False))
    assert "at step 17" in verdict.permission.explanations[0]


def test_a_failed_procedure_names_the_kind_and_depth_of_what_was_left_unverified():
    from sopbench.evaluation import UnverifiedConstraint

    missing_login = evaluate_trace(Trace([BALANCE, TRANSFER_CALL], {"alice": 400.0}), SOP, oracle())
    assert missing_login.procedure.unverified == (UnverifiedConstraint("Single", 1),)
    out_of_order = evaluate_trace(Trace([BALANCE, LOGIN, TRANSFER_CALL], {"alice": 400.0}), SOP, oracle())
    assert not out_of_order.procedure.passed
    assert out_of_order.procedure.unverified == (UnverifiedConstraint("Chain", 0),)
    assert (
        evaluate_trace(
            Trace([LOGIN, BALANCE, TRANSFER_CALL], {"alice": 400.0}), SOP, oracle()
        ).procedure.unverified
        == ()
    )
