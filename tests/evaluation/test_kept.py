"""What a guard keeps of its texts: keyed by the values they show (``value_key``), bounded (``KeptTexts``)."""

import math

from sopbench.evaluation import KeptTexts, value_key


def test_equal_values_of_other_types_are_keyed_apart_and_nan_and_containers_not_at_all():
    keys = [value_key([value]) for value in (1, 1.0, True, 0, 0.0, -0.0, False, "1", None)]
    assert None not in keys and len(set(keys)) == len(keys)
    assert value_key(["bob", 2]) == value_key(["bob", 2]) != value_key([2, "bob"])
    assert value_key([]) == ()
    for odd in (math.nan, ["t", 1], ("t", 1), {"k": 1}, object()):
        assert value_key(["bob", odd]) is None


def test_kept_texts_hold_the_latest_ones_and_never_more_than_the_limit():
    kept: KeptTexts[str] = KeptTexts(3)
    for n in range(10):
        assert kept.keep(("user", n), f"text {n}") == f"text {n}"
        assert len(kept) == min(n + 1, 3)
    assert [kept.get(("user", n)) for n in range(10)] == [None] * 7 + ["text 7", "text 8", "text 9"]
    kept.keep(("user", 8), "again")  # a key kept already is replaced: nothing else is dropped
    assert len(kept) == 3 and kept.get(("user", 7)) == "text 7" and kept.get(("user", 8)) == "again"
