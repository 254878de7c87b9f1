"""Catalogue-derived knowledge agrees with the published evaluator's (SOPBENCH_DOMAIN_TABLES.json):
innate implications, graph parameters, and the published strict signatures each domain declares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sopbench.constraints import dump
from sopbench.domains import PUBLISHED_DOMAINS, REQUIRED, expanded_innate, get_domain, innate_implications


@pytest.fixture(scope="module")
def published_tables(shared_dir: Path) -> dict:
    return json.loads((shared_dir / "reference" / "SOPBENCH_DOMAIN_TABLES.json").read_text())


@pytest.mark.parametrize("name", PUBLISHED_DOMAINS)
def test_innate_implications_are_the_published_ones(name: str, published_tables: dict) -> None:
    domain = get_domain(name)
    implications = innate_implications(domain.catalogue, published=True)
    published = published_tables[name]["derived_innate_implied_calls"]
    assert set(implications) == set(published)
    for tool, entry in published.items():
        assert dump(expanded_innate(domain.catalogue, tool)) == entry["expanded_innate"], tool
        params = set(domain.tools[tool].params)
        # The published table already drops implications whose names the caller's arguments lack
        # (checked here at run time, against the call's actual arguments).
        ours = {
            i.tool: {"param_names": list(i.keys), "bound_to_caller_args": [list(v) for v in i.variables]}
            for i in implications[tool]
            if set(i.keys) <= params
        }
        assert ours == entry["recorded_as_called"], tool


@pytest.mark.parametrize("name", PUBLISHED_DOMAINS)
def test_graph_parameters_are_the_published_ones(name: str, published_tables: dict) -> None:
    published = published_tables[name]["action_parameters_for_graphs"]
    catalogue = get_domain(name).catalogue
    assert {tool: sorted(catalogue.graph_params(tool)) for tool in catalogue.tools} == {
        k: sorted(v) for k, v in published.items()
    }


def test_sound_implications_bind_every_tool_of_the_innate_check() -> None:
    # A passing login has checked that the user exists: the sound reading says so, bound through
    # the login's own username.
    implied = {i.tool: i for i in innate_implications(get_domain("bank").catalogue)["login_user"]}
    assert implied["internal_check_username_exist"].variables == (("username",),)


def test_each_domain_declares_its_published_strict_signatures() -> None:
    bank = get_domain("bank").published_strict_signatures
    assert bank["login_user"] == {"username": REQUIRED, "identification": None}
    assert "identification" not in bank["authenticate_admin_password"]
    university = get_domain("university")
    assert university.published_strict_signatures["login_user"]["password"] is REQUIRED
    assert university.published_strict_lacks_internal_tools
    assert get_domain("hotel").published_strict_signatures == {}
    assert not get_domain("bank").published_strict_lacks_internal_tools
