"""The viewer without a browser: sources, filters and pages, escaping, the server process."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

import orjson
import pytest
from starlette.testclient import TestClient

from sopbench.constraints import And, Single
from sopbench.runner import read_run
from sopbench.runner.store import STORE_NAME
from sopbench.scoring import SOPBENCH, SOUND, score_paths, summarize
from sopbench.statistics import breakdown
from sopbench.view import (
    EpisodeIndex,
    Filters,
    constraint_graph_svg,
    episode_view,
    first_failing_step,
    load_sources,
    source_files,
)
from sopbench.view.server import create_app

sys.path.insert(0, str(Path(__file__).parent))
from viewer_helpers import IMAGE, SCRIPT, start_viewer  # noqa: E402


@pytest.fixture(scope="module")
def loaded(viewer_sources):
    return load_sources(source_files(viewer_sources.all), SOUND)


@pytest.fixture(scope="module")
def index(loaded):
    return EpisodeIndex(loaded.episodes)


@pytest.fixture(scope="module")
def client(index):
    return TestClient(create_app(index, "sound"))


def test_sources_mix_run_folders_and_trajectory_files(viewer_sources, loaded):
    stored = [read_run(folder) for folder in (viewer_sources.reference, viewer_sources.no_verify)]
    runs = sum(len(s.episodes) for s in stored)
    assert loaded.problems == []
    assert len(loaded.episodes) == runs + 3  # and the three injected records
    configurations = {e.configuration for e in loaded.episodes}
    assert {"reference · tools full", "no-verify · tools full"} <= configurations
    assert any(c.startswith("injected-model") for c in configurations)


def test_stored_verdicts_equal_the_rescored_ones(viewer_sources, loaded):
    """A run folder's stored sound verdict is what the viewer shows under the sound protocol."""
    with sqlite3.connect(viewer_sources.no_verify / STORE_NAME) as db:
        stored = [
            bool(p) for (p,) in db.execute("SELECT passed FROM episodes ORDER BY domain, task_index, run")
        ]
    shown = [e.passed for e in loaded.episodes if e.source == str(viewer_sources.no_verify)]
    assert shown == stored and not all(stored)


def test_reading_a_run_folder_changes_nothing(viewer_sources):
    folder = viewer_sources.reference

    def contents() -> dict[str, bytes]:
        # The -shm file is SQLite's shared-memory index, which every reader of a WAL store maps.
        return {p.name: p.read_bytes() for p in folder.iterdir() if not p.name.endswith("-shm")}

    before = contents()
    read_run(folder)
    assert contents() == before


def test_filters_and_counts_equal_a_plain_scan(index):
    episodes = index.episodes
    for facet, value, keep in [
        ("outcome", "failed", lambda e: not e.passed),
        ("judgement", "procedure", lambda e: "procedure" in e.failing),
        ("configuration", "no-verify · tools full", lambda e: e.configuration == "no-verify · tools full"),
    ]:
        page = index.page(Filters({facet: value}), size=5)
        expected = [e for e in episodes if keep(e)]
        assert page.total == len(expected) > 0
        assert page.episodes == expected[:5]
        assert index.counts(facet, Filters({}))[value] == len(expected)
    both = index.page(Filters({"outcome": "failed", "configuration": "reference · tools full"}))
    assert both.total == 0
    assert index.page(Filters({"domain": "no such domain"})).total == 0


def test_the_kind_filter_is_the_kind_of_the_failing_constraint(index):
    # Not the kinds the goal's SOP is made of: the kind of what failed the procedure, as the
    # report's constraint breakdown counts it, so that a link from the report lands on those runs.
    outcomes = [e.score.outcome() for e in index.episodes]
    by_kind = breakdown(outcomes, "constraint")["by_kind"]
    assert by_kind
    for kind in by_kind:
        expected = [
            e for e, o in zip(index.episodes, outcomes, strict=True) if kind in {f.kind for f in o.findings}
        ]
        assert index.page(Filters({"kind": kind}), size=10_000).episodes == expected != []
    assert all(not e.kinds for e in index.episodes if "procedure" not in e.failing)


def test_paging_walks_every_match_once(index):
    filters = Filters({"outcome": "failed"})
    seen, number = [], 1
    while True:
        page = index.page(filters, number, size=7)
        seen.extend(e.id for e in page.episodes)
        if number >= page.pages:
            break
        number += 1
    assert seen == [e.id for e in index.episodes if not e.passed]
    assert index.page(filters, 10_000, size=7).number == page.pages  # past the end: the last page


def test_the_list_shows_the_library_numbers(viewer_sources):
    """The list's counts equal sopbench.scoring's summary of the same trajectory files."""
    overall = summarize(score_paths(viewer_sources.injected, SOPBENCH)).overall
    loaded = load_sources(source_files([viewer_sources.injected]), SOPBENCH)
    app = TestClient(create_app(EpisodeIndex(loaded.episodes), "sopbench"))
    data = app.get("/api/episodes").json()
    assert (data["total"], data["passed"]) == (overall.runs, overall.passed)
    page = app.get("/").text
    assert f'<span id="total">{overall.runs}</span>' in page
    assert f'<span id="passed">{overall.passed}</span>' in page
    assert f"{100 * overall.pass_rate:.1f}%" in page


def test_the_episode_page_names_the_first_failing_step(index, client):
    failed = next(e for e in index.episodes if e.configuration.startswith("no-verify") and not e.passed)
    view = episode_view(failed)
    assert view.failing_step is not None and view.messages[view.failing_step].failing
    assert view.failing_explanations and f"at step {view.failing_step}" in view.failing_explanations[0]
    assert {c.state for c in view.constraints} & {"unverified", "false"}
    page = client.get(f"/episode/{failed.id}")
    assert page.status_code == 200
    assert 'id="first-failure"' in page.text and 'class="sop-graph"' in page.text
    assert client.get("/episode/999999").status_code == 404


def test_a_passing_episode_shows_verified_constraints(index):
    passed = next(
        e for e in index.episodes if e.configuration.startswith("reference") and e.score.should_succeed
    )
    view = episode_view(passed)
    assert view.failing_step is None and view.goal_step is not None
    assert {c.state for c in view.constraints} == {"verified"}


def test_markup_in_messages_is_text(index, client):
    injected = next(e for e in index.episodes if e.configuration.startswith("injected-model"))
    page = client.get(f"/episode/{injected.id}")
    assert SCRIPT not in page.text and IMAGE not in page.text
    assert "&lt;script&gt;window.__injected = 1;" in page.text
    assert "javascript:alert(3)" in page.text  # as text: never inside an href
    assert 'href="javascript' not in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]


def test_the_graph_escapes_every_text():
    expr = And([Single.of("logged_in_user", {"username": "username"}), Single.of("not frozen<b>")])
    svg = str(constraint_graph_svg("<script>alert(1)</script>", expr, []))
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "frozen&lt;b&gt;" in svg
    assert svg.count('class="node') == 4  # the goal, ALL of, two constraints


def test_first_failing_step_is_the_earliest_named():
    step, texts = first_failing_step(["x at step 7: late", "y at step 3: early", "never executed"])
    assert (step, texts) == (3, ["y at step 3: early"])
    assert first_failing_step(["the goal was never executed"]) == (None, [])


def test_view_stops_on_ctrl_c_with_exit_130(viewer_sources):
    process, url = start_viewer([viewer_sources.reference])
    try:
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "api/episodes", timeout=10) as answer:
            assert orjson.loads(answer.read())["total"] > 0
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 130
        assert "interrupted: the viewer served" in process.stderr.read()
    finally:
        process.kill()


def test_view_warns_when_listening_beyond_this_machine(viewer_sources):
    process, url = start_viewer([viewer_sources.reference], "--host", "0.0.0.0")
    try:
        assert url.startswith("http://0.0.0.0:")
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
    assert "warning: --host 0.0.0.0" in process.stderr.read()


@pytest.mark.parametrize("make_source", ["missing", "empty"])
def test_view_refuses_a_source_it_cannot_read(tmp_path, make_source):
    source = tmp_path / "source"
    if make_source == "empty":
        source.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "sopbench.cli", "view", str(source), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 2
    assert str(source) in result.stderr and result.stdout == ""


def test_the_viewer_package_keeps_its_templates_beside_it():
    from sopbench.view import STATIC_DIR, template_environment

    assert (Path(STATIC_DIR) / "viewer.js").is_file()
    assert template_environment().autoescape is True


def test_unreadable_files_are_named_at_start_up(viewer_sources, tmp_path):
    broken = tmp_path / "bank" / "ast_broken-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"
    broken.parent.mkdir()
    broken.write_text("[{not json")
    process, url = start_viewer([viewer_sources.injected, tmp_path])
    try:
        with urllib.request.urlopen(url + "api/episodes", timeout=10) as answer:
            assert orjson.loads(answer.read())["total"] == 3
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
    errors = process.stderr.read()
    assert "skipped: " in errors and broken.name in errors and "1 problem(s)" in errors


def test_the_episode_page_shows_what_the_agent_was_shown_as_text(viewer_sources, tmp_path):
    """A run folder keeps the system prompt and the tool schemas its model got; the episode page
    shows both (collapsed), every character as text."""
    from sopbench.agents import Reference, Shown, agent_names, register_agent
    from sopbench.runner import RunSpec, run

    if "test-shown" not in agent_names():

        @register_agent("test-shown")
        class ShownAgent(Reference):
            name = "test-shown"

            async def start(self, setup):
                await super().start(setup)
                self._tools = tuple(setup.tools)

            def shown(self):
                return Shown(f"You serve the bank's customers. {SCRIPT}", self._tools)

    folder = tmp_path / "shown"
    run(
        RunSpec(
            agent="test-shown", domains=("bank",), tasks=viewer_sources.tasks, output=folder, baselines=False
        )
    )
    stored = read_run(folder)
    assert all(e.system_prompt and e.system_prompt.endswith(SCRIPT) and e.tools for e in stored.episodes)
    loaded = load_sources(source_files([folder, viewer_sources.injected]), SOUND)
    client = TestClient(create_app(EpisodeIndex(loaded.episodes), "sound"))
    episode = next(e for e in loaded.episodes if e.source == str(folder))
    page = client.get(f"/episode/{episode.id}").text
    assert 'id="system-prompt"' in page and 'id="tool-schemas"' in page
    assert SCRIPT not in page and "You serve the bank&#39;s customers. &lt;script&gt;" in page
    assert (
        f"({len(stored.episodes[0].tools)} tools)" in page
        and "&#34;name&#34;: &#34;exit_conversation&#34;" in page
    )
    # a published file keeps the prompt in its record (the injected one carries markup): text too
    published = next(e for e in loaded.episodes if e.configuration.startswith("injected-model"))
    page = client.get(f"/episode/{published.id}").text
    assert 'id="system-prompt"' in page and "Follow the bank&#39;s rules &lt;script&gt;" in page
    assert 'id="tool-schemas"' not in page and SCRIPT not in page
