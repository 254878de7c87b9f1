"""Inspect eval logs of the ``sopbench`` task read back whole: each sample's transcript, verdict and
how it went, for readers that show episodes (the viewer), not only count them (``inspect_log_scores``).

A sample's transcript is Inspect's chat messages, turned back into the chat-completions messages the
runner stored, and put in a trajectory record of the task it played (the task is rebuilt from the
eval's own arguments: its domain, task file or generated set, and tool list). The verdict is the one
the scorer kept (the final database is not in the log, so nothing is scored again).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sopbench.runner.episode import episode_record, row_of_score, row_score
from sopbench.scoring import RunScore
from sopbench.traces import Record

from ._log import InspectLogError, _metadata, _one_line, inspect_log_api

__all__ = ["InspectEpisode", "inspect_log_digest", "inspect_log_episodes", "inspect_log_running"]


@dataclass(frozen=True)
class InspectEpisode:
    """One sample epoch of a log: ``score`` None when the sample ended in an error (``error``)."""

    task_id: str
    run: int  # the epoch, from 0
    domain: str
    goal: str
    should_succeed: bool
    score: RunScore | None
    record: Record | None  # None when its task cannot be rebuilt (named in ``problem``)
    system_prompt: str | None
    facts: dict[str, Any] = field(default_factory=dict)  # the scorer's metadata: end, usage, latency...
    error: str | None = None
    problem: str | None = None


def inspect_log_digest(path: Path) -> str:
    """The eval's own id (``eval.eval_id``): the same log has it wherever it is copied."""
    log = _read_header(path)
    return str(log.eval.eval_id or log.eval.run_id)


def inspect_log_running(path: Path) -> bool:
    """Whether the eval that writes the log is still going (its status is ``started``); a log that
    cannot be read now counts as not running."""
    try:
        return bool(_read_header(path).status == "started")
    except InspectLogError:
        return False


def _read_header(path: Path) -> Any:
    read_eval_log = inspect_log_api(path).read_eval_log
    try:
        return read_eval_log(str(path), header_only=True)
    except Exception as exc:  # noqa: BLE001 - any reader failure is this file's problem, named
        raise InspectLogError(
            f"{path}: cannot read the Inspect log ({type(exc).__name__}: {_one_line(exc)})"
        ) from None


def inspect_log_episodes(
    path: Path, protocol: str = "sound", on_problem: Callable[[str], None] | None = None
) -> Iterator[InspectEpisode]:
    """Every sample epoch of the Inspect log ``path`` with its transcript (``InspectLogError`` when
    the file cannot be read as a log; a sample that cannot be used is named to ``on_problem``)."""
    header = _read_header(path)
    args = dict(header.eval.task_args or {})
    tool_list = _tool_list(args.get("tool_list"))
    tasks = _TaskLookup(str(args.get("tasks", "generated")), tool_list)
    from ._sides import chat_messages

    read_eval_log_samples = inspect_log_api(path).read_eval_log_samples

    try:
        for sample in read_eval_log_samples(str(path), all_samples_required=False, exclude_fields={"events"}):
            where = f"{path}: sample {sample.id} epoch {sample.epoch}"
            task_id, meta = str(sample.id), dict(sample.metadata or {})
            domain, goal = str(meta.get("domain", "")), str(meta.get("goal", ""))
            scored = _metadata(sample.scores)
            score = (
                None
                if scored is None
                else row_score(
                    row_of_score(scored, sample.epoch - 1), protocol, path.as_posix(), calls_kept=False
                )
            )
            if sample.error is None and score is None and on_problem is not None:
                on_problem(f"{where}: no sopbench score")
            system = next((m.text for m in sample.messages if m.role == "system"), None)
            record, problem = tasks.record(task_id, domain, chat_messages(sample.messages))
            if problem is not None and on_problem is not None:
                on_problem(f"{where}: {problem}")
            yield InspectEpisode(
                task_id=task_id,
                run=sample.epoch - 1,
                domain=domain,
                goal=goal,
                should_succeed=bool(meta.get("should_succeed", True)),
                score=score,
                record=record,
                system_prompt=system,
                facts=scored or {},
                error=None if sample.error is None else str(sample.error.message),
                problem=problem,
            )
    except InspectLogError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged archive is this file's problem, named
        raise InspectLogError(
            f"{path}: cannot read the Inspect log ({type(exc).__name__}: {_one_line(exc)})"
        ) from None


def _tool_list(given: object) -> str:
    """The tool list the eval ran with: an argument left at None took the run's default (RunSpec's,
    its one home); one the task refuses is kept as given, for each sample to name."""
    from ._task import SopbenchTaskError, run_spec

    try:
        return run_spec(tool_list=None if given is None else str(given)).tool_list
    except SopbenchTaskError:
        return str(given)


class _TaskLookup:
    """The tasks the eval played, by id, rebuilt once per domain from the eval's arguments."""

    def __init__(self, tasks: str, tool_list: str) -> None:
        self.tasks, self.tool_list = tasks, tool_list
        self._by_domain: dict[str, dict[str, Any] | str] = {}

    def record(
        self, task_id: str, domain: str, messages: list[dict[str, Any]]
    ) -> tuple[Record | None, str | None]:
        if domain not in self._by_domain:
            from ._task import SopbenchTaskError, load_samples

            try:
                self._by_domain[domain] = load_samples(domain, self.tasks, self.tool_list)[1]
            except (SopbenchTaskError, OSError, ValueError) as exc:
                self._by_domain[domain] = f"its tasks ({self.tasks}) cannot be read: {exc}"
        found = self._by_domain[domain]
        if isinstance(found, str):
            return None, found
        task = found.get(task_id)
        if task is None:
            return None, f"task {task_id} is not in {self.tasks}"
        # The log keeps no final database: an empty one stands in (the verdict is the stored one).
        return episode_record(task, messages, {}, tool_list=self.tool_list), None
