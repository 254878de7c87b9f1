"""The replay agent: plays back the assistant turns of a recorded trajectory file.

Our runner and environment answer the calls, so a replayed episode shows whether our environment
reproduces the recorded tool outputs and whether our scoring of the live episode agrees with the
scoring of the recording.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from pydantic import field_validator

from sopbench.evaluation import canonical_json
from sopbench.tasks import Task
from sopbench.traces import LoadError, Record, Run, iter_records

from ._baselines import exit_turn
from ._options import Options, option
from ._protocol import (
    Agent,
    AgentInfraError,
    AgentTurn,
    EpisodeSetup,
    Message,
    ToolCallRequest,
    register_agent,
)


def task_key(task: Task) -> tuple[str, str, str, bytes]:
    """What identifies a task across task files and trajectory records."""
    try:
        database = canonical_json(task.initial_database)
    except TypeError:
        database = repr(task.initial_database).encode()
    return (task.domain, task.goal, task.user_prompt, database)


@lru_cache(maxsize=8)
def recorded_runs(path: str) -> dict[tuple[str, str, str, bytes], Record]:
    """The records of one trajectory file by task (the first record of a task wins)."""
    problems: list[str] = []
    records: dict[tuple[str, str, str, bytes], Record] = {}
    try:
        for record in iter_records(path, keep_going=True, on_error=lambda e: problems.append(str(e))):
            records.setdefault(task_key(record.task), record)
    except (OSError, LoadError) as exc:
        raise AgentInfraError(f"cannot read the trajectory file {path}: {exc}") from None
    if not records and problems:
        raise AgentInfraError(f"cannot read the trajectory file {path}: {problems[0]}")
    return records


def assistant_turns(run: Run) -> list[AgentTurn]:
    """The assistant messages of a recorded run, as the turns an agent would have given."""
    turns = []
    for number, message in enumerate(run.messages):
        if not message.is_assistant:
            continue
        calls = tuple(
            ToolCallRequest(call.id or f"call_{number}_{i}", call.name, call.arguments_text)
            for i, call in enumerate(message.tool_calls)
        )
        turns.append(AgentTurn(content=message.content, tool_calls=calls))
    return turns


@register_agent("replay")
class Replay(Agent):
    """Re-plays the model turns of a published trajectory file (``--trajectories FILE``): episode run
    ``r`` of a task replays the record's run ``r``; once its turns are used up the agent leaves."""

    name = "replay"

    class Options(Options):
        trajectories: str = option(help="A published trajectory file.")

        @field_validator("trajectories")
        @classmethod
        def _exists(cls, value: str) -> str:
            if not Path(value).is_file():
                raise ValueError(f"no such trajectory file: {value}")
            return value

    def __init__(self, trajectories: str | Path) -> None:
        path = Path(self.Options(trajectories=str(trajectories)).trajectories)
        self.path: str | None = str(path)
        self.given: Run | None = None
        self.model = path.name

    @classmethod
    def of_run(cls, run: Run) -> Replay:
        """An agent that replays one recorded run (for library use: no file, no task lookup)."""
        agent = cls.__new__(cls)
        agent.path, agent.given, agent.model = None, run, None
        return agent

    async def start(self, setup: EpisodeSetup) -> None:
        run = self.given
        if run is None:
            assert self.path is not None
            record = recorded_runs(self.path).get(task_key(setup.task))
            if record is None:
                raise AgentInfraError(f"{self.path} has no record of {setup.task_id}")
            if setup.run >= len(record.runs):
                raise AgentInfraError(
                    f"{self.path} has {len(record.runs)} recorded runs of {setup.task_id}, not run {setup.run}"
                )
            run = record.runs[setup.run]
        self.turns = assistant_turns(run)
        self.position = 0

    async def act(self, messages: Sequence[Message]) -> AgentTurn:
        if self.position >= len(self.turns):
            return exit_turn()
        turn = self.turns[self.position]
        self.position += 1
        return turn
