"""One episode: the published loop, malformed calls, limits, infrastructure errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sopbench.agents import agent_factory, user_factory
from sopbench.runner import Limits, RunSpec
from sopbench.runner.episode import Episode, episode_row, episode_setup, play, run_episode, select_tasks


def _bank_task(published_tasks_dir: Path, index: int = 0):
    config = RunSpec(agent="reference", domains=("bank",), tasks=published_tasks_dir, output=Path("unused"))
    return select_tasks(config)[index]


PUBLISHED_LIMITS = Limits()


def _play(task_and_id, agent: str, limits: Limits = PUBLISHED_LIMITS, user: str = "none", **user_options):
    task, task_id = task_and_id
    setup = episode_setup(task, task_id, "full", 1, 0)
    return asyncio.run(run_episode(setup, agent_factory(agent)(), user_factory(user)(**user_options), limits))


def test_none_user_opens_with_the_prompt_and_answers_with_the_known_values(published_tasks_dir):
    task, task_id = _bank_task(published_tasks_dir)
    result = _play((task, task_id), "test-talker", Limits(max_turns=5))
    messages = result.messages
    assert messages[0] == {"role": "user", "content": task.user_prompt}
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    reply = messages[2]["content"]
    assert json.dumps(task.user_known, indent=4) in reply and "exit_conversation" in reply
    assert result.end == "max_turns" and result.status == "completed"


def test_malformed_calls_get_an_error_text_and_are_counted(published_tasks_dir):
    result = _play(_bank_task(published_tasks_dir), "test-malformed")
    outputs = [call.output for call in result.calls]
    assert outputs[0] == "Error: Tool no_such_tool not found."
    assert outputs[1].startswith("Error: arguments of internal_check_username_exist are not valid JSON")
    assert "must be a JSON object" in outputs[2]
    assert "unexpected keyword argument 'extra'" in outputs[3]
    assert "missing 1 required positional argument: 'username'" in outputs[4]
    assert outputs[5] == "True"
    assert [call.problem is not None for call in result.calls] == [True] * 5 + [False]
    assert result.calls[1].arguments_text == '{"username": "john_doe"'  # the raw text is kept
    # five malformed calls and the agent's own report; a message with an N/A pseudo-call has no call
    assert len(result.problems) == 6 and "unparsable reply" in result.problems
    thinking = next(i for i, m in enumerate(result.messages) if m.get("content") == "thinking")
    assert len(result.calls) == 6 and "tool_calls" not in result.messages[thinking]
    assert result.messages[thinking + 1]["role"] == "user"  # no call: the user answers
    # the reply the agent could not parse broke the text protocol: its problems are kept with it
    assert result.raw_replies == [
        {"message": thinking, "raw": "Thought: thinking\nAction: N/A", "problems": ["unparsable reply"]}
    ]
    assert result.status == "completed" and result.end == "exit_conversation"


def test_the_published_limits_end_an_episode(published_tasks_dir):
    result = _play(_bank_task(published_tasks_dir), "test-chatty")
    assert len(result.calls) == 10 and result.end == "max_actions"
    result = _play(_bank_task(published_tasks_dir), "test-chatty", Limits(max_turns=7, max_actions=10))
    assert len(result.calls) == 3 and result.end == "max_turns"


def test_max_turns_is_checked_before_each_reply_as_published(published_tasks_dir):
    """The published loop asks for a reply while the transcript holds fewer than N messages; the
    answer to that reply's call is still added (published transcripts of 21 messages exist)."""
    task = _bank_task(published_tasks_dir)
    for limit, length in ((4, 5), (5, 5), (20, 21), (21, 21)):
        # the opening, then a reply and its answer: 1, 3, 5, ... messages before each reply
        result = _play(task, "test-chatty", Limits(max_turns=limit, max_actions=100))
        assert len(result.messages) == length, limit
        assert len(result.calls) == (length - 1) // 2 and result.end == "max_turns"
        before_last_reply = len(result.messages) - 2
        assert before_last_reply < limit <= len(result.messages)
    for limit in (4, 5, 20):  # replies without calls: the user answers only below the limit
        result = _play(task, "test-talker", Limits(max_turns=limit))
        assert len(result.messages) == limit and result.end == "max_turns"
    # the published defaults: ten calls after the opening make 21 messages, ended by max_actions
    result = _play(task, "test-chatty")
    assert len(result.messages) == 21 and result.end == "max_actions"


def _config(tmp_path: Path, agent: str, tasks: Path, **extra) -> RunSpec:
    return RunSpec(agent=agent, domains=("bank",), tasks=tasks, output=tmp_path / "run", **extra)


def test_an_agent_that_raises_or_times_out_is_an_infra_error(published_tasks_dir, tmp_path):
    task, task_id = _bank_task(published_tasks_dir)
    episode = Episode(task, task_id, 0, 7)
    result, _ = asyncio.run(play(_config(tmp_path, "test-crash", published_tasks_dir), episode))
    assert result.status == "infra_error" and "RuntimeError: boom" in result.reason
    config = _config(tmp_path, "test-slow", published_tasks_dir, episode_timeout=0.05)
    result, _ = asyncio.run(play(config, episode))
    assert result.status == "infra_error" and "timed out" in result.reason
    row = episode_row(config, episode, result, None, 1)
    assert row.passed is None and row.verdict is None


def test_context_overflow_ends_the_episode_as_the_agents_failure(published_tasks_dir, tmp_path):
    task, task_id = _bank_task(published_tasks_dir)
    config = _config(tmp_path, "test-overflow", published_tasks_dir)
    episode = Episode(task, task_id, 0, 7)
    result, agent = asyncio.run(play(config, episode))
    assert result.status == "completed" and result.end == "context_length" and len(result.calls) == 1
    row = episode_row(config, episode, result, agent, 1)
    assert row.status == "completed" and row.passed == 0  # scored: the task had to be served


def test_scripted_user_replies_from_a_file_then_ends(published_tasks_dir, tmp_path):
    task, task_id = _bank_task(published_tasks_dir)
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "opening": "Hello. {user_prompt}",
                "replies": ["first", "second"],
                "tasks": {task_id: {"replies": ["only for this task"]}},
            }
        )
    )
    result = _play((task, task_id), "test-talker", user="scripted", script=str(script))
    assert result.messages[0]["content"] == f"Hello. {task.user_prompt}"
    assert result.messages[2]["content"] == "only for this task"
    assert result.end == "user_ended" and len(result.messages) == 5
