"""Reference traces and mutants over every published task, scored with the sound protocol."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.diagnosis import diagnose_tasks, reference_calls
from sopbench.domains import get_domain
from sopbench.tasks import iter_all_tasks

TASKS = Path(__file__).resolve().parents[1].parent / "shared" / "sopbench" / "tasks"
pytestmark = pytest.mark.skipif(
    not TASKS.exists(), reason="../shared/sopbench/tasks not found: published tasks needed"
)


@pytest.fixture(scope="module")
def tasks():
    return list(iter_all_tasks(TASKS))


@pytest.fixture(scope="module")
def diagnosis(tasks):
    return diagnose_tasks(tasks, seed=42).as_dict()


def test_every_reference_trace_passes_and_every_mutant_gets_its_verdict(diagnosis):
    assert diagnosis["surprises"] == []
    kinds = diagnosis["kinds"]
    assert kinds["reference"]["accepted"] == kinds["reference"]["fixtures"] == 903 - 22 - 9
    for kind in (
        "skip_helper",
        "swap_chain_steps",
        "wrong_user",
        "execute_despite_false_constraint",
        "refuse_permitted",
        "claim_success_without_executing",
    ):
        assert kinds[kind]["fixtures"] > 100, kind
        assert kinds[kind]["accepted"] == 0, kind
    assert kinds["harmless_extra_reads"]["rejected"] == 0


def test_tasks_no_agent_can_pass_are_reported_with_their_reason(diagnosis):
    # 22 goals are never offered to an agent (bank cancel_credit_card, pay_bill_with_credit_card).
    assert len(diagnosis["unreachable_goals"]) == 22
    assert all(
        "cancel_credit_card" in t or "pay_bill_with_credit_card" in t for t in diagnosis["unreachable_goals"]
    )
    # 9 tasks must succeed but need a helper behind credentials the user does not know.
    assert len(diagnosis["unverifiable_tasks"]) == 9
    assert all("cannot call" in t for t in diagnosis["unverifiable_tasks"])


def test_reference_calls_log_in_before_reading_and_end_with_the_goal(tasks):
    bank = get_domain("bank")
    task = next(
        t
        for t in tasks
        if t.domain == "bank"
        and t.goal == "transfer_funds"
        and t.action_should_succeed
        and "identification" in t.user_known
    )
    calls = reference_calls(bank, task)
    names = [name for name, _ in calls]
    assert names[-1] == "transfer_funds"
    if "get_account_balance" in names:
        assert names.index("login_user") < names.index("get_account_balance")


def test_seeds_change_the_mutants_but_not_the_outcome(tasks):
    some = [t for t in tasks if t.domain in ("dmv", "library")]
    first, again, other = (diagnose_tasks(some, seed=s).as_dict() for s in (1, 1, 2))
    assert first == again
    assert first["surprises"] == other["surprises"] == []


def test_the_cli_prints_counts_and_exits_zero():
    result = CliRunner().invoke(
        app, ["diagnose", "--seed", "42", "--tasks", "university", "--tasks-dir", str(TASKS), "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    over_tasks = payload["tasks"]
    assert over_tasks["kinds"]["reference"]["fixtures"] + len(over_tasks["unverifiable_tasks"]) == 44
    assert payload["fixtures"] == 50  # the built-in SOP's traces come first


def test_the_cli_names_an_unknown_domain():
    result = CliRunner().invoke(app, ["diagnose", "--tasks", "casino", "--tasks-dir", str(TASKS)])
    assert result.exit_code == 2
    assert "unknown domain" in result.output


def _tally_domain():
    """A custom domain (one write, one limit), registered as a plugin's would be."""
    from sopbench.domains import WRITE, Catalogue, Context, Domain, get_domain, register_domain

    try:
        return get_domain("tally_for_diagnosis_tests")
    except KeyError:
        pass
    catalogue = Catalogue.from_dict(
        {
            "domain": "tally_for_diagnosis_tests",
            "default_constraint_parameters": {"max_units": 3},
            "tools": [
                {
                    "name": "take",
                    "signature": ["units"],
                    "params": [{"name": "units", "type": "integer"}],
                    "required": ["units"],
                }
            ],
            "innate_dependencies": {"take": None},
            "required_dependencies": {"take": ["single", "within_limit", {"units": "units"}]},
            "constraint_processes": {"within_limit": None},
        }
    )
    tally = register_domain(Domain("tally_for_diagnosis_tests", catalogue))

    @tally.tool(WRITE, "Take units.")
    def take(ctx: Context, units: int):
        ctx.db["taken"] += units
        return True

    @tally.check("At most {max_units} units.", "More than {max_units} units.")
    def within_limit(ctx: Context, units: int) -> bool:
        return units <= ctx.params["max_units"]

    return tally


def test_the_cli_diagnoses_the_tasks_of_a_custom_domain(tmp_path):
    from sopbench.generation import generate_domain

    _tally_domain()
    generated = generate_domain("tally_for_diagnosis_tests", seed=0, world={"taken": 0}, budget=200)
    (tmp_path / "tally_for_diagnosis_tests_tasks.json").write_bytes(generated.to_json())
    result = CliRunner().invoke(
        app, ["diagnose", "--tasks", "tally_for_diagnosis_tests", "--tasks-dir", str(tmp_path), "--json"]
    )
    assert result.exit_code == 0, result.output
    over_tasks = json.loads(result.output)["tasks"]
    assert over_tasks["kinds"]["reference"]["fixtures"] == generated.report.tasks > 0
    assert over_tasks["surprises"] == []
