"""The proxy's decision log: one JSON line per tool call (what was decided, why, what came of it),
and a line for the start, for each problem and for the end; each line is flushed as it is written."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

from sopbench.guard import Decision

# What became of a call (the ``outcome`` field)
OK = "ok"  # the upstream answered it
TOOL_ERROR = "tool error"  # the upstream answered with a tool error (isError)
PROTOCOL_ERROR = "protocol error"  # the upstream answered with a JSON-RPC error
UPSTREAM_EXITED = "upstream exited"  # the upstream server ended before it answered
CANCELLED = "cancelled"  # the client cancelled it


@dataclass
class Counts:
    """How many calls were decided each way, and the problems met (lines that were not JSON-RPC)."""

    calls: int = 0
    allowed: int = 0
    refused: int = 0
    invalid: int = 0
    not_run: int = 0
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "allowed": self.allowed,
            "refused": self.refused,
            "invalid": self.invalid,
            "not_run": self.not_run,
            "problems": len(self.problems),
        }


class DecisionLog:
    """Writes the decision log to a binary file; keeps the counts."""

    def __init__(self, sink: IO[bytes]) -> None:
        self.sink = sink
        self.counts = Counts()

    def event(self, event: str, **fields: Any) -> None:
        self._write({"event": event, "time": _now(), **fields})

    def problem(self, text: str) -> None:
        """Something that was not a call and could not be passed on (counted, logged, told at the end)."""
        self.counts.problems.append(text)
        self.event("problem", problem=text)

    def call(
        self,
        tool: Any,
        arguments: Any,
        decision: Decision | None,
        *,
        outcome: str | None,
        guard_ms: float | None = None,
        upstream_ms: float | None = None,
        why: str | None = None,
    ) -> None:
        """One tool call: ``decision`` None when the call could not be judged (``why`` says why;
        counted as invalid) or was not run (``outcome`` says why: the upstream had exited, the client
        cancelled it)."""
        counts = self.counts
        counts.calls += 1
        line: dict[str, Any] = {"seq": counts.calls, "time": _now(), "tool": tool, "arguments": arguments}
        if decision is None:
            verdict = "invalid" if why is not None else "not run"
            if why is not None:
                counts.invalid += 1
                line["explanation"] = why
            else:
                counts.not_run += 1
        elif decision.allowed:
            verdict = "allowed"
            counts.allowed += 1
            if decision.explanation:  # a read-only call that runs although its SOP is not verified
                line["explanation"] = decision.explanation
        else:
            verdict = "refused"
            counts.refused += 1
            line["explanation"] = decision.explanation
            line["unmet"] = [
                {"constraint": u.constraint, "helpers": [str(h) for h in u.helpers]} for u in decision.unmet
            ]
        line["decision"] = verdict
        line["outcome"] = outcome
        if guard_ms is not None:
            line["guard_ms"] = round(guard_ms, 4)
        if upstream_ms is not None:
            line["upstream_ms"] = round(upstream_ms, 3)
        self._write(line)

    def _write(self, line: dict[str, Any]) -> None:
        self.sink.write(orjson.dumps(line, default=repr) + b"\n")
        self.sink.flush()


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
