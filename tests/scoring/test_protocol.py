"""Protocols are the sound one plus named, documented quirks."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import sopbench.scoring
from sopbench.scoring import QUIRKS, SOPBENCH, SOUND, Protocol, protocol_by_name, quirk_names

# The registry module (the one that defines Protocol), reached through a public name: its docstring
# documents the quirks.
REGISTRY = inspect.getmodule(Protocol)


def test_sound_has_no_quirk_and_compat_has_them_all() -> None:
    assert SOUND.quirks == frozenset()
    assert SOPBENCH.quirks == frozenset(QUIRKS)
    assert protocol_by_name("sound") is SOUND
    assert protocol_by_name("sopbench") is SOPBENCH
    assert protocol_by_name("compat") is SOPBENCH


def test_unknown_names_raise_listing_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known: sound, sopbench"):
        protocol_by_name("lenient")
    with pytest.raises(ValueError, match="known quirks: first_call_only"):
        SOUND.with_quirks(enable=["no_such_quirk"])
    with pytest.raises(ValueError, match="no_such_quirk"):
        SOPBENCH.with_quirks(disable=["no_such_quirk"])


def test_toggling_quirks_names_the_result_and_returns_to_the_standard_protocols() -> None:
    one_off = SOPBENCH.with_quirks(disable=["python_eval"])
    assert one_off.name == "sopbench[-python_eval]"
    assert not one_off.has("python_eval")
    assert one_off.with_quirks(enable=["python_eval"]) is SOPBENCH
    everything = SOUND.with_quirks(enable=quirk_names())
    assert everything is SOPBENCH
    assert SOUND.with_quirks(enable=["graph_check"]).name == "sound[+graph_check]"


def test_every_quirk_is_documented_in_the_registry_docstring() -> None:
    assert REGISTRY is not None
    doc = REGISTRY.__doc__ or ""
    for name, quirk in QUIRKS.items():
        assert f"``{name}``" in doc, name
        assert quirk.spec and quirk.summary and quirk.published and quirk.sound
        assert quirk.refines is None or quirk.refines in QUIRKS


def test_the_engine_never_asks_for_a_protocol_by_name() -> None:
    assert REGISTRY is not None and REGISTRY.__file__ is not None
    registry = Path(REGISTRY.__file__)
    source = "".join(
        p.read_text() for p in Path(sopbench.scoring.__file__).parent.glob("_*.py") if p != registry
    )
    assert 'name == "sopbench"' not in source and "name == 'sopbench'" not in source
    assert 'name == "sound"' not in source
