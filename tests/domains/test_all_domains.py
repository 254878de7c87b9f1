"""What every domain must satisfy, checked for all seven; each domain's file tests its own rules.

The expectations that differ by domain are the tables at the top. Tests that need the published
data take the conftest fixtures and are skipped, with the reason, when it is absent.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from sopbench.constraints import Single, singles
from sopbench.domains import (
    EXIT_TOOL,
    PUBLISHED_DOMAINS,
    Domain,
    LenientSystem,
    get_domain,
    is_no_action,
    published_offer,
)
from sopbench.tasks import Task
from sopbench.traces import iter_records

SYSTEM_NAMES = {
    "bank": "Bank",
    "dmv": "DMV",
    "healthcare": "Healthcare",
    "online_market": "OnlineMarket",
    "university": "University",
    "library": "Library",
    "hotel": "Hotel",
}
OFFERED_COUNTS = {
    "bank": 25,
    "dmv": 29,
    "healthcare": 17,
    "online_market": 23,
    "university": 19,
    "library": 31,
    "hotel": 25,
}
NOT_OFFERED = {
    "bank": {"cancel_credit_card", "pay_bill_with_credit_card", "internal_get_database"},
    "dmv": {"internal_get_database"},
    "healthcare": {"internal_get_database"},
    "online_market": {"internal_get_database"},
    "university": {"internal_get_database"},
    "library": {"internal_get_database", "internal_get_interaction_date"},
    "hotel": set(),  # every hotel tool is offered
}
# Tools that take (and ignore) arguments beyond their published ones: bank's pay_bill(..., **kwargs).
EXTRA_ARGUMENTS_ACCEPTED = {"bank": {"pay_bill"}}
# Tools whose schema lists the parameters in another order than the signature.
PROPERTY_ORDER_DIFFERS = {"online_market": {"add_review"}}
# Domains whose identification may be a string or an object (a driver's licence).
UNION_TYPED = {"bank", "healthcare"}
# Worded constraints the published tables do not describe.
EXTRA_WORDINGS = {"online_market": {"order_delivered_or_refunding"}}
# Published state-tracker methods that are session effects, not constraint checks.
SESSION_SETTERS = {
    "bank": {"set_authenticate_admin_password", "set_login_user", "set_logout_user"},
    "dmv": {"set_authenticate_admin_password", "add_logged_in_user", "remove_logged_in_user"},
    "healthcare": {"set_login_user", "set_logout_user"},
    "online_market": {"set_login_user", "set_logout_user"},
    "university": {"set_login_user", "set_logout_user"},
    "library": {"set_login_user", "set_logout_user"},
    "hotel": set(),
}
# The domains with published trajectories (online market and hotel have none).
TRAJECTORY_DOMAINS = ("bank", "dmv", "healthcare", "library", "university")

JSON_TYPES = {"string", "number", "integer", "boolean", "object", "array"}  # "null" is never used
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def untouched() -> dict[str, Any]:
    """Any database: the calls below fail before a tool body runs, so it must come back as it was."""
    return {"untouched": {"values": [1, 2.5, "x", None], "nested": {"a": True}}}


all_domains = pytest.mark.parametrize("name", PUBLISHED_DOMAINS)


def domain_of(name: str) -> Domain:
    return get_domain(name)


def named_params(domain: Domain, tool: str) -> list[inspect.Parameter]:
    return [
        p
        for p in domain.tools[tool].signature.parameters.values()
        if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    ]


def required_params(domain: Domain, tool: str) -> list[str]:
    return [p.name for p in named_params(domain, tool) if p.default is inspect.Parameter.empty]


# ---- the catalogue is complete ---------------------------------------------------------------------


@all_domains
def test_domain_is_registered_and_complete(name: str) -> None:
    domain = domain_of(name)
    assert importlib.import_module(f"sopbench.domains.{name}").DOMAIN is domain
    assert domain.name == name and domain.system_name == SYSTEM_NAMES[name]
    assert domain.validate() == []
    assert set(domain.tools) == set(domain.catalogue.tools)


@all_domains
def test_every_tool_has_the_published_signature(name: str) -> None:
    domain = domain_of(name)
    for tool, published in domain.catalogue.tools.items():
        spec = domain.tools[tool]
        named = named_params(domain, tool)
        assert tuple(p.name for p in named) == published.params, tool
        takes_more = spec.params != published.params  # *args / **kwargs
        assert takes_more == (tool in EXTRA_ARGUMENTS_ACCEPTED.get(name, set())), tool
        defaults = {p.name: p.default for p in named if p.default is not inspect.Parameter.empty}
        assert defaults == dict(published.defaults), tool
        assert spec.description and spec.returns, tool


@all_domains
def test_offered_tools_are_the_published_list_in_order(name: str) -> None:
    domain = domain_of(name)
    offered = published_offer(domain)
    assert offered == [tool for tool, sig in domain.catalogue.tools.items() if sig.offered]
    assert len(offered) == OFFERED_COUNTS[name]
    assert set(domain.tools) - set(offered) == NOT_OFFERED[name]


def _catalogue_singles(domain: Domain) -> list[Single]:
    cat = domain.catalogue
    exprs = [*cat.innate.values(), *cat.required.values(), *cat.constraint_dependencies.values()]
    exprs += [expr for pool in cat.customizable.values() for expr in pool]
    return [single for expr in exprs for single in singles(expr)]


@all_domains
def test_every_constraint_has_both_wordings_filled(name: str) -> None:
    domain = domain_of(name)
    cat = domain.catalogue
    names = {s.name for s in _catalogue_singles(domain)} | set(domain.checks) | set(cat.links)
    names |= (
        {link.name for link in cat.links.values()} | set(cat.constraint_dependencies) | set(cat.processes)
    )
    assert names <= set(domain.wordings), names - set(domain.wordings)
    for constraint, wording in domain.wordings.items():
        assert wording.positive and wording.negative and wording.positive != wording.negative, constraint
    for single in _catalogue_singles(domain):
        for negated in (False, True):
            for parameters in (None, cat.default_parameters):
                text = domain.describe_single(Single(single.name, single.params, negated), parameters)
                assert "{" not in text and text.strip() and text.endswith("."), text


def _assert_property_schema(name: str, schema: dict[str, Any], where: str) -> None:
    types = schema["type"]
    if isinstance(types, list):
        assert name in UNION_TYPED, where
    else:
        types = [types]
    assert types and set(types) <= JSON_TYPES, where
    if "object" in types and "properties" in schema:
        assert set(schema.get("required", [])) <= set(schema["properties"]), where
        for key, sub in schema["properties"].items():
            _assert_property_schema(name, sub, f"{where}.{key}")
    if "array" in types:
        _assert_property_schema(name, schema["items"], f"{where}[]")


@all_domains
def test_offered_tool_schemas_are_valid_function_schemas(name: str) -> None:
    domain = domain_of(name)
    for tool in (domain.tools[offered] for offered in published_offer(domain)):
        schema = tool.openai_schema()
        assert orjson.loads(orjson.dumps(schema)) == json.loads(json.dumps(schema))  # plain JSON data
        assert schema["type"] == "function"
        function = schema["function"]
        assert set(function) == {"name", "description", "strict", "parameters"}, tool.name
        assert NAME.match(function["name"]) and function["name"] == tool.name
        description = function["description"]
        assert isinstance(description, str) and description.strip() and 20 < len(description) < 1024, (
            tool.name
        )
        assert isinstance(function["strict"], bool)
        params = function["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False, tool.name
        named = [p.name for p in named_params(domain, tool.name)]
        if tool.name in PROPERTY_ORDER_DIFFERS.get(name, set()):
            assert set(params["properties"]) == set(named) and list(params["properties"]) != named
        else:
            assert list(params["properties"]) == named, tool.name
        assert set(params["required"]) == set(required_params(domain, tool.name)), tool.name
        if function["strict"]:  # OpenAI strict mode: every property required
            assert set(params["required"]) == set(params["properties"]), tool.name
        for key, prop in params["properties"].items():
            _assert_property_schema(name, prop, f"{tool.name}.{key}")


# ---- calls that never reach a tool body become error text -------------------------------------------


def _assert_refused(
    system: LenientSystem, tool: str, arguments: Any, expected: Callable[[str], bool]
) -> None:
    outcome = system.execute(tool, arguments)
    assert not outcome.ok, (tool, arguments)
    assert expected(outcome.content()), (tool, outcome.content()[:200])
    assert system.db == untouched(), tool


@all_domains
def test_unknown_and_unoffered_tools_are_not_found(name: str) -> None:
    domain = domain_of(name)
    system = LenientSystem(domain, untouched())
    for tool in ["no_such_tool", *sorted(NOT_OFFERED[name])]:
        for arguments in ("{}", {}):
            _assert_refused(system, tool, arguments, f"Error: Tool {tool} not found.".__eq__)


@all_domains
def test_arguments_that_are_not_a_json_object_are_error_text(name: str) -> None:
    domain = domain_of(name)
    system = LenientSystem(domain, untouched())
    huge = "x" * 1_000_000
    for tool in published_offer(domain):
        not_json = f"Error: arguments of {tool} are not valid JSON"
        for arguments in ('{"username": "a"', "{", huge):
            _assert_refused(system, tool, arguments, lambda text, prefix=not_json: text.startswith(prefix))
        not_object = f"Error: arguments of {tool} must be a JSON object, got list."
        _assert_refused(system, tool, "[1, 2]", not_object.__eq__)


@all_domains
def test_missing_and_unexpected_arguments_read_like_the_published_system(name: str) -> None:
    domain = domain_of(name)
    system = LenientSystem(domain, untouched())
    for tool in published_offer(domain):
        required = required_params(domain, tool)
        qualified = f"TypeError: {domain.system_name}.{tool}()"
        if required:
            missing = dict.fromkeys(required[:-1])
            expected = f"{qualified} missing 1 required positional argument: '{required[-1]}'"
            _assert_refused(system, tool, missing, expected.__eq__)
            _assert_refused(system, tool, json.dumps(missing), expected.__eq__)
        if tool not in EXTRA_ARGUMENTS_ACCEPTED.get(name, set()):
            extra = {**dict.fromkeys(required), "extra": 1}
            _assert_refused(
                system, tool, extra, f"{qualified} got an unexpected keyword argument 'extra'".__eq__
            )


# ---- the published data ------------------------------------------------------------------------------


@all_domains
def test_wordings_and_checks_are_the_published_ones(name: str, published_tables: dict[str, Any]) -> None:
    domain = domain_of(name)
    tables = published_tables[name]
    described = set(tables["constraint_names_with_descriptions"])
    assert described <= set(domain.wordings), described - set(domain.wordings)
    assert set(domain.wordings) - described == EXTRA_WORDINGS.get(name, set())
    tracker = set(tables["state_tracker_methods"])
    assert SESSION_SETTERS[name] <= tracker
    assert set(domain.checks) == tracker - SESSION_SETTERS[name]
    assert not any(check.startswith("set_") for check in domain.checks)


@all_domains
def test_every_published_task_database_validates(
    name: str, published_tasks: Callable[[str], list[Task]], published_task_counts: dict[str, int]
) -> None:
    model = domain_of(name).database_model
    assert model is not None
    tasks = published_tasks(name)
    assert len(tasks) == published_task_counts[name]
    for task in tasks:
        assert task.domain == name
        model.model_validate(task.initial_database)


def _trajectories(published_trajectories_dir: Path, name: str) -> Path:
    folder = published_trajectories_dir / name
    if not any(folder.glob("*.json.gz")):
        pytest.skip(f"../shared/sopbench not found: published data needed (no {name} trajectories)")
    return folder


@pytest.mark.parametrize("name", TRAJECTORY_DOMAINS)
def test_recorded_tasks_validate_and_their_calls_are_answered_in_order(
    name: str, published_trajectories_dir: Path
) -> None:
    model = domain_of(name).database_model
    assert model is not None
    count = 0
    unanswered = []
    for record in iter_records(_trajectories(published_trajectories_dir, name)):
        assert record.domain == name
        model.model_validate(record.task.initial_database)
        count += 1
        # What replay relies on: every call the simulator executed has its answer, by id, in call order.
        for run in record.runs:
            for position, message in enumerate(run.messages):
                calls = message.tool_calls
                if not calls or any(is_no_action(call.name) for call in calls):
                    continue
                if any(call.name == EXIT_TOOL for call in calls):
                    break
                answers = run.messages[position + 1 : position + 1 + len(calls)]
                ids = [answer.tool_call_id if answer.is_tool else None for answer in answers]
                if ids != [call.id for call in calls]:
                    unanswered.append(
                        (record.file.name if record.file else "", record.index, run.index, position)
                    )
    assert count > 0
    assert unanswered == []
