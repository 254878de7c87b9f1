"""What a guard keeps of its texts: keyed by the values they show (``value_key``), bounded (``KeptTexts``)."""

import math
import sys
import threading

import pytest

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


def test_kept_texts_shared_by_threads_stay_bounded_and_never_fail():
    kept: KeptTexts[int] = KeptTexts(8)
    failures: list[BaseException] = []

    def keep_many(offset: int) -> None:
        try:
            for n in range(20000):
                kept.keep((offset, n), n)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as they can
    try:
        threads = [threading.Thread(target=keep_many, args=(offset,)) for offset in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switching)
    assert failures == [] and len(kept) <= 8 + 4


def test_a_store_that_could_keep_nothing_is_refused():
    with pytest.raises(ValueError, match="at least one"):
        KeptTexts(0)
