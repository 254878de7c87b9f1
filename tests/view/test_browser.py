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
import sys
import urllib.request
from pathlib import Path

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


@pytest.fixture(scope="module")
def viewer(viewer_sources):
    process, url = start_viewer(viewer_sources.all)
    yield url
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=20)
    finally:
        process.kill()


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


def api(url: str, query: str = "") -> dict:
    with urllib.request.urlopen(f"{url}api/episodes{query}", timeout=10) as answer:
        return json.loads(answer.read())


def episode_api(url: str, episode_id: int) -> dict:
    with urllib.request.urlopen(f"{url}api/episode/{episode_id}", timeout=10) as answer:
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
    browser.get(f"{viewer}episode/{failed['id']}")
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
