"""``sopbench.results.evaluate``: every score handed on as it is made, a summary per configuration,
the same figures as ``sopbench evaluate --json``."""

from __future__ import annotations

import json

from sopbench.report import EvaluationReport
from sopbench.results import ScoringOptions, Sources, evaluate

FILE_NAME = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"


def test_evaluate_writes_each_score_and_names_records_without_runs(trajectories):
    written, done = [], []
    result = evaluate(Sources.of([trajectories]), ScoringOptions(), written.append, progress=done.append)
    assert [score.record for score in written] == [0, 2] and done == [f"bank/{FILE_NAME}"]
    assert result.records_without_runs == [(f"bank/{FILE_NAME}", 1)] and result.runs_scored == 2
    report = EvaluationReport(result)  # as the verb shows it
    assert report.as_dict()["records_without_trajectory"] == [{"file": f"bank/{FILE_NAME}", "record": 1}]
    assert report.notes()[-1] == f"1 records have no trajectory (not scored): bank/{FILE_NAME}: 1 (records 1)"


def test_first_runs_only_and_no_writer(trajectories):
    result = evaluate(Sources.of([trajectories]), ScoringOptions(runs="first"))
    assert result.runs_scored == 2 and [c.summary.overall.runs for c in result.configurations] == [2]


def test_evaluate_over_run_folders_gives_the_verbs_figures(run_folders, cli, tmp_path):
    result = evaluate(Sources.of([run_folders]), ScoringOptions())
    done = cli("evaluate", str(run_folders), "--json", "--output", str(tmp_path / "verdicts.jsonl"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(json.dumps(EvaluationReport(result).as_dict()))
    assert result.from_run_folders == 12 and len(result.configurations) == 2
    assert result.floors is not None and set(result.floors.scores) == {"refuse-all", "no-verify"}
