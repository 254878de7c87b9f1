"""Derived per-domain tables agree with the published evaluator's (SOPBENCH_DOMAIN_TABLES.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sopbench.constraints import dump
from sopbench.domains import PUBLISHED_DOMAINS
from sopbench.scoring._tables import bind_strict_arguments, domain_tables, expanded_innate


@pytest.fixture(scope="module")
def published_tables(shared_dir: Path) -> dict:
    return json.loads((shared_dir / "reference" / "SOPBENCH_DOMAIN_TABLES.json").read_text())


@pytest.mark.parametrize("name", PUBLISHED_DOMAINS)
def test_innate_implications_are_the_published_ones(name: str, published_tables: dict) -> None:
    tables = domain_tables(name)
    published = published_tables[name]["derived_innate_implied_calls"]
    assert set(tables.published_implications) == set(published)
    for tool, entry in published.items():
        assert dump(expanded_innate(tables.domain, tool)) == entry["expanded_innate"], tool
        params = set(tables.domain.tools[tool].params)
        # The published table already drops implications whose names the caller's arguments lack
        # (checked here at run time, against the call's actual arguments).
        ours = {
            i.tool: {"param_names": list(i.keys), "bound_to_caller_args": [list(v) for v in i.variables]}
            for i in tables.published_implications[tool]
            if set(i.keys) <= params
        }
        assert ours == entry["recorded_as_called"], tool


@pytest.mark.parametrize("name", PUBLISHED_DOMAINS)
def test_graph_parameters_are_the_published_ones(name: str, published_tables: dict) -> None:
    published = published_tables[name]["action_parameters_for_graphs"]
    assert {k: sorted(v) for k, v in domain_tables(name).graph_params.items()} == {
        k: sorted(v) for k, v in published.items()
    }


def test_strict_signatures_bind_like_the_published_strict_methods() -> None:
    assert bind_strict_arguments("bank", "login_user", {"username": "a"}) == {
        "username": "a",
        "identification": None,
    }
    with pytest.raises(TypeError, match="unexpected keyword argument 'identification'"):
        bind_strict_arguments("bank", "authenticate_admin_password", {"username": "a", "identification": "x"})
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'password'"):
        bind_strict_arguments("university", "login_user", {"username": "a"})
    assert bind_strict_arguments("hotel", "book_room", {"x": 1}) == {"x": 1}  # **kwargs methods
