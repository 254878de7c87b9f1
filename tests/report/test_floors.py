"""The refuse-all and no-verify floors: played on the source's own tasks from any working directory,
ranked where they score, and never shown on other tasks than the agents'."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.runner.baselines import TaskSetMissing, run_folder_tasks


def invoke(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def _university_subset(published_tasks_dir: Path, folder: Path, count: int = 8) -> Path:
    data = json.loads(gzip.decompress((published_tasks_dir / "university_tasks.json.gz").read_bytes()))
    kept, taken = {}, 0
    for goal, items in data.items():
        if taken >= count:
            break
        kept[goal] = items[: count - taken]
        taken += len(kept[goal])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "university_tasks.json"
    path.write_text(json.dumps(kept))
    return path


@pytest.fixture()
def played(tmp_path, published_tasks_dir, monkeypatch):
    """A reference run on 8 university tasks, and what ``run`` printed for its baselines."""
    tasks = _university_subset(published_tasks_dir, tmp_path / "tasks")
    folder = tmp_path / "runs" / "reference"
    result = invoke("run", "--agent", "reference", "--tasks", tasks.parent, "--output", folder, "--json")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)["baselines"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no ../shared here: nothing may be found by chance
    return folder, tasks, printed


def _floor(rows, name):
    return next(row for row in rows if row["model"] == name and row["floor"])


def test_leaderboard_and_report_show_the_baselines_run_printed(played, tmp_path):
    folder, _tasks, printed = played
    result = invoke("leaderboard", folder, "--format", "json", "--min-cases", 0)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    refuse_all = _floor(rows, "refuse-all")["cells"]["Overall"]
    assert (refuse_all["passed"], refuse_all["cases"]) == (
        printed["refuse-all"]["all"]["passed"],
        printed["refuse-all"]["all"]["runs"],
    )
    assert refuse_all["cases"] == 8
    # Ranked in place: the reference agent passes everything, the floor is below it, both ranked.
    assert [(row["model"], row["rank"] is not None) for row in rows] == [
        ("reference", True),
        ("refuse-all", True),
    ]
    report = invoke("report", folder, "-o", tmp_path / "r.html")
    assert report.exit_code == 0, report.output
    html = (tmp_path / "r.html").read_text()
    for name in ("refuse-all", "no-verify"):
        share = printed[name]["all"]["pass_rate"]
        assert f"{100 * share:.1f} [" in html and "(floor)" in html


def test_a_moved_task_file_is_named_and_no_figure_is_shown(played, tmp_path):
    folder, tasks, _printed = played
    tasks.rename(tasks.with_name("elsewhere.json"))
    result = invoke("leaderboard", folder, "--format", "json")
    assert result.exit_code == 1
    problem = [line for line in result.stderr.splitlines() if "not shown" in line]
    assert len(problem) == 1 and "moved or deleted" in problem[0] and str(tasks.parent) in problem[0]
    floor = _floor(json.loads(result.stdout), "refuse-all")
    assert floor["cells"] == {"Overall": {"passed": 0, "cases": 0, "rate": 0.0, "ci95": None}}
    assert "moved or deleted" in floor["unavailable"] and floor["rank"] is None
    table = invoke("leaderboard", folder)
    assert "no figure: its tasks were not found" in table.stdout
    out = tmp_path / "r.html"
    report = invoke("report", folder, "-o", out)
    assert report.exit_code == 1 and "moved or deleted" in report.stderr
    assert "no figure" in out.read_text()


def test_a_task_file_that_now_holds_other_tasks_is_refused_by_digest(played):
    folder, tasks, _printed = played
    data = json.loads(tasks.read_text())
    goal = next(iter(data))
    data[goal][0]["user_instruction"] = "something else entirely"
    tasks.write_text(json.dumps(data))
    with pytest.raises(TaskSetMissing, match="holds other tasks than those played"):
        run_folder_tasks(folder)
    result = invoke("leaderboard", folder)
    assert result.exit_code == 1 and "holds other tasks than those played" in result.stderr


def test_trajectory_files_get_the_floor_of_the_tasks_they_hold(
    published_trajectories_dir, monkeypatch, tmp_path
):
    monkeypatch.chdir(tmp_path)
    name = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json.gz"
    result = invoke("leaderboard", published_trajectories_dir / "university" / name, "--format", "json")
    assert result.exit_code == 0, result.output
    floor = _floor(json.loads(result.stdout), "refuse-all")
    assert (floor["cells"]["Overall"]["passed"], floor["cells"]["Overall"]["cases"]) == (36, 44)
    assert floor["coverage_differs"] is False  # the agents' domain only, not seven


def test_a_trajectory_file_of_unknown_tasks_is_named_in_one_line_and_nothing_is_shown_for_it(
    published_trajectories_dir, tmp_path, monkeypatch
):
    name = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json.gz"
    data = json.loads(gzip.decompress((published_trajectories_dir / "university" / name).read_bytes()))
    for record in data if isinstance(data, list) else data.values():
        (record.get("task") or record)["user_goal"] = "no_such_goal"
    folder = tmp_path / "university"
    folder.mkdir()
    (folder / name.removesuffix(".gz")).write_text(json.dumps(data))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "table.md"
    result = invoke("leaderboard", folder, "-o", out)
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if "no_such_goal" in line]
    assert lines and all(len(line) < 400 for line in lines)
    assert "gpt-4o" not in out.read_text()  # no row for runs that could not be scored


def test_a_report_run_in_process_gives_the_collector_back_as_it_was(played, tmp_path, monkeypatch):
    """The verb leaves the scored runs out of the cyclic collector while it lays the report out
    (gc.freeze); a caller in process (here the test) finds nothing frozen afterwards."""
    import gc

    import sopbench.report

    frozen_while_built = []
    build = sopbench.report.build_html_report

    def spy(*args, **kwargs):
        frozen_while_built.append(gc.get_freeze_count())
        return build(*args, **kwargs)

    monkeypatch.setattr(sopbench.report, "build_html_report", spy)
    folder, _tasks, _printed = played
    assert gc.get_freeze_count() == 0
    result = invoke("report", folder, "-o", tmp_path / "r.html")
    assert result.exit_code == 0, result.output
    assert frozen_while_built and frozen_while_built[0] > 0
    assert gc.get_freeze_count() == 0
