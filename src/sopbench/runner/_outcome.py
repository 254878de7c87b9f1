"""What a run gives back: its counts as episodes finish (``Progress``), its report when it ends
(``RunReport``), and the interruption that stops it (``RunInterrupted``)."""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sopbench.scoring import Summary
from sopbench.statistics import UsageSummary

from ._manifest import TaskSet
from ._row import EpisodeRow, passed_by_default, protocol_breaks


class RunInterrupted(KeyboardInterrupt):
    """The run stopped on Ctrl-C (SIGINT) or SIGTERM; every finished episode is stored.
    ``exit_code`` is the shell's convention: 128 + the signal number (130, 143)."""

    def __init__(self, signum: int, progress: Progress, parts: Sequence[tuple[Path, Progress]] = ()) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.progress = progress  # over every configuration of the run
        self.parts = tuple(parts)  # (run folder, its counts) per configuration, in order

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@dataclass
class Progress:
    """Counts as episodes finish (what the progress bar shows)."""

    total: int = 0  # episodes in the selection
    skipped: int = 0  # already finished before this invocation
    done: int = 0  # finished in this invocation
    scored: int = 0
    passed: int = 0
    infra_errors: int = 0
    last: str = ""

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.scored if self.scored else None


ProgressCallback = Callable[[Progress], None]


@dataclass
class ProtocolCounts:
    """How the agent kept the protocol in the scored episodes of a domain (or of all): its passes, of
    which by default (no well-formed action), its replies that broke the text protocol and its
    malformed calls."""

    passed: int = 0
    passed_by_default: int = 0
    protocol_breaks: int = 0
    malformed_calls: int = 0

    def add(self, row: EpisodeRow) -> None:
        self.passed += bool(row.passed)
        self.passed_by_default += bool(passed_by_default(row))
        self.protocol_breaks += protocol_breaks(row)
        self.malformed_calls += row.malformed_calls or 0

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


@dataclass
class RunReport:
    output: Path
    episodes: int  # in the selection
    skipped: int  # finished before, not run again
    ran: int  # run now
    completed: int  # completed episodes of the selection in the store
    infra_errors: int  # infra_error episodes of the selection in the store (retried on resume)
    summary: Summary  # sound verdicts of the completed episodes of the selection
    task_set: TaskSet | None = None  # the tasks of this invocation
    baselines: dict[str, Summary] = field(default_factory=dict)
    infra_reasons: list[str] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)  # stored rows that could not be read (run again)
    usage: UsageSummary | None = None  # tokens and latency of the completed episodes
    # Completed episodes in which the model never replied (its first request already failed, by a
    # context overflow): no behaviour to judge, so not scored (like an infra_error), counted by
    # how they ended. They make the run incomplete (exit 1) though no resume changes them.
    no_reply: dict[str, int] = field(default_factory=dict)
    scored_tasks: list[str] = field(default_factory=list)  # task ids in ``summary`` (baselines use them)
    timed_out_requests: int = 0  # requests abandoned at --request-timeout (retried within --max-retries)
    # Seconds the model requests (agent and user) of the selection waited for an endpoint slot
    # (--endpoint-slots), and took to be answered, over all episodes: apart from the episodes' own time.
    queue_s: float = 0.0
    model_s: float = 0.0
    # Why the run stopped before its episodes were played, when an endpoint refused a request no
    # retry fixes (a wrong key, say): ``run`` raises ``RunRefused``; a sweep shows the others.
    refused: str | None = None
    protocol: dict[str, ProtocolCounts] = field(default_factory=dict)  # by domain, and "all"
    cache: CacheCounts | None = None  # the recorded replies (``--cache``) this invocation used

    @property
    def complete(self) -> bool:
        return self.infra_errors == 0 and not self.no_reply and self.completed == self.episodes

    def as_dict(self) -> dict[str, Any]:
        task_set = None
        if self.task_set is not None:
            task_set = {
                "path": str(self.task_set.path),
                "generated_seed": self.task_set.generated_seed,
                "tasks": len(self.task_set.digests),
                "sha256": self.task_set.sha256,
            }
        return {
            "output": str(self.output),
            "task_set": task_set,
            "episodes": self.episodes,
            "skipped": self.skipped,
            "ran": self.ran,
            "completed": self.completed,
            "infra_errors": self.infra_errors,
            "summary": self.summary.as_dict(),
            "baselines": {name: summary.as_dict() for name, summary in self.baselines.items()},
            "infra_reasons": list(self.infra_reasons),
            "usage": None if self.usage is None else self.usage.as_dict(),
            "no_reply": dict(self.no_reply),
            "timed_out_requests": self.timed_out_requests,
            "request_time_s": {"queued": round(self.queue_s, 3), "model": round(self.model_s, 3)},
            "protocol": {domain: counts.as_dict() for domain, counts in self.protocol.items()},
            "cache": None if self.cache is None else self.cache.as_dict(),
        }


@dataclass
class CacheCounts:
    """What the cache did in one invocation: replies it answered (``hits``, apart from the requests
    sent; their tokens apart too), requests it could not answer (``misses``: sent and recorded in
    ``read-write``, an ``infra_error`` in ``replay``), entries recorded, and what went wrong with the
    file (one line each)."""

    path: Path
    mode: str
    hits: int = 0
    misses: int = 0
    recorded: int = 0
    hit_prompt_tokens: int = 0
    hit_completion_tokens: int = 0
    problems: list[str] = field(default_factory=list)  # the recording is incomplete (the run exits 1)
    notes: list[str] = field(default_factory=list)  # repaired on the way (damaged entries recorded again)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "mode": self.mode,
            "hits": self.hits,
            "misses": self.misses,
            "recorded": self.recorded,
            "hit_tokens": {"prompt": self.hit_prompt_tokens, "completion": self.hit_completion_tokens},
            "problems": list(self.problems),
            "notes": list(self.notes),
        }
