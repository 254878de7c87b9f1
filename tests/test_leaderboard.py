"""sopbench leaderboard against the published README table."""

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.cli import app

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "sopbench"
pytestmark = pytest.mark.skipif(
    not SHARED.exists(), reason="../shared/sopbench not found: published data needed"
)

COLUMNS = ["bank", "dmv", "healthcare", "online_market", "university", "library", "hotel"]
# README row name -> the assistant model as trajectory file names spell it.
MODELS = {
    "o4-mini-high": ["o4-mini"],
    "Gemini-2.0-Flash-Thinking": ["gemini-2.0-flash-thinking-exp"],
    "GPT-4o": ["gpt-4o"],
    "Claude-3-7-Sonnet": ["claude-3-7-sonnet-20250219"],
    "GPT-4.1-mini": ["gpt-4.1-mini"],
    "Claude-3-5-Sonnet": ["claude-3-5-sonnet-20241022"],
    "GPT-4o-mini": ["gpt-4o-mini"],
    "Gemini-2.0-Flash": ["gemini-2.0-flash-001"],
    "Gemini-1.5-Pro": ["gemini-1.5-pro"],
    "Llama3.1-70B-Instruct": ["llama3.1-70b-instruct", "llama3.1-70b-it-fireworks"],
    "Qwen2.5-72B-Instruct": ["qwen2.5-72b-instruct"],
    "Qwen2.5-32B-Instruct": ["qwen2.5-32b-instruct"],
    "Qwen2.5-14B-Instruct": ["qwen2.5-14b-instruct"],
}
# Cells the dev trajectories cover but cannot reproduce, and why.
NOT_REPRODUCIBLE = {
    (
        "o4-mini-high",
        "healthcare",
    ): "83 of 130 records hold another task's conversation (misaligned_files.csv)",
    ("o4-mini-high", "library"): "the file's records are misaligned with their tasks (misaligned_files.csv)",
    (
        "Llama3.1-70B-Instruct",
        "bank",
    ): "only an older fireworks-hosted run is published, not the README's run",
    ("Llama3.1-70B-Instruct", "dmv"): "only an older fireworks-hosted run is published, not the README's run",
    ("Llama3.1-70B-Instruct", "healthcare"): "only an older fireworks-hosted run is published (128 cases)",
    (
        "Llama3.1-70B-Instruct",
        "library",
    ): "only an older fireworks-hosted run is published, not the README's run",
}


def _readme_rows():
    for line in (SHARED / "README.md").read_text().splitlines():
        match = re.match(r"\| (.+?) \((FC|ReAct)\) \|(.*)\|$", line)
        if match:
            values = [v.strip() for v in match.group(3).split("|")]
            yield match.group(1), match.group(2).lower(), dict(zip(COLUMNS, values[:7], strict=True))


@pytest.fixture(scope="module")
def rows():
    # The README was computed with credit cards read as the task data stores them (a list), on the
    # first run of each task (as the published table counted).
    result = CliRunner().invoke(
        app,
        [
            "leaderboard",
            str(SHARED / "trajectories"),
            "--protocol",
            "sopbench",
            "--runs",
            "first",
            "--no-quirk",
            "credit_cards_as_shipped",
            "--format",
            "json",
            "--tasks-dir",
            str(SHARED / "tasks"),
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout[result.stdout.index("[") :])


def test_every_covered_readme_cell_is_reproduced_or_explained(rows):
    reproduced, explained = 0, 0
    for name, mode, published in _readme_rows():
        if name not in MODELS:
            continue  # no trajectories published for this model
        for domain, value in published.items():
            cells = [
                row["cells"][domain]
                for row in rows
                if row["model"] in MODELS[name]
                and row["mode"] == mode
                and row["tool_list"] == "full"
                and row["user"] is None
                and domain in row["cells"]
            ]
            if not cells:
                continue
            ours = [round(100 * c["passed"] / c["cases"], 2) for c in cells]
            if (name, domain) in NOT_REPRODUCIBLE:
                assert float(value) not in ours
                explained += 1
            else:
                assert float(value) in ours, (name, mode, domain, value, ours)
                reproduced += 1
    assert (reproduced, explained) == (31, 6)


def test_the_leaderboard_has_a_refuse_all_row_that_beats_most_models(rows):
    refuse_all = next(row for row in rows if row["model"] == "refuse-all")
    overall = refuse_all["cells"]["Overall"]
    assert (overall["passed"], overall["cases"]) == (582, 903)
    assert refuse_all["cells"]["university"]["passed"] == 36


def test_all_runs_give_the_mean_pass_rate_and_pass_hat_k_columns():
    folder = SHARED / "trajectories" / "university"
    name = "ast_gpt-4.1-mini-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json.gz"
    result = CliRunner().invoke(
        app,
        [
            "leaderboard",
            str(folder / name),
            "--protocol",
            "sopbench",
            "--pass-hat-k",
            "--format",
            "json",
            "--tasks-dir",
            str(SHARED / "tasks"),
        ],
    )
    assert result.exit_code == 0, result.output
    row = next(row for row in json.loads(result.stdout) if row["model"] == "gpt-4.1-mini")
    assert row["cells"]["Overall"]["cases"] == 132 and round(row["pass_rate"], 4) == 0.4697
    assert round(row["pass_hat_k"]["3"], 4) == 0.2727 and row["tasks_with_k"]["3"] == 44
    markdown = CliRunner().invoke(
        app,
        [
            "leaderboard",
            str(folder / name),
            "--protocol",
            "sopbench",
            "--pass-hat-k",
            "--tasks-dir",
            str(SHARED / "tasks"),
        ],
    )
    assert "| pass^2 | pass^3 |" in markdown.stdout.splitlines()[0]


def test_markdown_and_csv_formats(tmp_path):
    folder = SHARED / "trajectories" / "university"
    for fmt, marker in (("markdown", "| # | model | mode |"), ("csv", "model,mode,tool list,user")):
        result = CliRunner().invoke(
            app, ["leaderboard", str(folder), "--format", fmt, "--tasks-dir", str(SHARED / "tasks")]
        )
        assert result.exit_code == 0, result.output
        assert marker in result.stdout
        assert "refuse-all" in result.stdout


def test_the_table_splits_overall_by_expected_outcome_and_can_judge_refusals():
    folder = SHARED / "trajectories" / "university"
    base = ["leaderboard", str(folder), "--tasks-dir", str(SHARED / "tasks")]
    plain = CliRunner().invoke(app, base)
    assert plain.exit_code == 0, plain.output
    header = plain.stdout.splitlines()[0]
    assert header.endswith("| Overall | should succeed | should refuse | balanced |")
    refuse_all = next(line for line in plain.stdout.splitlines() if "| refuse-all (floor)" in line)
    assert refuse_all.endswith(
        "| 64.45 [61.3-67.5] (903) | 0.00 [0.0-1.2] (321) | 100.00 [99.3-100.0] (582) | 50.00 [49.7-50.6] |"
    )
    judged = CliRunner().invoke(app, [*base, "--require-justified-refusal", "--format", "json"])
    assert judged.exit_code == 0, judged.output
    rows = json.loads(judged.stdout)
    refuse_all_row = next(row for row in rows if row["model"] == "refuse-all")
    assert refuse_all_row["balanced"] == 0.5
    assert refuse_all_row["justified_refusal"]["passed"] == 96  # violations the request itself shows
    assert refuse_all_row["justified_refusal"]["total"] == 582
    assert all(row["justified_refusal"]["total"] == row["should_refuse"]["total"] for row in rows)
