"""The one bound on JSON from outside (``sopbench._json``): what passes is exactly what orjson can
write back within the bound, whatever the input; everything else is a one-line ``JsonBoundError``
(a ``ValueError``) or the parser's own ``ValueError``, never a ``RecursionError`` or a crash."""

from __future__ import annotations

import math

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sopbench._json import (
    MAX_DOCUMENT_DEPTH,
    MAX_VALUE_BYTES,
    MAX_VALUE_DEPTH,
    JsonBoundError,
    check_json_depth,
    check_value,
    decode_bounded,
    decode_document,
    decode_toml_bounded,
)


def nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", [0, 1, MAX_VALUE_DEPTH])
def test_values_up_to_the_bound_decode(depth):
    assert decode_bounded(nested(depth)) == orjson.loads(nested(depth))


@pytest.mark.parametrize("depth", [MAX_VALUE_DEPTH + 1, 260, 900, 1025, 5000, 100_000])
@pytest.mark.parametrize("prefix", ["", '{"n": NaN, "x": '])  # NaN: Python's json reads it (recursively)
def test_values_past_the_bound_are_refused_at_any_depth(depth, prefix):
    text = prefix + nested(depth) + ("}" if prefix else "")
    with pytest.raises(JsonBoundError, match=f"^nested deeper than {MAX_VALUE_DEPTH} levels$"):
        decode_bounded(text)


def test_what_pythons_json_reads_is_read_leniently():
    assert math.isnan(decode_bounded('{"a": NaN}')["a"])
    with pytest.raises(ValueError, match="Expecting property name"):  # json's wording
        decode_bounded("{bad")
    with pytest.raises(ValueError):
        decode_document('{"a": NaN}')  # files are strict, as before


def test_integers_orjson_cannot_write_are_refused():
    with pytest.raises(JsonBoundError, match="holds a value that cannot be stored"):
        decode_bounded('{"n": NaN, "big": 123456789012345678901234567890}')
    with pytest.raises(JsonBoundError, match="holds a value that cannot be stored"):
        check_value({"big": 2**70})


def test_sizes_are_bounded_before_decoding():
    with pytest.raises(JsonBoundError, match=r"^larger than 4 MiB \(4 MiB\)$"):
        decode_bounded(" " * (MAX_VALUE_BYTES + 1))
    with pytest.raises(JsonBoundError, match="larger than 10 bytes"):
        decode_document(b"[1, 2, 3, 4]", size=10)


@pytest.mark.parametrize("depth", [MAX_DOCUMENT_DEPTH + 1, 1025, 100_000])
def test_documents_are_bounded_at_what_orjson_writes_back(depth):
    assert decode_document("[" * MAX_DOCUMENT_DEPTH + "]" * MAX_DOCUMENT_DEPTH)
    with pytest.raises(JsonBoundError, match=f"^nested deeper than {MAX_DOCUMENT_DEPTH} levels$"):
        decode_document("[" * depth + "]" * depth)


@pytest.mark.parametrize("deepest", [0, 1, 2])
def test_a_list_of_records_is_bounded_by_its_deepest_record(deepest):
    # A trajectory file is a list of records, checked a few at a time: the bound is the same.
    def records(depth_of_deepest: int) -> str:
        nested = "[" * depth_of_deepest + "]" * depth_of_deepest
        others = ['{"a": [1]}'] * 3
        others.insert(deepest, '{"deep": ' + nested + "}")
        return "[" + ", ".join(others) + "]"

    assert decode_document(records(MAX_DOCUMENT_DEPTH - 2))  # list, object, then the nested lists
    with pytest.raises(JsonBoundError, match=f"^nested deeper than {MAX_DOCUMENT_DEPTH} levels$"):
        decode_document(records(MAX_DOCUMENT_DEPTH - 1))
    with pytest.raises(JsonBoundError, match="holds a value that cannot be stored"):
        check_value([1, {"big": 2**70}, 3])


def test_toml_nested_without_end_is_refused():
    with pytest.raises(JsonBoundError, match="nested deeper than"):
        decode_toml_bounded("a = " + "[" * 100_000 + "]" * 100_000)
    assert decode_toml_bounded("a = [[1]]") == {"a": [[1]]}


def test_a_deep_python_object_is_measured_without_recursion():
    deep: list = []
    for _ in range(200_000):
        deep = [deep]
    with pytest.raises(JsonBoundError):
        check_json_depth(deep)
    check_json_depth(deep, limit=200_001)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


@given(JSON)
def test_any_json_orjson_writes_reads_back_equal(value):
    text = orjson.dumps(value)
    assert decode_document(text) == orjson.loads(text)
    assert decode_bounded(text.decode()) == orjson.loads(text)
