import json

from typer.testing import CliRunner

from sopbench.cli import app

runner = CliRunner()


def test_help_lists_the_verbs():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "diagnose" in result.output


def test_every_verb_has_help_with_an_example():
    for command in app.registered_commands:
        result = runner.invoke(app, [command.name or command.callback.__name__, "--help"])
        assert result.exit_code == 0
        assert "Example" in result.output  # "Example:" or "Examples:"


def test_diagnose_prints_counts():
    result = runner.invoke(app, ["diagnose", "--seed", "42", "--json"])
    assert result.exit_code == 0, result.output
    counts = json.loads(result.output)
    assert counts["fixtures"] == 50 and counts["accepted"] == 15 and counts["rejected"] == 35
