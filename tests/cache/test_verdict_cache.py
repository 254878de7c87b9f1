"""``sopbench.cache``: the verdict cache of the verbs that read results. A second reading gives the
same figures without scoring again; only a changed file is scored again; a damaged entry is scored
again, never trusted; two processes may fill it at once; ``--no-cache`` leaves it alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sopbench.cache import VerdictCache
from sopbench.report import EvaluationReport, build_html_report
from sopbench.results import ScoringOptions, Sources, evaluate, leaderboard, report_leaderboard
from sopbench.tasks import task_from_json

GPT_4O = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"
GPT_4O_MINI = "ast_gpt-4o-mini-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"


@pytest.fixture
def trajectories(tmp_path, make_record) -> Path:
    """Two bank files (two configurations, other bytes) of two records each, one run per record."""
    folder = tmp_path / "trajectories" / "bank"
    folder.mkdir(parents=True)
    for number, name in enumerate((GPT_4O, GPT_4O_MINI)):
        records = [make_record(), make_record()]
        records[0]["interactions"][0]["interaction"][0]["content"] += " " * number
        (folder / name).write_text(json.dumps(records))
    return folder.parent


def evaluated(sources: Sources, cache: VerdictCache | None) -> tuple[list, dict]:
    """What ``sopbench evaluate`` writes (each line) and prints (``--json``) of ``sources``."""
    lines: list = []
    result = evaluate(sources, ScoringOptions(cache=cache), lambda score: lines.append(score.to_json()))
    return lines, json.loads(json.dumps(EvaluationReport(result).as_dict()))


def sopbench(*args: str, cache: Path, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SOPBENCH_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "sopbench.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_a_second_reading_scores_nothing_and_gives_the_same_figures(trajectories, tmp_path):
    sources = Sources.of([trajectories])
    uncached = evaluated(sources, None)
    cold = VerdictCache(tmp_path / "cache")
    assert evaluated(sources, cold) == uncached
    assert cold.stats.misses == 2 + 2 and cold.stats.hits == 0  # two files, two floors
    warm = VerdictCache(tmp_path / "cache")
    assert evaluated(sources, warm) == uncached
    assert warm.stats.misses == 0 and warm.stats.hits == 2 + 2
    assert warm.info().entries == {"verdicts": 2, "floors": 2, "figures": 0, "comparisons": 0}


def test_the_leaderboard_is_the_same_from_the_cache(trajectories, tmp_path):
    sources = Sources.of([trajectories])

    def board(cache):
        made = leaderboard(sources, ScoringOptions(min_cases=0, cache=cache), no_verify=True, by=("goal",))
        return [(row.as_dict(), made.row_breakdowns(row)) for row in made.rows]

    assert board(VerdictCache(tmp_path / "cache")) == board(None)
    warm = VerdictCache(tmp_path / "cache")
    assert board(warm) == board(None) and warm.stats.misses == 0


def test_the_report_is_the_same_and_its_figures_are_drawn_once(trajectories, tmp_path):
    sources = Sources.of([trajectories])

    def page(cache):
        options = ScoringOptions(min_cases=0, cache=cache)
        return build_html_report(report_leaderboard(sources, options), sources, cache=cache).html

    uncached = page(None)
    cold = VerdictCache(tmp_path / "cache")
    assert page(cold) == uncached and cold.info().entries["figures"] >= 3
    warm = VerdictCache(tmp_path / "cache")
    assert page(warm) == uncached and warm.stats.misses == 0


def test_floors_on_named_task_files_are_played_once(trajectories, tmp_path, make_task):
    sources = Sources.of([trajectories])
    named = (task_from_json(make_task(), domain="bank", goal="get_account_balance"),) * 2

    def board(cache):
        made = leaderboard(
            sources, ScoringOptions(min_cases=0, cache=cache, floor_tasks=named), no_verify=True
        )
        return [row.as_dict() for row in made.rows]

    uncached = board(None)
    assert any(row["model"] == "no-verify" for row in uncached)
    cold = VerdictCache(tmp_path / "cache")
    assert board(cold) == uncached and cold.stats.misses == 2 + 2  # two files, two floors
    warm = VerdictCache(tmp_path / "cache")
    assert board(warm) == uncached and (warm.stats.misses, warm.stats.hits) == (0, 2 + 2)
    other = (named[0],)  # another task set: its floors are played, the files' verdicts read back
    again = VerdictCache(tmp_path / "cache")
    leaderboard(sources, ScoringOptions(min_cases=0, cache=again, floor_tasks=other), no_verify=True)
    assert (again.stats.misses, again.stats.hits) == (2, 2)


def test_protocols_compared_are_read_back_and_only_a_changed_file_is_compared_again(
    trajectories, tmp_path, make_record
):
    # leaderboard --compare scores each file's runs under both protocols and every quirk toggled
    # alone: 30 verdicts a run, a minute over the published trajectories, each time it was asked.
    bad = make_record()
    del bad["task"]  # a record that cannot be read: a problem, kept in its place among the runs
    (trajectories / "bank" / GPT_4O_MINI).write_text(json.dumps([make_record(), bad, make_record()]))
    sources = Sources.of([trajectories])

    def compared(cache: VerdictCache | None) -> dict:
        made = leaderboard(sources, ScoringOptions(min_cases=0, cache=cache), compare=True)
        assert made.comparison is not None
        return made.comparison.as_dict()

    uncached = compared(None)
    assert uncached["runs"] == 4 and len(uncached["errors"]) == 1
    cold = VerdictCache(tmp_path / "cache")
    assert compared(cold) == uncached
    assert (
        cold.info().entries["comparisons"] == 2 and cold.stats.misses == 2 + 1 + 2
    )  # files, floor, comparisons
    warm = VerdictCache(tmp_path / "cache")
    assert compared(warm) == uncached and warm.stats.misses == 0 and warm.stats.hits == 5
    changed = trajectories / "bank" / GPT_4O
    records = json.loads(changed.read_text())
    records[1]["interactions"][0]["interaction"][0]["content"] = "Hello, my balance please?"
    changed.write_text(json.dumps(records))
    again = VerdictCache(tmp_path / "cache")
    assert compared(again) == compared(None)
    assert again.stats.misses == 2  # the changed file's verdicts and its comparison
    moved = tmp_path / "moved"
    trajectories.rename(moved)
    sources = Sources.of([moved])
    elsewhere = VerdictCache(tmp_path / "cache")
    # read back where it is now; the file with a problem is read again (its problem names it)
    assert compared(elsewhere) == compared(None) and (elsewhere.stats.hits, elsewhere.stats.misses) == (3, 2)


def test_a_changed_file_alone_is_scored_again(trajectories, tmp_path):
    sources = Sources.of([trajectories])
    evaluated(sources, VerdictCache(tmp_path / "cache"))
    changed = trajectories / "bank" / GPT_4O
    records = json.loads(changed.read_text())
    records[1]["interactions"][0]["interaction"][0]["content"] = "Hello, my balance please?"
    changed.write_text(json.dumps(records))
    again = VerdictCache(tmp_path / "cache")
    assert evaluated(sources, again) == evaluated(sources, None)
    # the changed file's verdicts only: the other file's and the floors (same tasks) are read back
    assert again.stats.misses == 1 and again.stats.hits == 1 + 2
    assert again.info().entries["verdicts"] == 3  # the old version's entry stays until cleared


def test_a_damaged_entry_is_scored_again_and_rewritten(trajectories, tmp_path):
    sources = Sources.of([trajectories])
    evaluated(sources, VerdictCache(tmp_path / "cache"))
    entries = sorted((tmp_path / "cache" / "verdicts").rglob("*.json"))
    data = entries[0].read_bytes()
    entries[0].write_bytes(data[:-1] + (b"0" if data[-1:] != b"0" else b"1"))  # one byte changed
    entries[1].write_bytes(data[: len(data) // 2])  # torn
    damaged = VerdictCache(tmp_path / "cache")
    assert evaluated(sources, damaged) == evaluated(sources, None)
    assert damaged.stats.damaged == 2 and damaged.stats.misses == 2 and damaged.stats.stored == 2
    rebuilt = VerdictCache(tmp_path / "cache")
    evaluated(sources, rebuilt)
    assert rebuilt.stats.misses == 0 and rebuilt.stats.damaged == 0


def test_a_file_that_changes_while_it_is_read_is_not_kept(trajectories, tmp_path):
    changing = trajectories / "bank" / GPT_4O

    def cards(path: Path) -> str | None:  # asked between reading the file and scoring it
        if path == changing:
            with changing.open("a") as out:
                out.write("\n")
        return None

    cache = VerdictCache(tmp_path / "cache")
    evaluate(Sources.of([trajectories]), ScoringOptions(cache=cache, credit_cards=cards))
    assert cache.stats.unstable == 1 and cache.info().entries["verdicts"] == 1


def test_a_copy_of_a_file_elsewhere_is_read_back_under_its_own_name(trajectories, tmp_path, make_record):
    sources = Sources.of([trajectories])
    evaluated(sources, VerdictCache(tmp_path / "cache"))
    elsewhere = tmp_path / "copy" / "bank"
    elsewhere.mkdir(parents=True)
    for name in (GPT_4O, GPT_4O_MINI):
        (elsewhere / name).write_bytes((trajectories / "bank" / name).read_bytes())
    copied = Sources.of([elsewhere.parent])
    warm = VerdictCache(tmp_path / "cache")
    lines, summary = evaluated(copied, warm)
    assert warm.stats.misses == 0 and (lines, summary) == evaluated(copied, None)
    assert {line["source"] for line in lines} == {str(elsewhere / GPT_4O), str(elsewhere / GPT_4O_MINI)}


def test_no_cache_leaves_it_alone_and_the_output_is_the_same(trajectories, tmp_path):
    cache = tmp_path / "cache"
    outputs = {}
    for label, extra in (("none", ["--no-cache"]), ("cold", []), ("warm", [])):
        out = tmp_path / f"{label}.jsonl"
        done = sopbench("evaluate", str(trajectories), "-o", str(out), "--json", *extra, cache=cache)
        assert done.returncode == 0, done.stderr
        outputs[label] = (out.read_bytes(), done.stdout)
        if label == "none":
            assert not cache.exists()
    assert outputs["none"] == outputs["cold"] == outputs["warm"]


def test_two_processes_fill_the_cache_at_once(trajectories, tmp_path):
    cache = tmp_path / "cache"
    env = {**os.environ, "SOPBENCH_CACHE_DIR": str(cache)}
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sopbench.cli",
                "evaluate",
                str(trajectories),
                "-o",
                str(tmp_path / f"{i}.jsonl"),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for child in children:
        _out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
    assert (tmp_path / "0.jsonl").read_bytes() == (tmp_path / "1.jsonl").read_bytes()
    assert not list(cache.rglob("*.part"))  # no temporary file left behind
    after = VerdictCache(cache)
    evaluated(Sources.of([trajectories]), after)
    assert after.stats.misses == 0 and after.stats.damaged == 0


def test_cache_info_and_clear(trajectories, tmp_path):
    cache = tmp_path / "cache"
    done = sopbench("cache", "info", "--json", cache=cache)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["location"] == str(cache) and json.loads(done.stdout)["entries"] == 0
    assert sopbench("leaderboard", str(trajectories), "--min-cases", "0", cache=cache).returncode == 0
    found = json.loads(sopbench("cache", "info", "--json", cache=cache).stdout)
    assert found["kinds"]["verdicts"]["entries"] == 2 and found["kinds"]["floors"]["entries"] == 1
    assert found["bytes"] > 0
    shown = sopbench("cache", "info", cache=cache)
    assert shown.returncode == 0 and str(cache) in shown.stdout and "3 entries" in shown.stdout
    cleared = sopbench("cache", "clear", cache=cache)
    assert cleared.returncode == 0 and "removed 3 entries" in cleared.stdout
    assert json.loads(sopbench("cache", "info", "--json", cache=cache).stdout)["entries"] == 0


def test_the_problems_of_a_moved_file_name_it_where_it_is_now(trajectories, tmp_path, make_record):
    bad = make_record()
    del bad["task"]  # a record that cannot be loaded: a problem named by the file
    (trajectories / "bank" / GPT_4O).write_text(json.dumps([make_record(), bad]))

    def problems(folder: Path, cache: VerdictCache | None) -> list[str]:
        heard: list[str] = []
        evaluate(Sources.of([folder]), ScoringOptions(cache=cache), on_problem=heard.append)
        return heard

    first = problems(trajectories, VerdictCache(tmp_path / "cache"))
    assert first and all(str(trajectories) in line for line in first)
    moved = tmp_path / "moved"
    (trajectories.parent / "trajectories").rename(moved)
    again = VerdictCache(tmp_path / "cache")
    assert problems(moved, again) == problems(moved, None)
    assert not any(str(trajectories) in line for line in problems(moved, again))
