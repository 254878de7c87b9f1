"""Replay recorded trajectories on our lenient systems and compare with what was recorded.

For every run of every record, the recorded tool calls are executed in order on a fresh lenient
system built from the record's task, as the simulator executed them: an assistant message's calls
in order, a message with an "N/A"/"None" pseudo-call executes nothing, ``exit_conversation`` ends the
run, and a tool that was not offered (``tool_list`` "oracle" offers only the task graph's tools)
answers ``Error: Tool <name> not found.``. Outputs are rendered in the format the file's runs use.
The published system kept partial writes of a call that raised half-way; replay does too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sopbench._io import LoadError
from sopbench.domains import (
    EXIT_TOOL,
    Domain,
    LenientSystem,
    OutputFormat,
    get_domain,
    is_no_action,
    published_offer,
    replay_calls,
    tool_not_found_text,
)
from sopbench.traces import (
    Record,
    Run,
    detect_output_format,
    is_tuple_output,
    iter_records,
    iter_trajectory_files,
)


@dataclass
class RunReplay:
    """The replay of one recorded run and how it compares with the recording."""

    source: str
    domain: str
    record: int
    run: int
    tool_outputs: list[str]
    final_database: dict[str, Any]
    errors: list[str]
    recorded_outputs: list[str | None] = field(repr=False, default_factory=list)
    recorded_database: dict[str, Any] | None = field(repr=False, default=None)
    misaligned: bool = False
    belongs_to: int | None = None  # the record whose task the conversation belongs to, if misaligned

    @property
    def outputs_matching(self) -> int:
        return sum(
            1
            for ours, theirs in zip(self.tool_outputs, self.recorded_outputs, strict=False)
            if ours == theirs
        )

    @property
    def database_matches(self) -> bool:
        return self.final_database == self.recorded_database

    def mismatches(self) -> list[dict[str, Any]]:
        return [
            {"step": i + 1, "recorded": theirs, "replayed": ours}
            for i, (ours, theirs) in enumerate(zip(self.tool_outputs, self.recorded_outputs, strict=False))
            if ours != theirs
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "domain": self.domain,
            "record": self.record,
            "run": self.run,
            "tool_outputs": self.tool_outputs,
            "final_database": self.final_database,
            "errors": self.errors,
            "misaligned": self.misaligned,
            "belongs_to": self.belongs_to,
            "outputs_matching": self.outputs_matching,
            "outputs_recorded": len(self.recorded_outputs),
            "database_match": self.database_matches,
            "mismatches": self.mismatches(),
        }


def answered_tools(records: Iterable[Record]) -> set[str]:
    """Tools that got a real answer (not "Error: Tool ... not found.") somewhere in these records."""
    answered: set[str] = set()
    for record in records:
        for run in record.runs:
            for step in run.tool_steps():
                text = step.output_text
                if text is not None and text != tool_not_found_text(step.call.name):
                    answered.add(step.call.name)
    return answered


def run_output_format(run: Run, file_format: OutputFormat) -> OutputFormat:
    """The output format of one run: its own outputs decide; runs of a file were sometimes re-run later."""
    texts = [m.content for m in run.messages if m.is_tool and m.content]
    if any(is_tuple_output(t) for t in texts):
        return "tuple"
    if file_format == "tuple" and any(_is_bare_success(t) for t in texts):
        return "value"
    return file_format


def _is_bare_success(text: str) -> bool:
    # A tuple-format run would have stored "(True, True)" for a successful write, never a bare "True"
    # after a read; a bare number or container is only ever a value-format read.
    return text[:1] in "[{0123456789-" and not text.startswith("-")


def first_user_message(run: Run) -> str:
    first = next((m for m in run.messages if m.is_user), None)
    return (first.content or "") if first is not None else ""


def replay_run(
    domain: Domain,
    record: Record,
    run: Run,
    output_format: OutputFormat,
    *,
    also_offered: Iterable[str] = (),
) -> RunReplay:
    system = LenientSystem(
        domain, record.task.initial_database, record.task.constraint_parameters, atomic=False
    )
    # ``also_offered``: tools the file shows were answered although today's list omits them (older
    # runs could call ``internal_get_database``)
    offered = set(published_offer(domain, record.task, record.setup.tool_list, also_offered))
    calls: list[tuple[str, Any]] = []
    recorded: list[str | None] = []
    errors: list[str] = []
    answers = {id(step.call): step.output_text for step in run.tool_steps()}
    for message in run.messages:
        message_calls = message.tool_calls
        if not message_calls or any(is_no_action(c.name) for c in message_calls):
            continue
        if any(c.name == EXIT_TOOL for c in message_calls):
            break
        for call in message_calls:
            if call.name not in offered:
                arguments: Mapping[str, Any] | str | None = None
            elif call.arguments is None:
                errors.append(
                    f"step {len(calls) + 1}: {call.name} arguments are not a JSON object ({call.arguments_error})"
                )
                arguments = call.arguments_text
            else:
                arguments = call.arguments
            calls.append((call.name, arguments))
            recorded.append(answers.get(id(call)))
    outputs = replay_calls(system, calls, output_format)
    return RunReplay(
        source=record.source,
        domain=record.domain,
        record=record.index,
        run=run.index,
        tool_outputs=outputs,
        final_database=system.db,
        errors=errors,
        recorded_outputs=recorded,
        recorded_database=run.final_database,
    )


def _reproduced(replay: RunReplay) -> bool:
    return replay.outputs_matching == len(replay.recorded_outputs) and replay.database_matches


def replay_file(
    path: Path,
    *,
    on_error: Callable[[LoadError], None] | None = None,
    on_record_without_runs: Callable[[Record], None] | None = None,
) -> Iterator[RunReplay]:
    """Replay every run of one trajectory file.

    Records that hold no run have nothing to replay; ``on_record_without_runs`` is told of each. A run is *misaligned* (its conversation was stored next to the wrong task) when it opens with
    another task's prompt and not its own, or when its prompt is shared by several tasks and it
    reproduces exactly on one of the others but not on its own; ``belongs_to`` names that record.
    """
    records = list(iter_records(path, keep_going=True, on_error=on_error))
    file_format = detect_output_format(records)
    also_offered = answered_tools(records)
    by_prompt: dict[str, list[Record]] = {}
    for record in records:
        by_prompt.setdefault(record.task.user_prompt, []).append(record)
    for record in records:
        if not record.runs:
            if on_record_without_runs is not None:
                on_record_without_runs(record)
            continue
        try:
            domain = get_domain(record.domain)
        except KeyError as exc:
            if on_error is not None:
                on_error(LoadError(str(exc), file=path, record=record.index, field="domain"))
            continue
        for run in record.runs:
            fmt = run_output_format(run, file_format)
            result = replay_run(domain, record, run, fmt, also_offered=also_offered)
            opening = first_user_message(run)
            if not opening.startswith(record.task.user_prompt):
                owners = [r for p, rs in by_prompt.items() if p and opening.startswith(p) for r in rs]
                if owners:
                    result.misaligned, result.belongs_to = True, owners[0].index
            elif not _reproduced(result) and len(by_prompt[record.task.user_prompt]) > 1:
                for other in by_prompt[record.task.user_prompt]:
                    if other is not record and _reproduced(
                        replay_run(domain, other, run, fmt, also_offered=also_offered)
                    ):
                        result.misaligned, result.belongs_to = True, other.index
                        break
            yield result


def replay_paths(
    paths: Iterable[str | Path],
    *,
    on_error: Callable[[LoadError], None] | None = None,
    on_file: Callable[[Path], None] | None = None,
    on_record_without_runs: Callable[[Record], None] | None = None,
) -> Iterator[RunReplay]:
    """Replay every run of every record of the trajectory files under ``paths``, file by file."""
    for path in iter_trajectory_files(paths):
        if on_file is not None:
            on_file(path)
        yield from replay_file(path, on_error=on_error, on_record_without_runs=on_record_without_runs)


@dataclass
class ReplaySummary:
    """Per-domain counts of a replay: runs, tool outputs and final databases reproduced."""

    runs: Counter[str] = field(default_factory=Counter)
    misaligned_runs: Counter[str] = field(default_factory=Counter)
    outputs: Counter[str] = field(default_factory=Counter)
    outputs_matching: Counter[str] = field(default_factory=Counter)
    databases_matching: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)

    def add(self, replay: RunReplay) -> None:
        domain = replay.domain
        self.errors[domain] += len(replay.errors)
        if replay.misaligned:  # conversation of another task: cannot match, reported apart
            self.misaligned_runs[domain] += 1
            return
        self.runs[domain] += 1
        self.outputs[domain] += len(replay.recorded_outputs)
        self.outputs_matching[domain] += replay.outputs_matching
        self.databases_matching[domain] += replay.database_matches

    def rows(self) -> list[dict[str, Any]]:
        domains = sorted(set(self.runs) | set(self.misaligned_runs))
        rows = [self._row(d, [d]) for d in domains]
        if len(domains) > 1:
            rows.append(self._row("all", domains))
        return rows

    def _row(self, name: str, domains: list[str]) -> dict[str, Any]:
        def total(counter: Counter[str]) -> int:
            return sum(counter[d] for d in domains)

        outputs, runs = total(self.outputs), total(self.runs)
        return {
            "domain": name,
            "runs": runs,
            "misaligned_runs": total(self.misaligned_runs),
            "tool_outputs": outputs,
            "tool_outputs_matching": total(self.outputs_matching),
            "tool_outputs_matching_pct": _pct(total(self.outputs_matching), outputs),
            "final_databases_matching": total(self.databases_matching),
            "final_databases_matching_pct": _pct(total(self.databases_matching), runs),
            "replay_errors": total(self.errors),
        }


def _pct(part: int, whole: int) -> float | None:
    return None if whole == 0 else round(100.0 * part / whole, 3)
