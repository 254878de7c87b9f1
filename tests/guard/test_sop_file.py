"""SOP files (``Guard.from_file``, the rules ``Guard.from_rules`` takes, as JSON): what they give,
and a malformed one told in one line naming the file and the place, by the library and by
`sopbench guard proxy` (which checks it before it starts anything)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sopbench.constraints import And, Rule, Single
from sopbench.guard import Guard, ToolCall
from sopbench.tasks import LoadError

RULES = {
    "rules": [
        {
            "action": "refund",
            "params": ["user", "order", "amount"],
            "constraints": [
                "and",
                [
                    ["single", "verify_identity", {"user": "user"}],
                    ["single", "lookup_order", {"user": "user", "order": "order"}],
                ],
            ],
        },
        {"action": "lookup_order", "params": ["user", "order"], "constraints": None, "read_only": True},
    ]
}


def test_an_sop_file_judges_as_the_same_rules_given_in_python(tmp_path: Path) -> None:
    path = tmp_path / "sop.json"
    path.write_text(json.dumps(RULES))
    sop = And(
        [
            Single.of("verify_identity", {"user": "user"}),
            Single.of("lookup_order", {"user": "user", "order": "order"}),
        ]
    )
    in_python = Guard.from_rules(
        [
            Rule("refund", sop, ("user", "order", "amount")),
            Rule("lookup_order", None, ("user", "order"), True),
        ]
    )
    from_file = Guard.from_file(path)
    history = [
        ToolCall("verify_identity", {"user": "bob"}, True, True),
        ToolCall("lookup_order", {"user": "alice", "order": "A1"}, {}, True),
    ]
    for call in (
        ToolCall("refund", {"user": "alice", "order": "A1", "amount": 3}),
        ToolCall("refund", {"user": "bob", "order": "A1", "amount": 3}),
    ):
        assert from_file.check(call, history) == in_python.check(call, history)
    assert not from_file.check(
        ToolCall("refund", {"user": "alice", "order": "A1", "amount": 3}), history
    ).allowed


BAD = [
    ('{"rules": [', "sop.json: invalid JSON"),
    (
        '{"rules": [{"action": "x", "params": ["u"], "constraints": ["xor", []]}]}',
        'sop.json: field "rules[0].constraints": unknown operator "xor"',
    ),
    (
        '{"rules": [{"action": "x", "params": ["u"], "constraints": ["single", "h", {"user": "v"}]}]}',
        'sop.json: field "rules[0].constraints[2]": "h" maps "user" to variable "v", which is not bound',
    ),
    (
        '{"rules": [{"action": "x", "constraints": null}, {"action": "x", "constraints": null}]}',
        "sop.json: field \"rules[1].action\": a second rule for 'x'",
    ),
    ('{"rules": [{"action": "x"}]}', 'sop.json: field "rules[0].constraints": missing'),
    ('{"rule": []}', 'sop.json: field "rule": unknown field'),
    ("[]", 'sop.json: expected an object with "rules", got a list'),
    ('{"rules": [], "goal": "y"}', "sop.json: field \"goal\": 'y' has no rule"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_a_malformed_sop_file_is_one_line_naming_the_file_and_the_place(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "sop.json"
    path.write_text(text)
    with pytest.raises(LoadError) as caught:
        Guard.from_file(path)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_proxy_refuses_a_malformed_sop_file_before_it_starts_anything(tmp_path: Path) -> None:
    path = tmp_path / "sop.json"
    path.write_text('{"rules": [{"action": "x", "params": ["u"], "constraints": ["xor", []]}]}')
    done = subprocess.run(
        [sys.executable, "-m", "sopbench.cli", "guard", "proxy", "--sop", str(path), "--", "no-such-server"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert (
        line
        == f'error: --sop {path}: field "rules[0].constraints": unknown operator "xor" (expected one of single, and, or, chain, gate)'
    )
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--", "server"], "error: name the SOP: --sop FILE, or --domain NAME [--task ID] (not both)"),
        (["--domain", "nowhere", "--", "server"], "error: --domain nowhere: not a domain"),
        (["--domain", "bank"], "error: no upstream command"),
        (
            ["--task", "apply_credit_card[0]", "--", "server"],
            "error: --task apply_credit_card[0]: which domain?",
        ),
    ],
)
def test_the_proxy_s_usage_errors_are_one_line(options: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sopbench.cli", "guard", "proxy", *options],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(message)


def test_the_decision_log_never_replaces_an_input(tmp_path: Path) -> None:
    path = tmp_path / "sop.json"
    path.write_text(json.dumps(RULES))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sopbench.cli",
            "guard",
            "proxy",
            "--sop",
            str(path),
            "--log",
            str(path),
            "--",
            "x",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: --log {path}")
    assert json.loads(path.read_text()) == RULES
