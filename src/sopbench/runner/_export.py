"""Exporting a run folder: JSON Lines (one episode per line) or trajectory files of the published layout."""

from __future__ import annotations

from itertools import groupby
from pathlib import Path
from typing import IO, Any

import orjson

from sopbench._io import write_atomically
from sopbench.tasks import Task, load_tasks

from ._record import record_json
from ._scoring import PUBLISHED_CHECKS
from ._store import Store

VERDICT_KEYS = ("passed", "database", "permission", "procedure")
TIMING_FIELDS = ("latency_s",)


def export_line(row: dict[str, Any], *, timings: bool = True) -> dict[str, Any]:
    """One episode as an export line. Timings come last, so that the rest is comparable byte for byte."""
    verdict = None
    if row["status"] == "completed":
        verdict = {key: row["verdict"][key] for key in VERDICT_KEYS}
        # null checks: the published evaluator crashes on this episode (its explanations say why)
        compat = row["compat"] or {}
        verdict.update({key: compat.get(key) for key in PUBLISHED_CHECKS})
    line = {
        "domain": row["domain"],
        "task_id": row["task_id"],
        "goal": row["goal"],
        "agent": row["agent"],
        "model": row["model"],
        "tool_mode": row["tool_mode"],
        "tool_list": row["tool_list"],
        "user": row["user"],
        "run": row["run"],
        "seed": row["seed"],
        "status": row["status"],
        "end": row["end_reason"],
        "reason": row["reason"],
        "tool_calls": [
            {
                "name": c["name"],
                "arguments": c["arguments"] if c["arguments"] is not None else c["arguments_text"],
                "output": c["output"],
            }
            for c in row["tool_calls"]
        ],
        "final_database": row["final_database"],
        "verdict": verdict,
        "explanations": row["explanations"],
        "malformed_calls": row["malformed_calls"],
        "problems": row["problems"],
        "raw_replies": row["raw_replies"],
        "usage": row["usage"],
        "messages": row["messages"],
    }
    if timings:
        line["latency_s"] = row["latency_s"]
    return line


def export_jsonl(store: Store, sink: IO[bytes], *, timings: bool = True) -> int:
    """Every episode, one JSON line each, in a fixed order (domain, task position, run)."""
    count = 0
    for row in store.rows():
        sink.write(orjson.dumps(export_line(row, timings=timings), option=orjson.OPT_NON_STR_KEYS) + b"\n")
        count += 1
    return count


def trajectory_file_name(model: str | None, agent: str, tool_mode: str | None, tool_list: str) -> str:
    """The published naming: ``ast_<model>-mode_<mode>-dep_full-fmt_structured-tool_<list>-shuffle_False.json``."""
    name = (model or agent).replace("/", "_")
    return f"ast_{name}-mode_{tool_mode or 'fc'}-dep_full-fmt_structured-tool_{tool_list}-shuffle_False.json"


def _tasks_by_index(tasks_path: Path, domain: str) -> dict[int, Task]:
    from ._run import task_files

    file = task_files(tasks_path, [domain])[domain]
    return {task.index: task for task in load_tasks(file, domain=domain) if task.index is not None}


def export_sopbench(store: Store, folder: Path, tasks_path: Path) -> list[Path]:
    """Trajectory files in the published layout, one per domain (``<folder>/<domain>/<name>.json``),
    one record per task with its completed runs in run order. ``sopbench evaluate`` scores them."""
    written = []
    rows = [row for row in store.rows() if row["status"] == "completed"]
    for domain, grouped in groupby(rows, key=lambda r: r["domain"]):
        domain_rows = list(grouped)
        tasks = _tasks_by_index(tasks_path, domain)
        first = domain_rows[0]
        records = []
        for index, task_rows in groupby(domain_rows, key=lambda r: r["task_index"]):
            task = tasks[index]
            runs = [(r["messages"], r["final_database"]) for r in task_rows]
            records.append(
                record_json(
                    task,
                    runs,
                    tool_list=first["tool_list"],
                    model=first["model"] or first["agent"],
                    tool_mode=first["tool_mode"] or "fc",
                    user=first["user"],
                )
            )
        target = (
            folder
            / domain
            / trajectory_file_name(first["model"], first["agent"], first["tool_mode"], first["tool_list"])
        )
        write_atomically(target, orjson.dumps(records, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_INDENT_2))
        written.append(target)
    return written

