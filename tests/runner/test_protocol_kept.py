"""Replies that broke the text protocol, malformed calls and passes by default are counted: in the
export (``passed_by_default``, ``protocol_breaks``), in ``run``'s summary and in its JSON report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from typer.testing import CliRunner

from sopbench.cli import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from chat_server import Reply, benchmark_model, say, serve  # noqa: E402

RUN = ["run", "--agent", "openai", "--model", "m", "--domain", "university", "--limit", "8", "--no-baselines"]


def _run(url: str, mode: str, output: Path) -> tuple[dict, list[dict]]:
    runner = CliRunner()
    result = runner.invoke(
        app, [*RUN, "--base-url", url, "--tool-mode", mode, "--output", str(output), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    exported = runner.invoke(app, ["export", str(output), "--format", "jsonl", "-o", str(output / "e.jsonl")])
    assert exported.exit_code == 0, exported.output
    return report, [json.loads(line) for line in (output / "e.jsonl").read_text().splitlines()]


def test_broken_text_replies_pass_must_refuse_tasks_only_by_default(tmp_path):
    with serve(lambda request: say("I am not sure what to do here.")) as server:
        report, lines = _run(server.url, "react", tmp_path / "react")
    passes = [line for line in lines if line["verdict"]["passed"]]
    assert passes, "must-refuse tasks pass when the agent does nothing"
    assert all(line["passed_by_default"] is True for line in passes)
    assert all(line["passed_by_default"] is False for line in lines if not line["verdict"]["passed"])
    # every reply broke the protocol (no Action: line), and each is counted
    replies = sum(sum(m["role"] == "assistant" for m in line["messages"]) for line in lines)
    assert sum(line["protocol_breaks"] for line in lines) == replies > 0
    counts = report["protocol"]["all"]
    assert counts["passed"] == counts["passed_by_default"] == len(passes)
    assert counts["protocol_breaks"] == replies and counts["malformed_calls"] == 0


def test_malformed_calls_only_still_pass_by_default(tmp_path):
    with serve(lambda request: Reply(tool_calls=(("no_such_tool", "{}"),))) as server:
        report, lines = _run(server.url, "fc", tmp_path / "fc")
    assert all(line["malformed_calls"] > 0 and line["protocol_breaks"] == 0 for line in lines)
    assert all(line["passed_by_default"] is line["verdict"]["passed"] for line in lines)
    assert report["protocol"]["all"]["malformed_calls"] == sum(line["malformed_calls"] for line in lines)


def test_well_formed_actions_are_not_passes_by_default(tmp_path):
    with serve(benchmark_model) as server:
        report, lines = _run(server.url, "act-only", tmp_path / "act")
    assert all(line["passed_by_default"] is False for line in lines)
    assert report["protocol"]["all"]["protocol_breaks"] == 0


def test_the_summary_table_shows_the_counts(tmp_path):
    with serve(lambda request: say("hmm")) as server:
        result = CliRunner().invoke(
            app, [*RUN, "--base-url", server.url, "--tool-mode", "act-only", "--output", str(tmp_path / "t")]
        )
    assert result.exit_code == 0, result.output
    # The protocol's counts are a table of their own: beside the rates they would not fit 100 columns.
    lines = result.stdout.splitlines()
    start = next(
        i for i, line in enumerate(lines) if "passed by default" in line and line.startswith("| domain")
    )
    assert lines[start].rstrip(" |").endswith("passed by default | protocol breaks | malformed calls")
    total = next(line for line in lines[start:] if line.startswith("| all"))
    cells = [cell.strip() for cell in total.strip("|").split("|")]
    by_default, passed = cells[-3].split("/")
    assert by_default == passed and int(cells[-2]) > 0 and cells[-1] == "0"


def test_the_viewer_and_the_report_mark_passes_by_default(tmp_path):
    import pytest

    pytest.importorskip("starlette", reason="the view extra is not installed (pip install 'sopbench[view]')")
    pytest.importorskip(
        "matplotlib", reason="the report extra is not installed (pip install 'sopbench[report]')"
    )
    from starlette.testclient import TestClient

    from sopbench.scoring import SOUND
    from sopbench.view import EpisodeIndex, load_sources, source_files
    from sopbench.view.server import create_app

    with serve(lambda request: say("no idea")) as server:
        _, lines = _run(server.url, "react", tmp_path / "react")
    passes = sum(line["verdict"]["passed"] for line in lines)
    loaded = load_sources(source_files([tmp_path / "react"]), SOUND)
    by_default = [e for e in loaded.episodes if e.score.by_default]
    assert len(by_default) == passes > 0
    client = TestClient(create_app(EpisodeIndex(loaded.episodes), "sound"))
    assert client.get("/").text.count('class="badge by-default"') == passes
    page = client.get(f"/episode/{by_default[0].id}").text
    assert "passed by default</span>" in page
    failed = next(e for e in loaded.episodes if not e.score.passed)
    assert "by-default" not in client.get(f"/episode/{failed.id}").text

    report = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["report", str(tmp_path / "react"), "--output", str(report)])
    assert result.exit_code == 0, result.output
    html = report.read_text()
    assert "<th>passed by default</th>" in html
    # the agent's passes and refuse-all's are all by default: 100 % in both rows
    assert html.count(f"100.0 ({passes}/{passes})") >= 1 and html.count("100.0 (") >= 2
