"""sopbench inside Inspect AI: the same verdicts as ``sopbench run``, malformed calls, epochs, the
LLM user through a model role, and the log read back by Inspect and by ``sopbench evaluate``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip(
    "inspect_ai", reason="the inspect extra is not installed (pip install 'sopbench[inspect]')"
)

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import (  # noqa: E402
    read_eval_log,
    read_eval_log_sample_summaries,
    read_eval_log_samples_by_id,
)
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from sopbench.cli import app  # noqa: E402
from sopbench.inspect_eval import SCORER_NAME, reference_model, sopbench  # noqa: E402
from sopbench.runner import RunSpec, run
from sopbench.runner.store import STORE_NAME

assert reference_model  # registers the sopbench-reference provider

# All tasks of two domains of the generated set (the two smallest: 44 + 78 samples).
DOMAINS = "university,library"


def _verdicts_of_log(log) -> dict[str, tuple[dict, dict]]:
    """Each sample's sound verdict and published checks, read by Inspect's own sample reader."""
    out = {}
    for sample in read_eval_log_sample_summaries(log.location):
        assert sample.error is None, sample.error
        meta = sample.scores[SCORER_NAME].metadata
        out[str(sample.id)] = (meta["verdict"], meta["compat"])
    return out


@pytest.fixture(scope="module")
def reference_logs(tmp_path_factory):
    """The reference policy played by ``sopbench run`` and through Inspect, on the same tasks."""
    base = tmp_path_factory.mktemp("inspect")
    run(RunSpec(agent="reference", domains=DOMAINS, output=base / "run", baselines=False))
    logs = inspect_eval(
        sopbench(domain=DOMAINS),
        model="sopbench-reference/reference",
        log_dir=str(base / "logs"),
        display="none",
        max_samples=4,
        log_realtime=False,
    )
    assert logs[0].status == "success", logs[0].error
    return base / "run", logs[0]


def test_reference_policy_gets_the_runners_verdicts_through_inspect(reference_logs):
    run_folder, log = reference_logs
    db = sqlite3.connect(run_folder / STORE_NAME)
    runner = {
        task_id: (json.loads(verdict), None if compat is None else json.loads(compat))
        for task_id, verdict, compat in db.execute("SELECT task_id, verdict, compat FROM episodes")
    }
    db.close()
    inspect = _verdicts_of_log(log)
    assert len(inspect) == len(runner) == 44 + 78
    assert inspect == runner  # every verdict, the sound one and the seven published checks
    passed = {t for t, (v, _) in runner.items() if v["passed"]}
    assert {t for t, (v, _) in inspect.items() if v["passed"]} == passed
    metrics = log.results.scores[0].metrics
    assert metrics["accuracy"].value == pytest.approx(len(passed) / len(runner))
    assert {"stderr", "university", "library"} <= set(metrics)
    first = next(t for t in inspect if t.startswith("university/"))
    (sample,) = read_eval_log_samples_by_id(log.location, [(first, 1)])
    assert sample.metadata["domain"] == "university" and "constraints" in sample.metadata
    assert sample.messages[0].role == "system" and "university" in sample.messages[0].text.lower()


def test_sopbench_evaluate_reads_the_inspect_log_with_the_same_verdicts(reference_logs, tmp_path):
    _, log = reference_logs
    log_path = Path(log.location)
    assert read_eval_log(str(log_path), header_only=True).status == "success"  # Inspect's reader
    out = tmp_path / "verdicts.jsonl"
    result = CliRunner().invoke(app, ["evaluate", str(log_path), "--output", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    expected = _verdicts_of_log(log)
    # The stored sound verdict also names what a failed procedure left unverified (as a run folder's
    # does); evaluate writes the verdict's own fields.
    fields = {t: {k: x for k, x in v.items() if k != "unverified"} for t, (v, _) in expected.items()}
    assert all("unverified" in v for v, _ in expected.values())
    assert {row["task_id"]: row["verdict"] for row in rows} == fields
    compat = tmp_path / "compat.jsonl"
    result = CliRunner().invoke(
        app, ["evaluate", str(log_path), "--output", str(compat), "--protocol", "sopbench"]
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in compat.read_text().splitlines()]
    assert {row["task_id"]: row["verdict"] for row in rows} == {t: c for t, (_, c) in expected.items()}


def _offline(output: ModelOutput) -> ModelOutput:
    # With its usage given, mockllm does not count tokens (its tokenizer would be downloaded).
    output.usage = ModelUsage(input_tokens=1, output_tokens=1)
    return output


def _call(name: str, arguments: dict, call_id: str) -> ModelOutput:
    return _offline(ModelOutput.for_tool_call("mockllm/model", name, arguments, tool_call_id=call_id))


def _say(text: str) -> ModelOutput:
    return _offline(ModelOutput.from_content("mockllm/model", text))


def test_unknown_tools_and_bad_arguments_end_in_a_scored_sample(tmp_path):
    bad_json = _call("login_user", {}, "c3")
    bad_json.choices[0].message.tool_calls[0].parse_error = "Expecting value: line 1 column 1"
    outputs = [
        _call("no_such_tool", {"a": 1}, "c1"),
        _call("login_user", {"nonsense": 1}, "c2"),  # unexpected and missing arguments
        bad_json,
        _say("I cannot do that."),  # the user answers
        _call("exit_conversation", {}, "c4"),
    ]
    model = get_model("mockllm/model", custom_outputs=outputs)
    log = inspect_eval(sopbench(domain="bank", limit=1), model=model, log_dir=str(tmp_path), display="none")[
        0
    ]
    assert log.status == "success", log.error
    log = read_eval_log(log.location)  # Inspect's own reader opens the log
    (sample,) = log.samples
    score = sample.scores[SCORER_NAME]
    assert score.value in ("C", "I") and score.answer == "exit_conversation"
    problems = score.metadata["problems"]
    assert len(problems) == 3 and "unknown tool 'no_such_tool'" in problems[0]
    tool_texts = [m.text for m in sample.messages if m.role == "tool"]
    assert len(tool_texts) == 3 and all(tool_texts)
    users = [m.text for m in sample.messages if m.role == "user"]
    assert len(users) == 2 and "Here is all the information I have" in users[1]


def test_published_limits_hold(tmp_path):
    """A model that never stops calling tools is stopped after 10 answered calls."""
    model = get_model("mockllm/model", custom_outputs=[_call("no_such_tool", {}, f"c{i}") for i in range(30)])
    log = inspect_eval(sopbench(domain="bank", limit=1), model=model, log_dir=str(tmp_path), display="none")[
        0
    ]
    (sample,) = log.samples
    assert sample.scores[SCORER_NAME].answer == "max_actions"
    assert sum(m.role == "tool" for m in sample.messages) == 10


def test_epochs_give_pass_hat_k(tmp_path):
    log = inspect_eval(
        sopbench(domain="university", limit=2),
        model="sopbench-reference/reference",
        epochs=3,
        log_dir=str(tmp_path),
        display="none",
    )[0]
    assert log.status == "success", log.error
    assert len(log.samples) == 6 and {s.epoch for s in log.samples} == {1, 2, 3}
    reducers = {score.reducer for score in log.results.scores}
    assert reducers == {"mean", "pass_hat"}
    for score in log.results.scores:
        assert score.metrics["accuracy"].value == 1.0  # the reference passes these every time


def test_llm_user_is_played_by_the_user_model_role(tmp_path):
    agent = get_model(
        "mockllm/model",
        custom_outputs=[_say(f"Can you tell me more? ({i})") for i in range(5)],
    )
    user = get_model(
        "mockllm/model",
        custom_outputs=[_call("exit_conversation", {}, "u1")],
    )
    log = inspect_eval(
        sopbench(domain="bank", limit=1, user="llm"),
        model=agent,
        model_roles={"user": user},
        log_dir=str(tmp_path),
        display="none",
    )[0]
    assert log.status == "success", log.error
    (sample,) = log.samples
    score = sample.scores[SCORER_NAME]
    assert score.answer == "user_ended"
    assert score.metadata["user"] == "llm"
    # The agent was not offered exit_conversation: the user holds it.
    assert [m.role for m in sample.messages] == ["system", "user", "assistant", "user", "assistant", "user"]
