"""A text written from values as a template over their renderings: the same text for any values, or
no template when what is written depends on the values otherwise."""

import math

import pytest

from sopbench.constraints import HelperCall, Or, Single, format_single, format_value, render
from sopbench.evaluation import text_template

VALUES = ["bob", "it's {0}", "a  b", "{}", "", 1, 1.0, True, -0.0, None, math.nan, ["x", 1], {"k": "{"}]


def named(values):
    single = Single.of("kn{o}wn", {"who}": "user", "amount": "amount"})
    return (
        f'"{format_single(single, {"user": values[0], "amount": values[1]})}" and {format_value(values[0])}'
    )


def outline(values):
    return render(
        Or([Single.of("look", {"who": "user"}), Single.of("scan", {})]), bindings={"user": values[0]}
    )


@pytest.mark.parametrize("write", [named, outline])
def test_a_template_writes_what_the_function_writes_for_any_values(write):
    template = text_template(write, 2)
    assert template is not None
    for first in VALUES:
        for second in VALUES[:4]:
            assert template.format(format_value(first), format_value(second)) == write([first, second])


def test_no_template_when_values_are_compared_or_read_otherwise_or_the_words_hold_the_mark():
    def deduplicated(values):  # two helper calls are one when their values are equal
        helpers = [HelperCall("check", (("who", value),)) for value in values]
        return "; ".join(str(h) for i, h in enumerate(helpers) if h not in helpers[:i])

    assert text_template(deduplicated, 2) is None
    assert text_template(lambda values: str(len({values[0]})), 1) is None  # hashed
    assert text_template(lambda values: format_value(sorted(values)), 2) is None  # ordered
    assert text_template(lambda values: "x" if "y" in format_value(values[0]) else "z", 1) is None
    assert text_template(lambda values: "nul \x00 here " + format_value(values[0]), 1) is None
    assert text_template(lambda values: format_value(values[0]) * 2, 1) is None  # put in twice, rendered once
    assert text_template(lambda values: format_value(values[0]) + format_value(values[0]), 1) == "{0}{0}"
    assert text_template(lambda values: "fixed {text}", 1) == "fixed {{text}}"
