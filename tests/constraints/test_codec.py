import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sopbench.constraints import (
    And,
    Chain,
    ConstraintError,
    Gate,
    Not,
    Or,
    Single,
    check_acyclic,
    dump,
    holds,
    parse,
    rename,
    validate,
)

names = st.sampled_from(["logged_in_user", "internal_check_username_exist", "amount_positive_restr", "x"])
params = st.one_of(
    st.none(),
    st.dictionaries(
        st.sampled_from(["username", "amount", "unit"]), st.sampled_from(["username", "dest", "amount"])
    ),
)
singles_encoded = st.builds(
    lambda neg, n, p: ["single", ("not " if neg else "") + n, p], st.booleans(), names, params
)
expressions = st.recursive(
    singles_encoded,
    lambda inner: st.builds(
        lambda op, kids: [op, kids],
        st.sampled_from(["and", "or", "chain", "gate"]),
        st.lists(inner, min_size=1, max_size=4),
    ),
    max_leaves=12,
)


@given(expressions)
def test_parse_then_dump_is_identity_on_generated_expressions(encoded):
    assert json.dumps(dump(parse(encoded))) == json.dumps(encoded)


def test_negation_prefix_becomes_a_flag_and_round_trips():
    expr = parse(["single", "not internal_check_username_exist", {"username": "username"}])
    assert expr == Single("internal_check_username_exist", (("username", "username"),), negated=True)
    assert dump(expr) == ["single", "not internal_check_username_exist", {"username": "username"}]


def test_null_params_and_empty_params_stay_distinct():
    assert dump(parse(["single", "within_registration_period", None])) == [
        "single",
        "within_registration_period",
        None,
    ]
    assert dump(parse(["single", "within_registration_period", {}])) == [
        "single",
        "within_registration_period",
        {},
    ]


@pytest.mark.parametrize(
    ("encoded", "message"),
    [
        (
            ["and", [["single", "a", None], ["xor", [["single", "b", None]]]]],
            'constraints[1][1]: unknown operator "xor"',
        ),
        (["and", []], 'constraints: "and" has no children'),
        (["or", [["chain", []]]], 'constraints[1][0]: "chain" has no children'),
        (["single", "a"], 'constraints: "single" takes a name and a parameter map'),
        (["single", "a", ["username"]], "constraints[2]: parameter map must be an object or null"),
        ("and", "constraints: expected a list"),
        (["single", "", None], "constraints[1]: constraint name must be a non-empty string"),
    ],
)
def test_bad_expressions_name_the_path(encoded, message):
    with pytest.raises(ConstraintError) as caught:
        parse(encoded)
    assert str(caught.value).startswith(message)


def test_validate_names_an_unbound_variable_and_its_path():
    expr = parse(
        ["and", [["single", "a", {"username": "username"}], ["single", "b", {"username": "destination"}]]]
    )
    validate(expr, {"username", "destination"})
    with pytest.raises(
        ConstraintError, match=r'constraints\[1\]\[1\]\[2\]: "b" maps "username" to variable "destination"'
    ):
        validate(expr, {"username"})


def test_cycles_in_helper_dependencies_are_reported_with_the_cycle():
    check_acyclic({"a": ["b"], "b": ["c"], "c": []})
    with pytest.raises(ConstraintError, match="cycle: a -> b -> c -> a"):
        check_acyclic({"a": ["b"], "b": ["c"], "c": ["a"]})


def test_not_applies_de_morgan():
    a, b = Single.of("a"), Single.of("b")
    assert Not(And([a, b])) == Or([Not(a), Not(b)])
    assert Not(Chain([a, b])) == Gate([Not(a), Not(b)])
    assert Not(Not(Chain([a, b]))) == Chain([a, b])


@given(expressions, st.dictionaries(names, st.booleans()))
def test_not_inverts_truth(encoded, truth):
    expr = parse(encoded)
    value = holds(expr, lambda s: truth.get(s.name, False))
    assert holds(Not(expr), lambda s: truth.get(s.name, False)) is (not value)


def test_holds_short_circuits_chains_so_guarded_checks_are_never_asked():
    asked = []

    def truth(single):
        asked.append(single.name)
        if single.name == "balance_enough":
            raise AssertionError("must not be evaluated when the user does not exist")
        return False

    expr = parse(["chain", [["single", "user_exists", None], ["single", "balance_enough", None]]])
    assert holds(expr, truth) is False
    assert asked == ["user_exists"]


def test_rename_expresses_a_callee_expression_in_the_callers_variables():
    process = parse(["single", "get_account_balance", {"username": "username"}])
    assert dump(rename(process, {"username": "destination_username"})) == [
        "single",
        "get_account_balance",
        {"username": "destination_username"},
    ]


def test_expressions_are_immutable_and_hashable():
    expr = And([Single.of("a"), Single.of("b")])
    with pytest.raises(AttributeError):
        expr.children = ()
    assert len({expr, And([Single.of("a"), Single.of("b")])}) == 1
