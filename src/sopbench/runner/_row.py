"""The stored episode: one typed record, the single source of the store's columns, the export's
fields and the doc's tables.

Each field of ``EpisodeRow`` is one column of the store's ``episodes`` table: its SQL type
(``JSON`` columns hold JSON text), whether it may be NULL, and what it means. ``runner/_store.py``
builds its table, its column list and its JSON columns from it. ``EXPORT_FIELDS`` says which
column each field of an export line comes from (``runner/_export.py`` builds the line from it),
and ``NOT_EXPORTED`` why the other columns are left out. docs/runner.md's table of columns and its
list of export fields are checked against both (tests/runner/test_row.py), as is that every column
is either exported or left out for a reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args

from sopbench.domains import DEFAULT_ENVIRONMENT
from sopbench.evaluation import UnverifiedConstraint

Status = Literal["completed", "infra_error"]
EndReason = Literal[
    "exit_conversation", "user_ended", "max_turns", "max_actions", "context_length", "infra_error"
]
STATUSES: tuple[str, ...] = get_args(Status)
END_REASONS: tuple[str, ...] = get_args(EndReason)

SqlType = Literal["TEXT", "INTEGER", "REAL", "JSON"]


def _column(sql: SqlType, meaning: str, *, null: bool = False) -> Any:
    return field(metadata={"sql": sql, "null": null, "meaning": meaning})


@dataclass(frozen=True, slots=True)
class EpisodeRow:
    """One row of the store's ``episodes`` table (JSON columns decoded)."""

    task_id: str = _column("TEXT", '"<domain>/<goal>[<i>]"')
    run: int = _column("INTEGER", "0-based run of the task")
    domain: str = _column("TEXT", "the task's domain")
    goal: str = _column("TEXT", "the task's goal")
    task_index: int = _column("INTEGER", "position in the domain's task file")
    seed: int = _column("INTEGER", "the episode's own seed (derived from the run seed)")
    agent: str = _column("TEXT", "the agent's name")
    model: str | None = _column("TEXT", "the agent's model (NULL for agents that call no model)", null=True)
    tool_mode: str | None = _column(
        "TEXT", "the agent's tool mode (NULL for agents that call no model)", null=True
    )
    tool_list: str = _column("TEXT", "full or oracle")
    user: str = _column("TEXT", "the user's name")
    status: Status = _column("TEXT", "completed or infra_error")
    end_reason: EndReason = _column("TEXT", ", ".join(END_REASONS))
    reason: str | None = _column("TEXT", "infra_error: what went wrong", null=True)
    should_succeed: int = _column("INTEGER", "the task's expected outcome")
    passed: int | None = _column("INTEGER", "the sound verdict (NULL for infra_error)", null=True)
    verdict: dict[str, Any] | None = _column(
        "JSON", "the sound verdict, with what a failed procedure left unverified", null=True
    )
    compat: dict[str, Any] | None = _column("JSON", "the sopbench-protocol verdict", null=True)
    explanations: list[str] = _column("JSON", "one sentence per failed judgement")
    messages: list[dict[str, Any]] = _column("JSON", "the transcript, chat-completions shape")
    tool_calls: list[dict[str, Any]] = _column(
        "JSON", "executed calls {id, name, arguments_text, arguments, output, problem}"
    )
    final_database: dict[str, Any] | None = _column("JSON", "the database at the end", null=True)
    problems: list[Any] = _column("JSON", "malformed calls and replies, raw text kept")
    raw_replies: list[dict[str, Any]] = _column(
        "JSON",
        "{message, raw} for replies the agent parsed (ReAct text), with problems when one broke the protocol",
    )
    malformed_calls: int = _column("INTEGER", "malformed calls")
    usage: dict[str, Any] = _column("JSON", "{prompt_tokens, completion_tokens} of the agent")
    user_usage: dict[str, Any] = _column("JSON", "{prompt_tokens, completion_tokens} of the user")
    agent_steps: int = _column("INTEGER", "agent replies")
    latency_s: float = _column("REAL", "wall time of the episode")
    attempts: int = _column("INTEGER", "how many times the episode was run (infra_error retries)")
    finished_at: str = _column("TEXT", "UTC, ISO 8601")

    def columns(self) -> dict[str, Any]:
        """One key per column, in column order (values not copied): what the store writes."""
        return {name: getattr(self, name) for name in COLUMNS}


# ---- the export's line (``sopbench export --format jsonl``) --------------------------------------
# (field of the line, the column it comes from), in the line's order. ``tool_calls`` and ``verdict``
# are reshaped on the way (``runner/_export.py``); the run's settings (``EXPORTED_SETTINGS``) come
# right after ``SETTINGS_AFTER``; the timings (``TIMING_FIELDS``) come last, so that the rest of a
# line can be compared byte for byte (``--no-timings`` leaves them out).
EXPORT_FIELDS: tuple[tuple[str, str], ...] = (
    ("domain", "domain"),
    ("task_id", "task_id"),
    ("goal", "goal"),
    ("agent", "agent"),
    ("model", "model"),
    ("tool_mode", "tool_mode"),
    ("tool_list", "tool_list"),
    ("user", "user"),
    ("run", "run"),
    ("seed", "seed"),
    ("status", "status"),
    ("end", "end_reason"),
    ("reason", "reason"),
    ("tool_calls", "tool_calls"),
    ("final_database", "final_database"),
    ("verdict", "verdict"),
    ("passed_by_default", "(derived)"),
    ("explanations", "explanations"),
    ("malformed_calls", "malformed_calls"),
    ("protocol_breaks", "(derived)"),
    ("problems", "problems"),
    ("raw_replies", "raw_replies"),
    ("usage", "usage"),
    ("messages", "messages"),
    ("latency_s", "latency_s"),
)
SETTINGS_AFTER = "seed"
TIMING_FIELDS = ("latency_s",)
# The run's environment settings given with each line, with the value of a run made before the
# setting existed (its manifest does not name it).
EXPORTED_SETTINGS: dict[str, Any] = {
    name: getattr(DEFAULT_ENVIRONMENT, name)
    for name in ("env_mode", "shuffle_tools", "constraint_format", "default_sop")
}
NOT_EXPORTED: dict[str, str] = {
    "task_index": "task_id names the task",
    "should_succeed": "the task file holds it",
    "passed": "verdict holds it",
    "compat": "its seven published checks go into verdict",
    "user_usage": "the user's cost is not the agent's",
    "agent_steps": "messages hold the replies",
    "attempts": "how often an infra_error was retried is not a result",
    "finished_at": "a time, not a result",
}


# ---- fields derived from the columns (exported and summed up, never stored: one home per rule) -----
DERIVED = "(derived)"  # the "column" of an export field computed from the stored columns


def made_well_formed_action(row: EpisodeRow) -> bool:
    """The agent wrote at least one well-formed tool call (a known tool, arguments that fit it)."""
    return any(call.get("problem") is None for call in row.tool_calls or ())


def passed_by_default(row: EpisodeRow) -> bool | None:
    """A pass in which the agent made no well-formed action: it called no tool, or every call it
    wrote was malformed (a refusal by silence or by broken replies). None when not scored."""
    if row.passed is None:
        return None
    return bool(row.passed) and not made_well_formed_action(row)


def protocol_breaks(row: EpisodeRow) -> int:
    """The agent's replies that broke the text protocol (react, act-only): parsed replies in which
    the parser found a problem (no ``Action:`` line, no ``Action Input:``, an empty reply...)."""
    return sum(1 for reply in row.raw_replies or () if reply.get("problems"))


def never_replied(row: EpisodeRow) -> bool:
    """A completed episode in which the model never replied: its first request already overflowed
    the context. There is no behaviour to judge (a must-refuse task would pass by silence), so it
    is reported apart and not scored."""
    return row.status == "completed" and row.agent_steps == 0 and row.end_reason == "context_length"


DERIVED_FIELDS: dict[str, Callable[[EpisodeRow], Any]] = {
    "passed_by_default": passed_by_default,
    "protocol_breaks": protocol_breaks,
}

COLUMN_TYPES: dict[str, SqlType] = {f.name: f.metadata["sql"] for f in fields(EpisodeRow)}
COLUMNS: tuple[str, ...] = tuple(COLUMN_TYPES)
JSON_COLUMNS = frozenset(name for name, sql in COLUMN_TYPES.items() if sql == "JSON")


def episodes_table() -> str:
    """The ``CREATE TABLE`` statement of the ``episodes`` table."""
    lines = []
    for f in fields(EpisodeRow):
        sql = "TEXT" if f.metadata["sql"] == "JSON" else f.metadata["sql"]
        check = ""
        if f.name == "status":
            check = " CHECK (status IN (" + ", ".join(f"'{s}'" for s in STATUSES) + "))"
        lines.append(f"    {f.name} {sql}{'' if f.metadata['null'] else ' NOT NULL'}{check},")
    body = "\n".join(lines)
    return f"CREATE TABLE IF NOT EXISTS episodes (\n{body}\n    PRIMARY KEY (task_id, run)\n)"


# The stored sound verdict keeps, under this key, the kind and depth of each constraint a failed
# procedure left unverified (``evaluation.Judgement.unverified``): the breakdown by constraint of a
# run folder needs them, and the transcript alone does not give them without scoring again.
UNVERIFIED_KEY = "unverified"


def stored_verdict(fields_: dict[str, Any], unverified: tuple[UnverifiedConstraint, ...]) -> dict[str, Any]:
    """The verdict column of a scored episode: the verdict's fields and what was left unverified."""
    return {**fields_, UNVERIFIED_KEY: [{"kind": u.kind, "depth": u.depth} for u in unverified]}


def read_verdict(
    stored: dict[str, Any] | None,
) -> tuple[Any, tuple[UnverifiedConstraint, ...] | None]:
    """A verdict column as the verdict's fields and what was left unverified (None: an older store,
    which did not keep it)."""
    if stored is None or UNVERIFIED_KEY not in stored:
        return stored, None
    fields_ = {key: value for key, value in stored.items() if key != UNVERIFIED_KEY}
    items = tuple(UnverifiedConstraint(str(u["kind"]), u["depth"]) for u in stored[UNVERIFIED_KEY])
    return fields_, items


# ---- the row an Inspect score keeps (``inspect_eval``) ---------------------------------------------
# The columns the Inspect scorer keeps in each score's metadata: what ``row_score`` reads, so that an
# Inspect log reads back as a run folder does (the sample itself holds the transcript).
SCORE_COLUMNS: tuple[str, ...] = (
    "task_id",
    "domain",
    "goal",
    "task_index",
    "should_succeed",
    "agent",
    "model",
    "tool_mode",
    "tool_list",
    "user",
    "end_reason",
    "verdict",
    "compat",
    "explanations",
    "problems",
    "usage",
    "user_usage",
    "latency_s",
)


def score_metadata(**columns: Any) -> dict[str, Any]:
    """An Inspect score's metadata: exactly the columns of ``SCORE_COLUMNS`` (a missing or unknown
    one is an error), in that order."""
    if set(columns) != set(SCORE_COLUMNS):
        missing, unknown = set(SCORE_COLUMNS) - set(columns), set(columns) - set(SCORE_COLUMNS)
        raise TypeError(f"score metadata: missing {sorted(missing)}, unknown {sorted(unknown)}")
    return {name: columns[name] for name in SCORE_COLUMNS}


def row_of_score(metadata: Mapping[str, Any], run: int) -> EpisodeRow:
    """A completed episode's row from an Inspect score's metadata (``score_metadata``) and its epoch's
    run: the columns it does not keep are empty (no calls, no transcript, no seed), so that a score
    read from it knows no calls (``row_score(..., calls_kept=False)``)."""
    kept: dict[str, Any] = {name: metadata.get(name) for name in SCORE_COLUMNS}
    kept["explanations"] = list(kept["explanations"] or ())
    verdict = kept["verdict"]
    return EpisodeRow(
        **kept,
        run=run,
        seed=0,
        status="completed",
        reason=None,
        passed=None if not isinstance(verdict, dict) else int(bool(verdict.get("passed"))),
        messages=[],
        tool_calls=[],
        final_database=None,
        raw_replies=[],
        malformed_calls=0,
        agent_steps=0,
        attempts=1,
        finished_at="",
    )
