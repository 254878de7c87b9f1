"""A user that holds ``exit_conversation`` (the published LLM user) takes it away from the agent."""

from __future__ import annotations

from sopbench.agents import user_factory
from sopbench.domains import EXIT_TOOL
from sopbench.runner.episode import episode_setup


def _names(setup) -> set[str]:
    return {tool["function"]["name"] for tool in setup.tools}


def test_the_agent_is_offered_exit_only_when_the_user_does_not_hold_it(published_tasks):
    task = published_tasks("bank")[0]
    assert user_factory("llm").holds_exit and not user_factory("none").holds_exit
    with_exit = episode_setup(task, "bank/x[0]", "full", 0, 0)
    without = episode_setup(task, "bank/x[0]", "full", 0, 0, offer_exit=False)
    assert EXIT_TOOL in _names(with_exit)
    assert _names(without) == _names(with_exit) - {EXIT_TOOL}
