"""Helpers of the viewer's tests (see conftest.py). Episodes, made without the published data: a few generated bank tasks
played by two built-in agents (two run folders: ``reference`` passes, ``no-verify`` fails its
procedure), and a trajectory file exported from the reference run whose messages carry markup."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from sopbench.generation import generate_domain
from sopbench.runner import RunSpec, export_sopbench, read_run, run

# What an injected message tries: run a script, load an image whose error handler runs one and
# calls home, follow a javascript: link. Each must show as text.
SCRIPT = "<script>window.__injected = 1; alert('script');</script>"
IMAGE = "<img src=x onerror=\"window.__injected = 2; fetch('/pwned-image')\">"
LINK = '<a href="javascript:alert(3)" id="injected-link">click me</a>'
INJECTED_FILE = "ast_injected-model-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"


@dataclass(frozen=True)
class ViewerSources:
    tasks: Path
    reference: Path  # run folder: every episode passes
    no_verify: Path  # run folder: must-succeed episodes fail their procedure at the goal call
    injected: Path  # trajectory folder: one file, its first record's messages carry markup

    @property
    def all(self) -> list[Path]:
        return [self.reference, self.no_verify, self.injected]


def make_viewer_sources(folder: Path) -> ViewerSources:
    tasks = folder / "tasks"
    tasks.mkdir()
    generated = generate_domain("bank", seed=0, goals_wanted=["transfer_funds"])
    (tasks / "bank_tasks.json").write_bytes(generated.to_json())
    for agent in ("reference", "no-verify"):
        run(RunSpec(agent=agent, domains=("bank",), tasks=tasks, output=folder / agent, baselines=False))
    exported = export_sopbench(read_run(folder / "reference", records=False), folder / "exported", tasks)
    records = json.loads(exported[0].read_text())
    records[0]["interactions"][0]["prompt"] = f"Follow the bank's rules {SCRIPT}"
    messages = records[0]["interactions"][0]["interaction"]
    messages[0]["content"] = f"Hi {SCRIPT} I want to transfer money."
    said = next(m for m in reversed(messages) if m.get("sender") not in (None, "user") and m.get("content"))
    said["content"] = f"{said['content']} {IMAGE} {LINK}"
    tool_answer = next(m for m in messages if m.get("tool_call_id") is not None)
    tool_answer["content"] = f"{tool_answer['content']} {SCRIPT}"
    injected = folder / "injected"
    (injected / "bank").mkdir(parents=True)
    (injected / "bank" / INJECTED_FILE).write_text(json.dumps(records[:3]))
    shutil.rmtree(folder / "exported")
    return ViewerSources(tasks, folder / "reference", folder / "no-verify", injected)


def start_viewer(sources: list[Path], *extra: str) -> tuple[subprocess.Popen, str]:
    """``sopbench view SOURCES --port 0`` as a real process; returns it and the URL it printed."""
    process = subprocess.Popen(
        [sys.executable, "-m", "sopbench.cli", "view", *map(str, sources), "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline()  # the URL line, printed once the server accepts requests
    if "http://" not in line:
        process.kill()
        raise AssertionError(f"the viewer did not start: {line!r} {process.stderr.read()}")
    return process, line.split()[2]


# ---- sources beyond the three above (tests/view/test_navigation.py and the browser tests) ----------


def register_crashing_agent() -> str:
    """An agent whose first reply is a malformed call (and costs tokens) and whose second raises:
    every episode it plays is an ``infra_error`` that kept its transcript and a stored problem."""
    from sopbench.agents import Agent, AgentTurn, ToolCallRequest, Usage, agent_names, register_agent

    name = "test-view-crashes"
    if name not in agent_names():

        @register_agent(name)
        class Crashes(Agent):
            name = "test-view-crashes"

            async def start(self, setup):
                self.replies = 0

            async def act(self, messages):
                self.replies += 1
                if self.replies > 1:
                    raise RuntimeError("the provider hung up")
                call = ToolCallRequest("call_0", "login_user", "{not json")
                return AgentTurn(content="Let me log you in.", tool_calls=(call,), usage=Usage(120, 30))

    return name


def make_crashed_run(folder: Path, tasks: Path) -> Path:
    """A run folder of infra_error episodes (see ``register_crashing_agent``)."""
    agent = register_crashing_agent()
    output = folder / "crashed"
    run(RunSpec(agent=agent, domains=("bank",), tasks=tasks, output=output, baselines=False, limit=2))
    return output


def make_inspect_log(folder: Path) -> Path:
    """An Inspect ``.eval`` log of the sopbench task: the reference policy on two bank tasks."""
    from inspect_ai import eval as inspect_eval

    from sopbench.inspect_eval import reference_model, sopbench

    assert reference_model  # registers the sopbench-reference provider
    logs = inspect_eval(
        sopbench(domain="bank", limit=2),
        model="sopbench-reference/reference",
        log_dir=str(folder / "logs"),
        display="none",
        log_realtime=False,
    )
    assert logs[0].status == "success", logs[0].error
    return Path(logs[0].location)
