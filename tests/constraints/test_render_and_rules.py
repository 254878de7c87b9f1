import pytest

from sopbench.constraints import ConstraintError, HelperCall, Rule, Sop, parse, render

EXPR = parse(
    [
        "and",
        [
            ["single", "logged_in_user", {"username": "username"}],
            [
                "chain",
                [
                    ["single", "user_exists", {"username": "username"}],
                    ["single", "enough", {"username": "username", "amount": "amount"}],
                ],
            ],
            [
                "or",
                [
                    ["single", "not restricted", {"book": "title"}],
                    ["single", "member", {"username": "username"}],
                ],
            ],
        ],
    ]
)


def test_render_is_an_indented_outline():
    assert render(EXPR) == "\n".join(
        [
            "ALL of:",
            "  - logged_in_user(username=username)",
            "  - IN ORDER:",
            "    1. user_exists(username=username)",
            "    2. enough(username=username, amount=amount)",
            "  - ANY of:",
            "    - NOT restricted(book=title)",
            "    - member(username=username)",
        ]
    )


def test_render_fills_in_bound_values_and_custom_wording():
    text = render(EXPR, bindings={"username": "alice", "amount": 5})
    assert "enough(username=alice, amount=5)" in text
    worded = render(EXPR, describe=lambda s: f"<{s.name}>")
    assert "  - <logged_in_user>" in worded
    assert render(None) == "(no constraints)"


def test_helper_identity_includes_bound_parameters():
    alice = HelperCall.of("internal_check_username_exist", {"username": "alice"})
    bob = HelperCall.of("internal_check_username_exist", {"username": "bob"})
    assert alice != bob
    assert str(alice) == "internal_check_username_exist(username=alice)"


def test_required_helpers_follow_verification_processes():
    rule = Rule("transfer", EXPR, ("username", "amount", "title"))
    verifiers = {
        "logged_in_user": parse(["single", "login_user", {"username": "username"}]),
        "enough": parse(
            ["or", [["single", "get_balance", {"username": "username"}], ["single", "get_db", None]]]
        ),
        "restricted": None,
    }
    helpers = rule.required_helpers({"username": "alice", "amount": 5, "title": "Dune"}, verifiers)
    assert [str(h) for h in helpers] == [
        "login_user(username=alice)",
        "user_exists(username=alice)",
        "get_balance(username=alice)",
        "get_db()",
        "member(username=alice)",
    ]


def test_sop_validation_finds_unbound_variables_and_cycles():
    bad = Sop({"t": Rule("t", parse(["single", "x", {"u": "nobody"}]), ("username",))})
    with pytest.raises(ConstraintError, match='t.constraints\\[2\\]: "x" maps "u" to variable "nobody"'):
        bad.validate()
    cyclic = Sop(
        {
            "a": Rule("a", parse(["single", "b", None])),
            "b": Rule("b", parse(["single", "a", None])),
        }
    )
    with pytest.raises(ConstraintError, match="cycle: a -> b -> a"):
        cyclic.validate()
