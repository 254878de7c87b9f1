"""What the published ``eval`` made of recorded strings, computed without ``eval``."""

from __future__ import annotations

import pytest

from sopbench.scoring import OPAQUE, literal_value, python_value, read_arguments


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("True", True),
        ("None", None),
        ("750", 750),
        ("-3", -3),
        ("1000.0", 1000.0),
        ("1e3", 1000.0),
        ("(True, 750)", (True, 750)),
        ("{'a': [1, (2, 3)]}", {"a": [1, (2, 3)]}),
        ("2024-10-12", 2002),  # arithmetic
        ("2025-01-01", "2025-01-01"),  # leading zeros: a syntax error, kept
        ("KeyError: 'bob'", "KeyError: 'bob'"),
        ("Error: Tool x not found.", "Error: Tool x not found."),
        ('{"a": true}', '{"a": true}'),  # JSON true is an unknown name
        ('{"a": null}', '{"a": null}'),
        ("  42", 42),  # eval strips leading spaces and tabs
        ("1/0", "1/0"),  # raises: kept
        ("x", "x"),  # the evaluator's own local: the text itself
        ("10:00-11:00", "10:00-11:00"),
        ("{1: 2}", {1: 2}),
        ("{[1]: 2}", "{[1]: 2}"),  # unhashable key raises: kept
        ("", ""),
        ("3 > 2", True),
        ("1 if 0 else 2", 2),
    ],
)
def test_python_value(text: str, expected: object) -> None:
    assert python_value(text) == expected
    assert type(python_value(text)) is type(expected)


def test_names_the_published_eval_could_resolve_are_opaque() -> None:
    assert python_value("max") is OPAQUE
    assert python_value("json") is OPAQUE
    assert python_value("max") != "max"


def test_runaway_inputs_are_refused_not_computed() -> None:
    assert python_value("9**9**9**9") == "9**9**9**9"
    assert python_value("'a' * 10**9") == "'a' * 10**9"
    assert python_value("[" * 500 + "]" * 500) == "[" * 500 + "]" * 500
    assert python_value("__import__('os').system('true')") == "__import__('os').system('true')"


def test_literal_value_has_no_arithmetic() -> None:
    assert literal_value("2024-10-12") == "2024-10-12"
    assert literal_value("(True, 750)") == (True, 750)
    assert literal_value("max") == "max"


def test_arguments_read_like_eval_only_under_the_quirk() -> None:
    decoded = {"a": None}
    assert read_arguments('{"a": null}', decoded, python_eval=True) == '{"a": null}'
    assert read_arguments('{"a": null}', decoded, python_eval=False) is decoded
    assert read_arguments('{"a": 1}', {"a": 1}, python_eval=True) == {"a": 1}
    assert read_arguments('{"a": Infinity}', {"a": float("inf")}, python_eval=True) == '{"a": Infinity}'
    assert read_arguments('{"a": "\\u00e9"}', {"a": "é"}, python_eval=True) == {"a": "é"}
