"""An episode as a record of the published trajectory layout (SPEC §6.2).

One conversion serves both the scorer (which reads records) and ``sopbench export --format
sopbench`` (which writes them), so that ``sopbench evaluate`` on an export gives the verdicts the
runner stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sopbench.domains import Environment
from sopbench.tasks import Task, task_json
from sopbench.traces import Record, record_from_json


def assistant_name(domain: str) -> str:
    """The published simulator's sender name for the assistant: ``"online market assistant"``."""
    return f"{domain.replace('_', ' ')} assistant"


def published_messages(domain: str, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat-completions messages in the published ``interaction`` layout (``sender``, no ``role``)."""
    assistant = assistant_name(domain)
    out: list[dict[str, Any]] = []
    # Chat tool messages carry only the call id; the runner answers a message's calls in order, so
    # the n-th tool message after an assistant message answers its n-th call (ids may repeat).
    pending: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "tool":
            out.append(
                {
                    "tool_call_id": message.get("tool_call_id"),
                    "tool_name": pending.pop(0) if pending else "",
                    "content": message.get("content"),
                }
            )
            continue
        pending = [call["function"]["name"] for call in message.get("tool_calls") or ()]
        out.append(
            {
                "sender": "user" if role == "user" else assistant,
                "content": message.get("content"),
                "tool_calls": [dict(call) for call in message.get("tool_calls") or ()] or None,
            }
        )
    return out


def executed_messages(
    messages: Sequence[Mapping[str, Any]], refused: Sequence[bool]
) -> list[Mapping[str, Any]]:
    """The conversation as the environment executed it: the calls the guard refused (``refused``:
    one flag per answered call, in order) and their answers are left out, so that a scorer that
    replays the calls does not execute them."""
    if not any(refused):
        return list(messages)
    flags = iter(refused)
    answered = [next(flags, False) if m.get("role") == "tool" else False for m in messages]
    out: list[Mapping[str, Any]] = []
    for index, message in enumerate(messages):
        if message.get("role") == "tool":
            if not answered[index]:
                out.append(message)
            continue
        calls = message.get("tool_calls") or ()
        if calls and index + 1 < len(messages) and messages[index + 1].get("role") == "tool":
            kept = [call for n, call in enumerate(calls) if not answered[index + 1 + n]]
            message = {**message, "tool_calls": kept or None}
        out.append(message)
    return out


def setup_json(
    tool_list: str,
    model: str | None,
    tool_mode: str | None,
    user: str,
    ablations: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    agent = {
        "model": model,
        "temperature": None,
        "top_p": None,
        "max_tokens": None,
        "tool_call_mode": tool_mode,
    }
    environment = Environment.from_settings(ablations or {})
    return {
        "env_mode": environment.env_mode,
        "shuffle_func": environment.shuffle_tools,
        "default_constraint_option": environment.default_sop,
        "constraint_descr_format": environment.constraint_format,
        "tool_list": tool_list,
        "user_agent": None if user == "none" else {"model": user},
        "assistant_agent": agent,
    }


def record_json(
    task: Task,
    runs: Sequence[tuple[Sequence[Mapping[str, Any]], Any]],
    *,
    tool_list: str,
    model: str | None,
    tool_mode: str | None,
    user: str = "none",
    ablations: Mapping[str, Any] | None = None,
    prompts: Sequence[str] = (),
) -> dict[str, Any]:
    """One task's record: ``runs`` are (chat messages, final database) pairs, one per run;
    ``prompts`` the system prompt each run's model was shown ("" for none, as by default)."""
    shown = list(prompts) + [""] * (len(runs) - len(prompts))
    return {
        "domain": task.domain,
        "setup": setup_json(tool_list, model, tool_mode, user, ablations),
        "task": task_json(task),
        "interactions": [
            {"prompt": prompt, "interaction": published_messages(task.domain, messages), "database": database}
            for (messages, database), prompt in zip(runs, shown, strict=False)
        ],
    }


def episode_record(
    task: Task,
    messages: Sequence[Mapping[str, Any]],
    database: Any,
    *,
    tool_list: str,
    ablations: Mapping[str, Any] | None = None,
    refused: Sequence[bool] = (),
) -> Record:
    """The episode as a loaded record, sharing ``task`` itself (scorers key their caches on it)."""
    data = record_json(
        task,
        [(executed_messages(messages, refused), database)],
        tool_list=tool_list,
        model=None,
        tool_mode=None,
        ablations=ablations,
    )
    return record_from_json(data, task=task)
