"""One reading of a "no action" call for every front end: the same model reply is the same episode
in ``sopbench run`` (the ``openai`` agent) and in ``inspect eval`` (an Inspect model), under the
default reading (the published simulator's) and under ``wide`` alike."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

pytest.importorskip(
    "inspect_ai", reason="the inspect extra is not installed (pip install 'sopbench[inspect]')"
)

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from sopbench.inspect_eval import SCORER_NAME, SopbenchTaskError, sopbench  # noqa: E402
from sopbench.runner import RunSpec, run
from sopbench.runner.store import STORE_NAME

sys.path.insert(0, str(Path(__file__).parents[1] / "agents"))
from chat_server import call, serve  # noqa: E402

TEXT = "Let me look into that."


def _played_by_run(tasks: Path, output: Path, name: str, reading: str | None) -> tuple[list, list[str]]:
    """The calls answered and the problems of one episode of ``run --agent openai`` whose model first
    writes ``TEXT`` with a call of ``name``, then calls ``exit_conversation``."""
    settings = {} if reading is None else {"no_action": reading}
    with serve([call(name, "{}", content=TEXT), call("exit_conversation")]) as server:
        report = run(
            RunSpec(
                agent="openai",
                agent_options={"base_url": server.url, "model": "m", "max_retries": 1},
                tasks=tasks,
                domains="bank",
                limit=1,
                output=output,
                baselines=False,
                **settings,
            )
        )
    assert report.complete
    db = sqlite3.connect(output / STORE_NAME)
    ((calls, problems, manifest),) = db.execute(
        "SELECT tool_calls, problems, (SELECT value FROM meta WHERE key = 'manifest') FROM episodes"
    ).fetchall()
    db.close()
    answered = [(c["name"], c["output"]) for c in json.loads(calls)]
    return answered, [*json.loads(problems), json.loads(manifest)]


def _played_by_inspect(tasks: Path, log_dir: Path, name: str, reading: str | None) -> tuple[list, list[str]]:
    """The same model reply through Inspect: the calls answered and the problems of the sample."""
    outputs = [
        ModelOutput.for_tool_call("mockllm/model", name, {}, tool_call_id="c1", content=TEXT),
        ModelOutput.for_tool_call("mockllm/model", "exit_conversation", {}, tool_call_id="c2"),
    ]
    for output in outputs:  # with its usage given, mockllm counts no tokens (no tokenizer download)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1)
    settings = {} if reading is None else {"no_action": reading}
    task = sopbench(domain="bank", tasks=str(tasks), limit=1, **settings)
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = inspect_eval(task, model=model, log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    (sample,) = log.samples
    answered = [(m.function, m.text) for m in sample.messages if m.role == "tool"]
    return answered, sample.scores[SCORER_NAME].metadata["problems"]


@pytest.mark.parametrize(
    ("name", "reading", "no_call"),
    [
        ("N/A", None, True),  # the simulator's own spelling: no call in either reading
        (" N/A ", None, False),  # the published rule reads the name as written: an unknown tool
        ("null", None, False),
        (" N/A ", "wide", True),
        ("null", "wide", True),
        ("lookup_everything", "wide", False),
    ],
)
def test_the_same_reply_is_the_same_episode_in_run_and_in_inspect(
    name, reading, no_call, published_tasks_dir, tmp_path
):
    tasks = published_tasks_dir / "bank_tasks.json.gz"
    by_run, run_problems = _played_by_run(tasks, tmp_path / "run", name, reading)
    manifest = run_problems.pop()
    by_inspect, inspect_problems = _played_by_inspect(tasks, tmp_path / "logs", name, reading)
    assert by_run == by_inspect
    assert by_run == ([] if no_call else [(name, f"Error: Tool {name} not found.")])
    assert run_problems == inspect_problems
    # the wider reading is a setting of the run, in its identity; the default leaves no trace there
    assert manifest["config"].get("no_action") == reading


def test_a_reading_that_does_not_exist_is_named(tmp_path):
    with pytest.raises(SopbenchTaskError, match="no_action: Input should be 'published' or 'wide'"):
        sopbench(domain="bank", limit=1, no_action="loose")
    with pytest.raises(ValueError, match="no_action"):
        RunSpec(agent="reference", output=tmp_path, no_action="loose")
