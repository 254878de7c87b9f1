"""The runner's public surface: the few names a user of ``run`` needs at the top, and each part the
front ends and tools build on in one public submodule, every name with exactly one public home."""

from __future__ import annotations

import importlib

import pytest

import sopbench.runner

SUBMODULES = ("episode", "store", "export", "baselines", "frontend")


def public_names(module_name: str) -> list[str]:
    return list(importlib.import_module(module_name).__all__)


def test_the_top_level_holds_the_dozen_names_a_user_of_run_needs() -> None:
    names = public_names("sopbench.runner")
    assert len(names) <= 16
    for needed in ("run", "RunSpec", "read_run", "StoredRun", "EpisodeRow", "Manifest", "export_jsonl"):
        assert needed in names
    # What a front end or a tool builds on is not at the top.
    for part in ("Store", "open_existing", "play_row", "run_many", "source_baselines", "EXPORT_FIELDS"):
        assert part not in names


def test_each_public_name_has_one_home() -> None:
    homes: dict[str, list[str]] = {}
    for module_name in ["sopbench.runner", *(f"sopbench.runner.{sub}" for sub in SUBMODULES)]:
        for name in public_names(module_name):
            homes.setdefault(name, []).append(module_name)
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}


@pytest.mark.parametrize("submodule", SUBMODULES)
def test_every_listed_name_is_there(submodule: str) -> None:
    module = importlib.import_module(f"sopbench.runner.{submodule}")
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []
    assert module.__doc__  # each part says what it is for


def test_the_submodules_are_named_in_the_package_doc() -> None:
    doc = sopbench.runner.__doc__ or ""
    for submodule in SUBMODULES:
        assert f".{submodule}``" in doc
