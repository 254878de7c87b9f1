"""Inspect with no network: ``inspect eval sopbench/sopbench --model mockllm/model --limit 5`` plays
and scores every sample, asking for no tokenizer download, and ``sopbench evaluate`` scores its log."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip(
    "inspect_ai", reason="the inspect extra is not installed (pip install 'sopbench[inspect]')"
)

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log_sample_summaries  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from sopbench.cli import app  # noqa: E402
from sopbench.inspect_eval import SCORER_NAME  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from offline import block_network  # noqa: E402


def test_mockllm_eval_runs_offline_and_evaluate_scores_its_log(tmp_path, monkeypatch):
    # An empty tokenizer cache: a cached o200k_base must not hide a download.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(tmp_path / "tiktoken"))
    refused = block_network(monkeypatch)
    (log,) = inspect_eval(
        "sopbench/sopbench",  # as `inspect eval` finds it: through the inspect_ai entry point
        model="mockllm/model",
        limit=5,
        log_dir=str(tmp_path / "logs"),
        display="none",
        log_realtime=False,
    )
    assert log.status == "success", log.error
    summaries = read_eval_log_sample_summaries(log.location)
    assert len(summaries) == 5
    assert [s.id for s in summaries if s.error is not None] == []
    assert all(SCORER_NAME in s.scores for s in summaries)
    assert refused == []  # nothing even tried to reach the network
    out = tmp_path / "verdicts.jsonl"
    result = CliRunner().invoke(app, ["evaluate", log.location, "--output", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 5 and all("passed" in row["verdict"] for row in rows)
    # mockllm's text reply refuses by silence: the must-refuse tasks among the five pass
    assert any(row["verdict"]["passed"] for row in rows)
    # mockllm's usage was filled in by the local estimate, not left empty
    assert all(s.model_usage and next(iter(s.model_usage.values())).input_tokens > 0 for s in summaries)
