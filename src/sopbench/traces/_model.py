"""Typed trajectory records: what one recorded agent run file (``output/<domain>/*.json``) holds.

A file is a list of records, one per simulated task; a record holds the task, the run setup, the
runs (conversations with tool calls, the tool outputs the agent saw, and the final database), and,
once evaluated, the original evaluator's verdicts and statistics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeAlias

from sopbench._io import LoadError
from sopbench.tasks import Task

OutputFormat: TypeAlias = Literal["tuple", "value"]


@dataclass(frozen=True, slots=True)
class TrajectoryFile:
    """The run configuration encoded in a trajectory file's name.

    ``[usr_<user>-]ast_<model>-mode_<mode>-dep_<option>-fmt_<format>-tool_<list>-shuffle_<bool>``
    """

    path: Path
    domain: str | None  # the folder the file sits in (``output/<domain>/``), if any
    assistant_model: str
    tool_call_mode: str  # "fc", "react" or "act-only"
    user_model: str | None  # None: the dummy user; "adv": the adversarial dummy user; else an LLM
    default_constraint_option: str
    constraint_descr_format: str
    tool_list: str  # "full" or "oracle"
    shuffle: bool


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """How one side of the conversation was configured (any field may be absent in a file)."""

    model: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    tool_call_mode: str | None = None


@dataclass(frozen=True, slots=True)
class Setup:
    """The simulation settings recorded with each record; missing keys are None."""

    env_mode: str | None = None
    tool_list: str | None = None  # "full" or "oracle" (old files say "test" for oracle; normalised)
    user_agent: AgentConfig | None = None
    assistant_agent: AgentConfig | None = None
    shuffle_func: bool | None = None
    default_constraint_option: str | None = None
    constraint_descr_format: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One tool call as the assistant wrote it.

    ``arguments_text`` is the raw string; ``arguments`` is its decoded object, or None with
    ``arguments_error`` saying why (not JSON, or JSON that is not an object). Such calls stay in the
    record because evaluators must score them.
    """

    id: str | None
    name: str
    arguments_text: str
    arguments: dict[str, Any] | None
    arguments_error: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a run: a user or assistant message (``sender`` set) or a tool message.

    Tool messages have no sender; they carry ``tool_call_id``, ``tool_name`` and the output text the
    agent saw in ``content``.
    """

    sender: str | None
    content: str | None
    tool_calls: tuple[ToolCallRecord, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    # Backend-specific fields that are not null (``thinking``, ``refusal``, ``response_id``, ...).
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def is_tool(self) -> bool:
        return self.sender is None

    @property
    def is_user(self) -> bool:
        return self.sender == "user"

    @property
    def is_assistant(self) -> bool:
        return self.sender is not None and self.sender != "user"


class ToolStep(NamedTuple):
    """An assistant tool call and the output text it got (None: never answered, e.g. exit_conversation)."""

    call: ToolCallRecord
    output_text: str | None


@dataclass(frozen=True, slots=True)
class Run:
    """One simulated conversation of a record."""

    index: int
    prompt: str  # the assistant's system prompt
    messages: tuple[Message, ...]
    final_database: dict[str, Any]  # the lenient system's database at the end of the run

    def tool_steps(self) -> list[ToolStep]:
        """Every tool call of every message, in call order, with the output text it got.

        Calls the simulator never executed (the ``exit_conversation`` call, "N/A" pseudo-calls) get
        None. The pairing rule is ``executed_calls``'s.
        """
        messages = self.messages
        return [
            ToolStep(call, None if answer is None else messages[answer].content)
            for call, answer in _paired_calls(messages, unanswered=True)
        ]

    def executed_calls(self) -> list[tuple[ToolCallRecord, int]]:
        """Every call the simulator executed, with the index of the tool message that answered it,
        in the order of the answers.

        Answers are the tool messages right after the calling message; a call takes the one with its
        ``tool_call_id``, else the first one not yet taken. Calls left without an answer
        (``exit_conversation``, "N/A" pseudo-calls) were never executed and are not listed.
        """
        pairs = _paired_calls(self.messages, unanswered=False)
        pairs.sort(key=_answer_position)
        return pairs  # type: ignore[return-value]


def _answer_position(pair: tuple[ToolCallRecord, int | None]) -> int:
    return pair[1]  # type: ignore[return-value]


def _paired_calls(
    messages: tuple[Message, ...], *, unanswered: bool
) -> list[tuple[ToolCallRecord, int | None]]:
    """The one pairing rule of calls and answers (see ``Run.executed_calls``), in call order;
    with ``unanswered``, calls without an answer are listed with None."""
    count = len(messages)
    out: list[tuple[ToolCallRecord, int | None]] = []
    for index, message in enumerate(messages):
        if not message.tool_calls:
            continue
        unclaimed = []  # the tool messages right after this one
        position = index + 1
        while position < count and messages[position].sender is None:
            unclaimed.append(position)
            position += 1
        for call in message.tool_calls:
            if not unclaimed:
                if not unanswered:
                    break
                out.append((call, None))
                continue
            chosen = unclaimed[0]
            if call.id is not None:
                for answer in unclaimed:
                    if messages[answer].tool_call_id == call.id:
                        chosen = answer
                        break
            unclaimed.remove(chosen)
            out.append((call, chosen))
    return out


# The published evaluator's checks (spec §7.3), by their published names, in its order.
PUBLISHED_CHECKS = (
    "no_tool_call_error",
    "constraint_not_violated",
    "database_match",
    "action_successfully_called",
    "dirgraph_satisfied",
    "action_called_correctly",
    "success",
)


class VerdictLayout(StrEnum):
    """The two layouts of recorded verdicts found in the published files."""

    # Older evaluator: 11 keys, no constraint counts, action_should_succeed as 0/1.
    LEGACY = "legacy"
    # Current evaluator (spec section 7.3): 13 keys, adds num_constraints and num_constraints_expanded;
    # action_should_succeed is 0/1 in most files and a boolean in the newest ones.
    CURRENT = "current"


@dataclass(frozen=True, slots=True)
class RecordedVerdict:
    """The original evaluator's verdict on one run, normalised over both layouts."""

    layout: VerdictLayout
    user_goal: str
    action_should_succeed: bool
    num_messages: int
    num_function_calls: int
    num_constraints: int | None  # None in the legacy layout
    num_constraints_expanded: int | None  # None in the legacy layout
    no_tool_call_error: bool
    constraint_not_violated: bool
    database_match: bool
    action_successfully_called: bool
    dirgraph_satisfied: bool
    action_called_correctly: bool
    success: bool
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Record:
    """One task's entry in a trajectory file."""

    file: Path | None
    index: int  # position in the file
    domain: str
    setup: Setup
    task: Task
    runs: tuple[Run, ...]
    evaluations: tuple[RecordedVerdict, ...]  # one per evaluated run; empty if never evaluated
    statistics: dict[str, Any] | None  # raw; several historical layouts (spec section 8)
    # Non-fatal findings, e.g. tool arguments that are not JSON (kept on the calls, reported here).
    problems: tuple[LoadError, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def source(self) -> str:
        """Where the record was read from: its file's path as the caller gave it (the folder
        argument joined with the path below it), so equal file names in two folders stay apart;
        "" for a record not read from a file."""
        return self.file.as_posix() if self.file is not None else ""
