"""Conformance with data nobody here wrote: the published per-record ``statistics`` of three
university files (3 runs per task) against our first-k pass@k under the sopbench protocol."""

from __future__ import annotations

import gzip
import json

import pytest

from sopbench.scoring import SOPBENCH, score_paths, summarize

FILES = {
    "gpt-4.1-mini": "ast_gpt-4.1-mini-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json.gz",
    "llama3.1-70b": "ast_llama3.1-70b-instruct-mode_react-dep_full-fmt_structured-tool_full-shuffle_False.json.gz",
    "qwen2.5-14b": "ast_qwen2.5-14b-instruct-mode_react-dep_full-fmt_structured-tool_full-shuffle_False.json.gz",
}


@pytest.mark.parametrize("model", sorted(FILES))
def test_pass_at_k_first_equals_the_published_total_pass_at_k(model, published_trajectories_dir):
    path = published_trajectories_dir / "university" / FILES[model]
    if not path.is_file():
        pytest.skip(f"{path.name} not found in the published data")
    records = json.loads(gzip.decompress(path.read_bytes()))
    published = {
        k: sum(r["statistics"][f"total_pass@{k}"] for r in records) / len(records) for k in (1, 2, 3)
    }
    overall = summarize(score_paths(path, SOPBENCH)).overall
    ours = overall.repeated
    assert ours.tasks_with_k == {1: 44, 2: 44, 3: 44}
    assert ours.pass_at_k_first == pytest.approx(published, abs=1e-12)
    assert overall.as_dict()["pass_at_k_first"] == {str(k): pytest.approx(v) for k, v in published.items()}


def test_the_spread_between_pass_rate_pass_hat_k_and_pass_at_k(published_trajectories_dir):
    path = published_trajectories_dir / "university" / FILES["gpt-4.1-mini"]
    if not path.is_file():
        pytest.skip(f"{path.name} not found in the published data")
    ours = summarize(score_paths(path, SOPBENCH)).overall.repeated
    assert round(ours.mean_pass_rate, 4) == 0.4697
    assert [round(ours.pass_at_k_first[k], 4) for k in (1, 2, 3)] == [0.3864, 0.5682, 0.6136]
    assert round(ours.pass_hat_k[3], 4) == 0.2727
