"""``run -A KEY=VALUE`` / ``-U KEY=VALUE``: any option of any agent or user, a plugin's included,
validated against its ``Options`` model; a wrong key or value is one line naming the agent, the key
and the keys it takes."""

from __future__ import annotations

import textwrap

from typer.testing import CliRunner

from sopbench.cli import app

PLUGIN = """
from sopbench.agents import Agent, AgentTurn, Options, option, register_agent

SEEN = []


@register_agent("test-polite")
class Polite(Agent):
    name = "test-polite"

    class Options(Options):
        greeting: str = option("hello", help="What it says.")
        patience: int = option(1, help="How often it asks.")

    def __init__(self, **options):
        self.options = self.Options(**options)
        SEEN.append(self.options)

    async def act(self, messages):
        return AgentTurn(content=self.options.greeting)
"""


def _run(tmp_path, small_tasks, *extra):
    (tmp_path / "polite_plugin.py").write_text(textwrap.dedent(PLUGIN))
    return CliRunner().invoke(
        app,
        ["run", "--import", "polite_plugin", "--agent", "test-polite", "--tasks", str(small_tasks),
         "--limit", "1", "--domain", "bank", "--no-baselines", "--output", str(tmp_path / "r"), "--json", *extra],
    )  # fmt: skip


def test_a_plugin_agents_own_options_reach_it_and_are_part_of_the_runs_identity(
    small_tasks, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    done = _run(tmp_path, small_tasks, "-A", "greeting=good day", "-A", "patience=3")
    assert done.exit_code == 0, done.output
    import polite_plugin  # type: ignore[import-not-found]

    assert {(o.greeting, o.patience) for o in polite_plugin.SEEN} == {("good day", 3)}
    # the same folder with another value of an option is another run: refused, named
    again = _run(tmp_path, small_tasks, "-A", "greeting=hi", "-A", "patience=3")
    assert again.exit_code == 2 and "greeting" in again.output


def test_an_unknown_or_ill_typed_option_names_the_agent_the_key_and_the_allowed_keys(
    small_tasks, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    unknown = _run(tmp_path, small_tasks, "-A", "volume=11")
    assert unknown.exit_code == 2
    assert "agent 'test-polite' does not take -A volume (it takes -A greeting, -A patience)" in unknown.output
    ill_typed = _run(tmp_path, small_tasks, "-A", "patience=lots")
    assert ill_typed.exit_code == 2 and "agent 'test-polite' -A patience:" in ill_typed.output
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_a_named_flag_and_the_same_option_by_key_cannot_both_be_given(small_tasks, tmp_path):
    done = CliRunner().invoke(
        app,
        ["run", "--agent", "openai", "--model", "a", "-A", "model=b", "--tasks", str(small_tasks),
         "--output", str(tmp_path / "r")],
    )  # fmt: skip
    assert done.exit_code == 2 and "model is already set by --model" in done.output
