"""The viewer's addresses, navigation and sources (issue 37): stable episode addresses, the task
filter and the search, previous/next, infra_error episodes, Inspect logs, live sources and the
side-by-side page. Without a browser (tests/view/test_browser.py drives the same in chromium)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from markupsafe import escape
from starlette.testclient import TestClient

from sopbench.inspect_eval import inspect_log_scores
from sopbench.runner import RunSpec, run
from sopbench.runner.store import LOCK_NAME, RunLock, run_in_progress
from sopbench.scoring import SOUND
from sopbench.view import (
    EpisodeIndex,
    Filters,
    LiveSources,
    compare_address,
    divergence,
    episode_address,
    episode_view,
    load_sources,
    source_digest,
    source_files,
)
from sopbench.view.server import create_app


def _by_address(sources: list[Path]) -> dict[str, tuple[str, str, int, bool]]:
    loaded = load_sources(source_files(sources), SOUND)
    assert loaded.problems == []
    return {e.address: (e.source, e.task_id, e.number, e.passed) for e in loaded.episodes}


def test_an_episode_has_the_same_address_whatever_the_order_of_the_sources(viewer_sources):
    forward = load_sources(source_files(viewer_sources.all), SOUND).episodes
    backward = load_sources(source_files(viewer_sources.all[::-1]), SOUND).episodes
    assert len({e.address for e in forward}) == len(forward)  # one address per episode
    assert _by_address(viewer_sources.all) == _by_address(viewer_sources.all[::-1])
    moved = {e.address: e.id for e in forward}
    assert any(moved[e.address] != e.id for e in backward)  # the positional numbers did change
    first = forward[0]
    assert first.address == episode_address(
        source_digest(first.source), first.domain, first.task_id, first.number
    )
    assert first.address.startswith(f"/episode/{source_digest(first.source)}/bank/")


def test_a_copied_source_keeps_its_addresses(viewer_sources, tmp_path):
    for source in (viewer_sources.injected, viewer_sources.reference):
        copy = tmp_path / source.name
        shutil.copytree(source, copy)
        assert set(_by_address([copy])) == set(_by_address([source]))


def test_the_old_positional_address_redirects(viewer_sources):
    index = EpisodeIndex(load_sources(source_files(viewer_sources.all), SOUND).episodes)
    client = TestClient(create_app(index, "sound"))
    episode = index.episodes[5]
    answer = client.get("/episode/5?outcome=failed", follow_redirects=False)
    assert answer.status_code == 307 and answer.headers["location"] == f"{episode.address}?outcome=failed"
    assert client.get("/api/episode/5").json()["address"] == episode.address
    assert client.get(episode.address).status_code == 200
    assert client.get(episode.address.rsplit("/", 1)[0] + "/99").status_code == 404


@pytest.fixture(scope="module")
def index(viewer_sources, crashed_run):
    return EpisodeIndex(load_sources(source_files([*viewer_sources.all, crashed_run]), SOUND).episodes)


@pytest.fixture(scope="module")
def client(index):
    return TestClient(create_app(index, "sound"))


def test_task_ids_are_on_the_list_the_page_and_the_api(index, client):
    episode = next(e for e in index.episodes if e.configuration.startswith("no-verify") and not e.passed)
    data = client.get("/api/episodes", params={"task": episode.task_id}).json()
    assert data["filters"] == {"task": episode.task_id}
    assert {e["task_id"] for e in data["episodes"]} == {episode.task_id}
    assert data["total"] == sum(1 for e in index.episodes if e.task_id == episode.task_id) >= 2
    listed = client.get("/", params={"task": episode.task_id}).text
    assert f">{episode.task_id}</a>" in listed and f'href="{episode.address}?task=' in listed
    page = client.get(episode.address).text
    assert f'<span id="task-id">{episode.task_id}</span>' in page


def test_the_search_looks_at_task_goal_model_and_explanation(index):
    def found(query: str) -> list[int]:
        return [e.id for e in index.page(Filters({"q": query}), size=10_000).episodes]

    failed = next(e for e in index.episodes if not e.passed and e.judged)
    words = failed.score.explanations[0].split()[:4]
    assert failed.id in found(" ".join(words).upper())  # every word, any case
    assert found("no-verify") == [e.id for e in index.episodes if "no-verify" in e.configuration]
    assert found(failed.task_id) == [e.id for e in index.episodes if failed.task_id in e.task_id]
    assert found("transfer_funds zzz-not-there") == []
    both = index.page(Filters({"q": "no-verify", "outcome": "passed"}), size=10_000).episodes
    assert all(e.passed and "no-verify" in e.configuration for e in both)


def test_previous_and_next_walk_the_filtered_list(index, client):
    filters = Filters({"outcome": "failed"})
    listed = index.page(filters, size=10_000).episodes
    assert len(listed) >= 3
    for before, here, after in zip(listed, listed[1:], listed[2:], strict=False):
        previous, following, position, total = index.neighbours(here, filters)
        assert (previous, following, total) == (before, after, len(listed))
        assert listed[position - 1] is here
    first, last = index.neighbours(listed[0], filters), index.neighbours(listed[-1], filters)
    assert first[0] is None and last[1] is None
    page = client.get(f"{listed[1].address}?outcome=failed").text
    assert f'id="previous" rel="prev" href="{listed[0].address}?outcome=failed"' in page
    assert f'id="next" rel="next" href="{listed[2].address}?outcome=failed"' in page


def test_every_filter_is_a_query_parameter_kept_by_the_list_links(client, index):
    query = {"q": "transfer", "outcome": "failed", "domain": "bank"}
    page = client.get("/", params=query).text
    assert 'name="q" value="transfer"' in page and 'value="failed" selected' in page
    shown = index.page(Filters(query)).episodes
    # in one order whatever the order asked (a shared link is one link)
    assert shown and f'href="{shown[0].address}?domain=bank&amp;outcome=failed&amp;q=transfer"' in page


def test_the_list_shows_the_whole_first_explanation(index, client):
    long = max(
        (e for e in index.episodes if e.score.explanations), key=lambda e: len(e.score.explanations[0])
    )
    assert len(long.score.explanations[0]) > 140  # what the list used to cut
    page = client.get("/", params={"task": long.task_id, "configuration": long.configuration}).text
    assert f'<td class="why">{escape(long.score.explanations[0])}</td>' in page


def test_infra_error_episodes_are_listed_filterable_and_shown(index, client, crashed_run):
    crashed = [e for e in index.episodes if e.source == str(crashed_run)]
    assert crashed and all(e.outcome == "infra_error" for e in crashed)
    data = client.get("/api/episodes", params={"outcome": "infra_error"}).json()
    assert data["total"] == data["infra_errors"] == len(crashed)
    judged = client.get("/api/episodes").json()
    assert judged["total"] == len(index.episodes)  # listed with the rest, never counted as failed
    assert (
        client.get("/api/episodes", params={"outcome": "failed", "task": crashed[0].task_id}).json()["total"]
        < (client.get("/api/episodes", params={"task": crashed[0].task_id}).json()["total"])
    )
    page = client.get(crashed[0].address).text
    assert 'id="not-judged"' in page and "the provider hung up" in page
    assert (
        '<dd id="end-reason">infra_error</dd>' in page and '<dd id="agent-tokens">120 in, 30 out</dd>' in page
    )
    assert '<dd id="attempts">1</dd>' in page and "no price known" in page
    assert '<a href="#m1">step 1</a>: malformed call login_user({not json)' in page
    assert 'id="m1" class="message assistant"' in page and 'class="problem"' in page
    api = client.get("/api" + crashed[0].address).json()
    assert api["outcome"] == "infra_error" and api["verdict"] is None and api["database_diff"] is None
    assert (
        api["problems"][0]["step"] == 1
        and api["facts"]["reason"] == "agent raised RuntimeError: the provider hung up"
    )


def test_the_cost_is_shown_when_the_model_is_priced(viewer_sources, crashed_run):
    prices = {"test-view-crashes": (2.0, 10.0)}  # an agent without a model is priced by its name: none
    loaded = load_sources(source_files([crashed_run]), SOUND, prices=prices)
    assert all(e.facts.cost_usd is None for e in loaded.episodes)
    from sopbench.view import episode_facts

    facts = episode_facts(
        status="completed",
        end_reason="exit_conversation",
        reason=None,
        usage={"prompt_tokens": 1000, "completion_tokens": 100},
        user_usage={},
        latency_s=1.5,
        attempts=2,
        problems=[],
        model="m",
        prices={"m": (2.0, 10.0)},
    )
    assert facts.cost_usd == pytest.approx((1000 * 2.0 + 100 * 10.0) / 1e6)


def test_an_inspect_log_is_a_source_with_its_transcripts(inspect_log):
    loaded = load_sources(source_files([inspect_log]), SOUND)
    assert loaded.problems == []
    scores = {(s.task_id, s.run): s.passed for s in inspect_log_scores(inspect_log)}
    assert {(e.task_id, e.number): e.passed for e in loaded.episodes} == scores
    client = TestClient(create_app(EpisodeIndex(loaded.episodes), "sound"))
    episode = loaded.episodes[0]
    view = episode_view(episode, shown=True)
    assert view.messages and view.system_prompt and view.constraints and not view.database_kept
    page = client.get(episode.address)
    assert page.status_code == 200 and '<dd id="end-reason">exit_conversation</dd>' in page.text
    assert "Not kept by this source" in page.text
    assert source_digest(inspect_log) == episode.digest


def test_a_folder_of_run_folders_and_logs_is_read_whole(viewer_sources, inspect_log, tmp_path):
    sweep = tmp_path / "sweep"
    shutil.copytree(viewer_sources.reference, sweep / "a" / "reference")
    shutil.copytree(viewer_sources.no_verify, sweep / "b")
    shutil.copy(inspect_log, sweep / inspect_log.name)
    units = source_files([sweep])
    assert units == [sweep / "a" / "reference", sweep / "b", sweep / inspect_log.name]


def test_a_run_is_in_progress_while_its_process_holds_the_lock(tmp_path):
    folder = tmp_path / "run"
    assert not run_in_progress(folder)
    with RunLock(folder):
        assert run_in_progress(folder)
    assert not run_in_progress(folder)  # our own process, alive, but the lock is let go
    (folder / LOCK_NAME).write_text("999999999\n")
    assert not run_in_progress(folder)
    holder = subprocess.Popen(  # another process holding it, as a run does
        [
            sys.executable,
            "-c",
            f"from pathlib import Path; from sopbench.runner.store import RunLock; "
            f"import time\nwith RunLock(Path({str(folder)!r})):\n    print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert run_in_progress(folder)
    finally:
        holder.kill()
        holder.wait()
    assert not run_in_progress(folder)


def _run(agent: str, tasks: Path, output: Path, limit: int) -> None:
    run(RunSpec(agent=agent, domains=("bank",), tasks=tasks, output=output, baselines=False, limit=limit))


def test_live_sources_add_what_a_run_writes(viewer_sources, tmp_path):
    parent = tmp_path / "sweep"
    first = parent / "first"
    _run("reference", viewer_sources.tasks, first, 2)
    live = LiveSources([parent], SOUND)
    loaded = live.load(source_files([parent]))
    index = EpisodeIndex(loaded.episodes)
    before = {e.address for e in index.episodes}
    assert len(before) == 2 and live.collect(len(index.episodes)).episodes == []  # nothing new
    # the same run extended to more tasks, and a second run folder beside it
    _run("reference", viewer_sources.tasks, first, 4)
    _run("no-verify", viewer_sources.tasks, parent / "second", 1)
    live.apply(live.collect(len(index.episodes)), index)
    after = {e.address for e in index.episodes}
    assert before < after and len(after) == 4 + 1
    assert [e.id for e in index.episodes] == list(range(5))
    counts = {Path(s.name).name: (s.episodes, s.in_progress) for s in live.status()}
    assert counts == {"first": (4, False), "second": (1, False)}
    with RunLock(first):  # a run starts on the folder: in progress before it writes anything
        live.collect(len(index.episodes))
        assert {Path(s.name).name: s.in_progress for s in live.status()} == {"first": True, "second": False}
    live.collect(len(index.episodes))
    assert not any(s.in_progress for s in live.status())
    # a trajectory file appears: read once it has settled, never half-written
    shutil.copytree(viewer_sources.injected, parent / "exported", copy_function=shutil.copyfile)
    assert live.collect(len(index.episodes)).episodes == []  # just written
    old = time.time() - 10
    for file in (parent / "exported").rglob("*.json"):
        os.utime(file, (old, old))
    assert len(live.collect(len(index.episodes)).episodes) == 3
    # a broken file appears: named once, however often the page polls
    told: list[str] = []
    live.on_problem = told.append
    broken = (
        parent
        / "exported"
        / "bank"
        / "ast_broken-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"
    )
    broken.write_text("[{not json")
    os.utime(broken, (old, old))
    for _ in range(2):
        live.apply(live.collect(len(index.episodes)), index)
    assert len(told) == 1 and broken.name in told[0]


def test_the_side_by_side_page_marks_the_first_divergence(index, client):
    failed = next(e for e in index.episodes if e.configuration.startswith("no-verify") and not e.passed)
    reference = next(
        e for e in index.episodes if e.configuration.startswith("reference") and e.task_id == failed.task_id
    )
    found = divergence(reference, failed)
    assert found is not None and found.step_a is not None and found.step_b is not None
    calls = [m for m in reference.record.runs[0].messages[: found.step_a] if m.tool_calls]
    assert (
        calls == [m for m in failed.record.runs[0].messages[: found.step_b] if m.tool_calls]
        or found.action == 1
    )
    assert divergence(reference, reference) is None
    page = client.get(
        f"/compare?a={quote(reference.configuration)}&b={quote(failed.configuration)}&task={quote(failed.task_id)}"
    ).text
    for side, step in (("a", found.step_a), ("b", found.step_b)):
        assert re.search(f'id="{side}0-m{step}" class="message assistant[^"]* diverges"', page)
    assert page.count(' diverges"') == 2
    assert "First divergence, action" in page and f'href="{failed.address}"' in page
    empty = client.get("/compare?a=x&b=y&task=none").text
    assert 'id="no-runs"' in empty


def test_an_infra_error_episode_played_again_takes_its_place(viewer_sources, tmp_path):
    """Resuming a run plays its infra_error episodes again: the completed one replaces it, at the
    same address and number, in the list and in every filter."""
    from sopbench.agents import Reference, agent_names, register_agent

    class Flaky(Reference):
        name = "test-view-flaky"
        failing = True

        async def act(self, messages):
            if Flaky.failing:
                raise RuntimeError("try again later")
            return await super().act(messages)

    if "test-view-flaky" not in agent_names():
        register_agent("test-view-flaky")(Flaky)
    folder = tmp_path / "flaky"
    config = RunSpec(
        agent="test-view-flaky",
        domains=("bank",),
        tasks=viewer_sources.tasks,
        output=folder,
        baselines=False,
        limit=2,
    )
    run(config)
    live = LiveSources([folder], SOUND)
    index = EpisodeIndex(live.load(source_files([folder])).episodes)
    assert [e.outcome for e in index.episodes] == ["infra_error"] * 2
    addresses = [e.address for e in index.episodes]
    Flaky.failing = False
    try:
        run(config)
    finally:
        Flaky.failing = True
    live.last_poll = 0
    live.apply(live.collect(len(index.episodes)), index)
    assert [e.address for e in index.episodes] == addresses
    assert {e.outcome for e in index.episodes} <= {"passed", "failed"}
    assert index.page(Filters({"outcome": "infra_error"})).total == 0
    assert index.page(Filters({"q": "try again later"})).total == 0
    assert index.by_address[addresses[0]] is index.episodes[0]


def test_every_page_renders_with_live_sources(viewer_sources, tmp_path):
    parent = tmp_path / "live"
    shutil.copytree(viewer_sources.no_verify, parent / "no-verify")
    live = LiveSources([parent], SOUND)
    index = EpisodeIndex(live.load(source_files([parent])).episodes)
    client = TestClient(create_app(index, "sound", "note", live))
    episode = index.episodes[0]
    task = quote(episode.task_id)
    conf = quote(episode.configuration)
    for path in ("/", episode.address, f"/compare?a={conf}&b={conf}&task={task}", "/compare"):
        answer = client.get(path)
        assert answer.status_code == 200, path
        assert f'id="live" class="muted" data-episodes="{len(index.episodes)}"' in answer.text
    status = client.get("/api/status").json()
    assert status["episodes"] == len(index.episodes) and status["live"] is True
    assert status["sources"] == [
        {"name": str(parent / "no-verify"), "episodes": len(index.episodes), "in_progress": False}
    ]


def _compare(sources, *extra: str) -> str:
    """``sopbench compare REFERENCE NO-VERIFY --format markdown EXTRA...``: what it prints."""
    command = [
        sys.executable,
        "-m",
        "sopbench.cli",
        "compare",
        str(sources.reference),
        str(sources.no_verify),
    ]
    result = subprocess.run(
        [*command, "--format", "markdown", *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_compare_flips_link_to_the_side_by_side_page(viewer_sources, index, client):
    """``sopbench compare --viewer-url`` gives each flipped run the address of its side-by-side page,
    which a viewer on the same sources opens with both runs."""
    printed = _compare(viewer_sources, "--viewer-url", "http://127.0.0.1:8765/")
    links = re.findall(r"http://127\.0\.0\.1:8765(/compare\?\S+?)\s*\|", printed)
    flipped = sum(
        1 for e in index.episodes if e.configuration.startswith("no-verify") and e.judged and not e.passed
    )
    assert len(links) == min(flipped, 20) > 0
    page = client.get(links[0]).text
    assert page.count('class="column side-') == 2 and "First divergence, action" in page
    without = _compare(viewer_sources)
    assert "side by side" not in without and "/compare?" not in without


def test_the_report_s_verdict_rows_have_the_viewer_s_addresses(viewer_sources, inspect_log):
    """``score_address`` gives a row as ``sopbench.results`` reads it the address of the episode the
    viewer shows: the report's links open that very episode."""
    from sopbench.results import read_run_folder as report_rows
    from sopbench.scoring import score_paths
    from sopbench.view import score_address

    shown = _by_address([viewer_sources.reference, viewer_sources.injected, inspect_log])
    rows = [
        *report_rows(viewer_sources.reference, SOUND).scores,
        *score_paths(viewer_sources.injected, SOUND),
        *inspect_log_scores(inspect_log),
    ]
    assert {score_address(row): (row.task_id, row.run, row.passed) for row in rows} == {
        address: (task, run, passed) for address, (_source, task, run, passed) in shown.items()
    }


def test_an_inspect_log_written_as_json_is_read_as_a_log(inspect_log, tmp_path):
    from inspect_ai.log import read_eval_log, write_eval_log

    folder = tmp_path / "logs"
    folder.mkdir()
    write_eval_log(read_eval_log(str(inspect_log)), str(folder / "run.json"), format="json")
    assert source_files([folder]) == [folder / "run.json"]
    as_json = _by_address([folder / "run.json"])
    assert as_json == {
        a: (str(folder / "run.json"), *rest) for a, (_s, *rest) in _by_address([inspect_log]).items()
    }


def test_markup_stays_text_on_the_side_by_side_page(index, client):
    from viewer_helpers import IMAGE, SCRIPT

    injected = next(e for e in index.episodes if e.configuration.startswith("injected-model"))
    path = compare_address(injected.configuration, "reference · tools full", injected.task_id)
    page = client.get(path)
    assert page.status_code == 200 and 'class="column side-a"' in page.text
    assert SCRIPT not in page.text and IMAGE not in page.text and 'href="javascript' not in page.text
    assert "&lt;script&gt;window.__injected = 1;" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    hostile = client.get(compare_address('"><script>alert(1)</script>', "b", "<img src=x onerror=alert(2)>"))
    assert "<script>alert(1)" not in hostile.text and "<img src=x" not in hostile.text


@given(st.text(), st.text(), st.text())
def test_a_side_by_side_address_names_the_two_configurations_and_the_task(a, b, task_id):
    # Any text a configuration or a task id holds (spaces, &, =, +, %, quotes, non-ASCII, lone
    # surrogates aside: a URL cannot carry them) reads back as itself from the query.
    assume(not any("\ud800" <= c <= "\udfff" for c in a + b + task_id))
    address = urlsplit(compare_address(a, b, task_id))
    assert address.path == "/compare"
    assert parse_qs(address.query, keep_blank_values=True) == {"a": [a], "b": [b], "task": [task_id]}
