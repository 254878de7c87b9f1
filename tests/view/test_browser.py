"""The viewer in a real browser: Debian's chromium, headless, driven by Selenium through
chromium-driver, against ``sopbench view`` started as a real process on 127.0.0.1.

Skipped, with the reason, when chromium or chromedriver is not installed; ``.ci/run`` installs
both and sets ``SOPBENCH_REQUIRE_BROWSER=1``, which makes their absence an error instead. ``SOPBENCH_SCREENSHOT_DIR=DIR`` also writes the screenshots there (the README's image,
docs/viewer-episode.png, is made so: ``SOPBENCH_SCREENSHOT_DIR=docs pytest tests/view/test_browser.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from viewer_helpers import SCRIPT, start_viewer  # noqa: E402

from sopbench.scoring import SOUND, summarize  # noqa: E402
from sopbench.view import load_sources, source_files  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
MISSING = "chromium and chromedriver are needed (Debian: apt-get install chromium chromium-driver)"
# .ci/run sets this: there the browser tests must run, never be skipped.
REQUIRED = os.environ.get("SOPBENCH_REQUIRE_BROWSER") == "1"
if CHROMIUM is None or CHROMEDRIVER is None:
    if REQUIRED:
        raise RuntimeError(f"SOPBENCH_REQUIRE_BROWSER=1 but {MISSING}")
    pytest.skip(MISSING, allow_module_level=True)
webdriver = pytest.importorskip(
    "selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')"
)


def stop(process) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=20)
    finally:
        process.kill()


@pytest.fixture(scope="module")
def viewer(viewer_sources):
    process, url = start_viewer(viewer_sources.all)
    yield url
    stop(process)


@pytest.fixture(scope="module")
def browser(start_chromium):
    driver = start_chromium()
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def requested_urls(driver) -> list[str]:
    """Every URL the page asked for since the last call (the performance log is read once)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def screenshot(driver, tmp_path: Path, name: str, *, publish: bool = False) -> Path:
    """A PNG of the window in ``tmp_path``; with ``publish``, also in $SOPBENCH_SCREENSHOT_DIR."""
    target = tmp_path / name
    driver.save_screenshot(str(target))
    wanted = os.environ.get("SOPBENCH_SCREENSHOT_DIR")
    if publish and wanted:
        shutil.copyfile(target, Path(wanted) / name)
    return target


@pytest.fixture(scope="module")
def viewer_reversed(viewer_sources):
    """A second viewer on the same sources given in the opposite order."""
    process, url = start_viewer(viewer_sources.all[::-1])
    yield url
    stop(process)


@pytest.fixture(scope="module")
def viewer_more(viewer_sources, crashed_run, inspect_log):
    """A viewer on an Inspect log, a run of infra_error episodes and two run folders."""
    process, url = start_viewer(
        [inspect_log, crashed_run, viewer_sources.reference, viewer_sources.no_verify]
    )
    yield url
    stop(process)


def api(url: str, query: str = "") -> dict:
    with urllib.request.urlopen(f"{url}api/episodes{query}", timeout=10) as answer:
        return json.loads(answer.read())


def episode_api(url: str, episode_id: int | str) -> dict:
    """One episode's API answer, by its number in this viewer or by its address."""
    where = f"{url}api/episode/{episode_id}" if isinstance(episode_id, int) else f"{url}api{episode_id}"
    with urllib.request.urlopen(where, timeout=10) as answer:
        return json.loads(answer.read())


def test_the_list_loads_and_a_filter_changes_it(viewer, browser, viewer_sources, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.get(viewer)
    rows = browser.find_elements(By.CSS_SELECTOR, "#episodes tbody tr")
    total = int(browser.find_element(By.ID, "total").text)
    everything = load_sources(source_files(viewer_sources.all), SOUND).episodes
    overall = summarize(e.score for e in everything).overall
    assert total == overall.runs == len(everything)
    assert int(browser.find_element(By.ID, "passed").text) == overall.passed
    assert len(rows) == min(total, 50)

    Select(browser.find_element(By.NAME, "outcome")).select_by_value("failed")  # submits on change
    WebDriverWait(browser, 10).until(lambda d: "outcome=failed" in d.current_url)
    failed = int(browser.find_element(By.ID, "total").text)
    assert failed == overall.runs - overall.passed == api(viewer, "?outcome=failed")["total"]
    assert 0 < failed < total
    outcomes = {cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#episodes td.outcome")}
    assert outcomes == {"failed"}
    assert screenshot(browser, tmp_path, "viewer-list.png").stat().st_size > 1000
    assert not [line for line in browser.get_log("browser") if line["level"] == "SEVERE"]


def test_an_episode_shows_its_graph_and_first_failing_step(viewer, browser, tmp_path):
    from selenium.webdriver.common.by import By

    candidates = api(viewer, "?configuration=no-verify%20%C2%B7%20tools%20full&outcome=failed")["episodes"]
    # The one with the largest SOP (the screenshot shows the most of a graph).
    failed = max(candidates, key=lambda e: (len(episode_api(viewer, e["id"])["constraints"]), -e["id"]))
    browser.get(f"{viewer}episode/{failed['id']}")  # the old positional address: redirected
    assert browser.current_url == viewer.rstrip("/") + failed["address"]
    graph = browser.find_element(By.CSS_SELECTOR, "svg.sop-graph")
    assert graph.is_displayed() and len(graph.find_elements(By.CSS_SELECTOR, "g.node")) >= 2
    assert graph.find_elements(By.CSS_SELECTOR, "g.node.unverified, g.node.false")
    first = browser.find_element(By.ID, "first-failure")
    assert first.is_displayed() and "step" in first.text
    highlighted = browser.find_elements(By.CSS_SELECTOR, ".message.failing")
    assert highlighted and highlighted[-1].find_element(By.CSS_SELECTOR, ".explanation").is_displayed()
    assert failed["explanations"][0] in first.text  # the library's explanation, word for word
    assert screenshot(browser, tmp_path, "viewer-episode.png", publish=True).stat().st_size > 1000


def test_markup_from_the_episode_stays_inert(viewer, browser):
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    injected = api(viewer, "?configuration=injected-model%20%C2%B7%20fc%20%C2%B7%20tools%20full")["episodes"][
        0
    ]
    requested_urls(browser)  # forget what earlier pages asked for
    browser.get(f"{viewer}episode/{injected['id']}")
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 - asking is the test
    assert browser.execute_script("return window.__injected === undefined")
    assert browser.find_elements(By.ID, "injected-link") == []  # the link is text, not an element
    text = browser.find_element(By.TAG_NAME, "body").text
    assert SCRIPT in text and "onerror=" in text and "javascript:alert(3)" in text
    urls = requested_urls(browser)
    assert urls and all(u.startswith(viewer) for u in urls), urls
    assert not [u for u in urls if "pwned" in u or u.endswith("/x")]


def _path(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).path


def test_a_stable_url_opens_the_same_episode_in_two_viewers(viewer, viewer_reversed, browser):
    from selenium.webdriver.common.by import By

    first = api(viewer, "?outcome=failed")["episodes"][-1]
    second = episode_api(viewer_reversed, first["address"])
    assert first["id"] != second["id"]  # positions differ: the sources came in another order
    for url in (viewer, viewer_reversed):
        browser.get(url.rstrip("/") + first["address"])
        assert _path(browser.current_url) == first["address"]
        assert browser.find_element(By.ID, "task-id").text == first["task_id"]
        heading = browser.find_element(By.CSS_SELECTOR, "main p.muted").text
        assert first["configuration"] in heading and f"run {first['run']}" in heading
        assert first["explanations"][0] in browser.find_element(By.ID, "first-failure").text


def test_search_by_task_id_narrows_the_list(viewer, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    task = api(viewer, "?outcome=failed")["episodes"][0]["task_id"]
    browser.get(viewer)
    field = browser.find_element(By.NAME, "q")
    field.send_keys(task)
    field.submit()
    WebDriverWait(browser, 10).until(lambda d: "q=" in d.current_url)
    assert "task=" not in browser.current_url and "domain=" not in browser.current_url  # only filters in use
    tasks = {cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#episodes td.task")}
    assert tasks == {task}
    assert int(browser.find_element(By.ID, "total").text) == api(viewer, f"?task={quote(task)}")["total"] >= 2
    browser.get(f"{viewer}?task={quote(task)}")  # the shared link: the same list
    assert {cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#episodes td.task")} == {task}


def test_previous_and_next_walk_the_filtered_list(viewer, browser):
    from selenium.webdriver.common.by import By

    listed = api(viewer, "?outcome=failed&domain=bank")["episodes"]
    browser.get(f"{viewer}?outcome=failed&domain=bank")
    browser.find_element(By.CSS_SELECTOR, "#episodes td.task a").click()
    assert _path(browser.current_url) == listed[0]["address"]
    assert browser.find_elements(By.ID, "previous") == []
    browser.find_element(By.ID, "next").click()
    assert _path(browser.current_url) == listed[1]["address"] and "outcome=failed" in browser.current_url
    assert "2 of" in browser.find_element(By.ID, "walk").text
    browser.find_element(By.ID, "next").click()
    assert _path(browser.current_url) == listed[2]["address"]
    browser.find_element(By.ID, "previous").click()
    assert _path(browser.current_url) == listed[1]["address"]
    browser.find_element(By.ID, "back").click()
    assert (
        int(browser.find_element(By.ID, "total").text) == api(viewer, "?outcome=failed&domain=bank")["total"]
    )


def test_an_inspect_log_episode_opens(viewer_more, browser, inspect_log):
    from selenium.webdriver.common.by import By

    shown = [e for e in api(viewer_more)["episodes"] if e["source"] == str(inspect_log)]
    assert len(shown) == 2
    browser.get(viewer_more.rstrip("/") + shown[0]["address"])
    assert browser.find_element(By.ID, "task-id").text == shown[0]["task_id"]
    assert browser.find_element(By.ID, "end-reason").text == "exit_conversation"
    assert browser.find_elements(By.CSS_SELECTOR, ".message.assistant .call")
    assert browser.find_element(By.CSS_SELECTOR, "svg.sop-graph").is_displayed()
    assert not [line for line in browser.get_log("browser") if line["level"] == "SEVERE"]


def test_an_infra_error_episode_page_shows_what_it_kept(viewer_more, browser, crashed_run, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.get(viewer_more)
    Select(browser.find_element(By.NAME, "outcome")).select_by_value("infra_error")
    WebDriverWait(browser, 10).until(lambda d: "outcome=infra_error" in d.current_url)
    assert {c.text for c in browser.find_elements(By.CSS_SELECTOR, "#episodes td.outcome")} == {"infra_error"}
    browser.find_element(By.CSS_SELECTOR, "#episodes td.task a").click()
    assert "the provider hung up" in browser.find_element(By.ID, "not-judged").text
    assert browser.find_element(By.ID, "agent-tokens").text == "120 in, 30 out"
    assert browser.find_element(By.ID, "attempts").text == "1"
    problem = browser.find_element(By.CSS_SELECTOR, "#problems li")
    assert problem.text.startswith("step 1: malformed call login_user")
    problem.find_element(By.TAG_NAME, "a").click()
    assert browser.current_url.endswith("#m1")
    assert browser.find_element(By.CSS_SELECTOR, "#m1 .problem").is_displayed()
    screenshot(browser, tmp_path, "viewer-infra-error.png")


def test_the_side_by_side_page_marks_the_first_divergence(viewer, browser, tmp_path):
    from selenium.webdriver.common.by import By

    failed = api(viewer, "?configuration=no-verify%20%C2%B7%20tools%20full&outcome=failed")["episodes"][0]
    reference = "reference · tools full"
    url = f"{viewer}compare?a={quote(reference)}&b={quote(failed['configuration'])}&task={quote(failed['task_id'])}"
    browser.get(url)
    summary = browser.find_element(By.CSS_SELECTOR, ".divergence-summary")
    assert summary.text.startswith("First divergence, action")
    marked = browser.find_elements(By.CSS_SELECTOR, ".message.diverges")
    assert len(marked) == 2 and all(m.is_displayed() for m in marked)
    left, right = (browser.find_element(By.CSS_SELECTOR, f".column.side-{side}") for side in "ab")
    assert (
        left.location["x"] < right.location["x"] and left.location["y"] == right.location["y"]
    )  # side by side
    assert left.find_elements(By.CSS_SELECTOR, ".message.diverges") and right.find_elements(
        By.CSS_SELECTOR, ".message.diverges"
    )
    assert screenshot(browser, tmp_path, "viewer-compare.png", publish=True).stat().st_size > 1000
    right.find_element(By.LINK_TEXT, "the full episode").click()
    assert _path(browser.current_url) == failed["address"]


def test_the_list_shows_episodes_a_run_adds_while_it_is_open(viewer_sources, browser, tmp_path):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from sopbench.runner.store import RunLock

    sweep = tmp_path / "sweep"
    command = [
        sys.executable,
        "-m",
        "sopbench.cli",
        "run",
        "--domain",
        "bank",
        "--tasks",
        str(viewer_sources.tasks),
    ]
    command += ["--limit", "2", "--no-baselines"]

    def run(agent: str, folder: str) -> None:
        subprocess.run(
            [*command, "--agent", agent, "-o", str(sweep / folder)],
            check=True,
            capture_output=True,
            timeout=120,
        )

    run("reference", "first")
    process, url = start_viewer([sweep])
    try:
        browser.get(url)
        assert int(browser.find_element(By.ID, "total").text) == 2
        live = browser.find_element(By.ID, "live")
        with RunLock(sweep / "first"):  # as a run holds it while it writes (this process, not the viewer's)
            WebDriverWait(browser, 20).until(lambda d: "in progress: first (2)" in live.text)
        WebDriverWait(browser, 20).until(lambda d: "in progress" not in live.text)
        run("no-verify", "second")
        # the list is drawn anew when the second run appears: the element read may be replaced
        # between finding it and reading it, which is not a failure, only a reason to look again
        WebDriverWait(browser, 20, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda d: d.find_element(By.ID, "total").text == "4"
        )
        configurations = {c.text for c in browser.find_elements(By.CSS_SELECTOR, "#episodes td:nth-child(3)")}
        assert {"reference · tools full", "no-verify · tools full"} <= configurations
    finally:
        stop(process)
