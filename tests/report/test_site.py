"""``sopbench report --site DIR``: a static folder (the report, a list per number, a page per episode
at its stable address) that opens from file:// in Debian's chromium with no script, no request
outside the folder and what a model wrote shown as text; written whole or not at all; and the
--embed-episodes warning above the threshold."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "view"))
sys.path.insert(0, str(Path(__file__).parent))
from browser_helpers import needs_browser, requested_urls  # noqa: E402
from viewer_helpers import IMAGE, LINK, SCRIPT, make_viewer_sources  # noqa: E402

from sopbench.report import (  # noqa: E402
    SITE_MARK,
    SiteError,
    SitePage,
    build_html_report,
    write_site,
)
from sopbench.results import ScoringOptions, Sources, report_leaderboard  # noqa: E402


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return make_viewer_sources(tmp_path_factory.mktemp("site-sources"))


@pytest.fixture(scope="module")
def site(made, tmp_path_factory) -> Path:
    sources = Sources.of(made.all)
    built = build_html_report(report_leaderboard(sources, ScoringOptions()), sources, site=True)
    assert built.pages is not None and built.embedded == built.episodes > 0
    target = tmp_path_factory.mktemp("out") / "site"
    assert write_site(target, built.pages) > built.episodes
    return target


def test_the_site_holds_the_report_a_list_per_number_and_a_page_per_episode(site, made):
    index = (site / "index.html").read_text()
    lists = re.findall(r'href="(lists/g\d+\.html)"', index)
    assert lists and all((site / name).is_file() for name in lists)
    pages = sorted(p.relative_to(site).as_posix() for p in (site / "episode").rglob("*.html"))
    # episode/<source digest>/<domain>/<task>/<run>.html: one per run of the sources (2 folders, 3 records).
    assert len(pages) == 23 + 23 + 3
    assert all(re.fullmatch(r"episode/[0-9a-f]{12}/bank/transfer_funds\[\d+\]/0\.html", p) for p in pages)
    assert len({p.split("/")[1] for p in pages}) == 3  # a digest per source
    listed = {
        (site / "lists" / unquote(href)).resolve()
        for name in lists
        for href in re.findall(r'href="([^"]+)"', (site / name).read_text())
        if "episode/" in href
    }
    assert listed and all(path.is_file() for path in listed)
    assert (site / SITE_MARK).is_file() and (site / "style.css").stat().st_size > 1000


def test_model_text_stays_text_on_every_page(site):
    pages = list(site.rglob("*.html"))
    for page in pages:
        text = page.read_text()
        for raw in (SCRIPT, IMAGE, LINK):
            assert raw not in text
        assert 'href="javascript:' not in text and "<img" not in text
        if page.name in ("index.html", "goals.html"):  # the sort script only, allowed by its hash
            assert text.count("<script>") == 1 and "script-src &#39;sha256-" in text
        else:
            assert "<script" not in text and "script-src &#39;none&#39;" in text
    injected = [p for p in pages if "&lt;script&gt;window.__injected = 1;" in p.read_text()]
    assert injected and all("/episode/" in p.as_posix() for p in injected)


def test_a_site_replaces_an_earlier_one_and_never_a_folder_of_other_files(tmp_path):
    target = tmp_path / "site"
    write_site(target, iter([SitePage("index.html", "one")]))
    write_site(target, iter([SitePage("index.html", "two"), SitePage("lists/g0.html", "x")]))
    assert (target / "index.html").read_text() == "two" and (target / "lists" / "g0.html").is_file()
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    with pytest.raises(SiteError, match="holds other files"):
        write_site(other, iter([SitePage("index.html", "x")]))
    assert (other / "notes.txt").read_text() == "keep me" and not (other / "index.html").exists()

    def broken():
        yield SitePage("index.html", "three")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_site(target, broken())
    assert (target / "index.html").read_text() == "two"  # the earlier site, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "site"]  # no half-built folder left


def test_embedding_many_episodes_warns_with_a_size(made):
    sources = Sources.of(made.all)
    board = report_leaderboard(sources, ScoringOptions())
    told: list[str] = []
    build_html_report(board, sources, embed_episodes=True, on_warning=told.append, embed_warn_at=10)
    assert len(told) == 1 and "49 episodes" in told[0] and "MB" in told[0] and "--site" in told[0]
    told.clear()
    build_html_report(board, sources, embed_episodes=True, on_warning=told.append)
    assert told == []


def test_the_verb_writes_a_site_and_asks_for_one_target(made, tmp_path):
    def report(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "sopbench.cli", "report", str(made.reference), *args],
            capture_output=True,
            text=True,
            timeout=300,
        )

    done = report("--site", str(tmp_path / "site"), "--tasks-dir", str(made.tasks))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "index.html").is_file() and len(
        list((tmp_path / "site").rglob("0.html"))
    ) == 23
    for args in (
        (),
        ("--site", str(tmp_path / "s"), "--output", str(tmp_path / "r.html")),
        ("--site", str(tmp_path / "s"), "--embed-episodes"),
    ):
        refused = report(*args)
        assert refused.returncode == 2 and not (tmp_path / "s").exists(), refused.stderr
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    refused = report("--site", str(tmp_path / "mine"))
    assert refused.returncode == 2 and "holds other files" in refused.stderr
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]


@needs_browser
def test_in_a_browser_from_file_the_index_leads_to_an_episode(site, start_chromium):
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By

    driver = start_chromium()
    try:
        driver.get((site / "index.html").as_uri())
        driver.find_element(By.CSS_SELECTOR, "#leaderboard-table td.overall a").click()
        assert "/lists/" in driver.current_url
        links = driver.find_elements(By.CSS_SELECTOR, "section.group li a")
        assert links
        # The episode whose messages carry markup, if this list has it; else the first.
        links[0].click()
        assert "/episode/" in driver.current_url and driver.current_url.endswith("/0.html")
        assert driver.find_element(By.CSS_SELECTOR, "h1").text.startswith("bank / transfer_funds")
        assert driver.find_element(By.CSS_SELECTOR, "svg.sop-graph").is_displayed()
        header = driver.find_element(By.CSS_SELECTOR, "header")
        assert header.value_of_css_property("background-color") != "rgba(0, 0, 0, 0)"  # style.css applied
        # The per-goal table is a page of its own (the index stays light), sortable by its one script.
        driver.get((site / "index.html").as_uri())
        driver.find_element(By.CSS_SELECTOR, "#goals a[href='goals.html']").click()
        first = driver.find_element(By.CSS_SELECTOR, "#goal-table th:nth-child(5)")
        first.click()
        rates = [
            float(c.get_attribute("data-v"))
            for c in driver.find_elements(By.CSS_SELECTOR, "#goal-table tbody td:nth-child(5)")
        ]
        assert len(rates) > 1 and rates == sorted(rates)
        injected = next(p for p in site.rglob("*.html") if "&lt;script&gt;window.__injected" in p.read_text())
        driver.get(injected.as_uri())
        assert "<script>window.__injected = 1;" in driver.find_element(By.TAG_NAME, "main").text
        assert driver.execute_script("return window.__injected === undefined")
        assert not [line for line in driver.get_log("browser") if line["level"] in ("SEVERE", "WARNING")]
        urls = requested_urls(driver)
        assert urls and all(u.startswith(site.as_uri()) or u.startswith("data:") for u in urls), urls
    finally:
        driver.quit()
