"""The HTML report: self-contained, escaped, its numbers the library's, and (in Debian's chromium)
opening from file:// with no console error and no request, its per-goal table sortable.

Episodes come from the viewer's test helpers (generated bank tasks played by two built-in agents,
and a trajectory file whose messages carry markup). The README's image, docs/report.png, is made by
test_html_layout.py on the published runs.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "view"))
sys.path.insert(0, str(Path(__file__).parent))
from browser_helpers import needs_browser, report_in_chromium, requested_urls  # noqa: E402
from viewer_helpers import IMAGE, LINK, SCRIPT, make_viewer_sources  # noqa: E402

from sopbench.report import HtmlReport, build_html_report  # noqa: E402
from sopbench.results import ScoringOptions, Sources, leaderboard, report_leaderboard  # noqa: E402


def html_report(sources: Sources, **shown) -> HtmlReport:
    """The report as ``sopbench report`` makes it: the results' leaderboard, laid out."""
    return build_html_report(report_leaderboard(sources, ScoringOptions()), sources, **shown)


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> Sources:
    return Sources.of(make_viewer_sources(tmp_path_factory.mktemp("report")).all)


@pytest.fixture(scope="module")
def embedded(sources):
    return html_report(sources, embed_episodes=True)


def test_the_file_asks_for_nothing_and_runs_no_foreign_script(embedded):
    html = embedded.html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # no CDN, no remote resource
    assert "<link" not in html and "@import" not in html
    assert html.count("<script>") == 1  # the sort script only, allowed by its hash
    assert "script-src &#39;sha256-" in html


def test_what_a_model_wrote_is_text(embedded):
    html = embedded.html
    assert embedded.embedded == embedded.episodes > 0
    for raw in (SCRIPT, IMAGE, LINK):
        assert raw not in html
    assert "&lt;script&gt;window.__injected = 1;" in html
    assert "&lt;img src=x onerror=" in html
    assert "&lt;a href=&#34;javascript:alert(3)&#34;" in html
    assert 'href="javascript:' not in html and "<img" not in html


def test_the_numbers_are_the_librarys(sources, embedded):
    library = leaderboard(sources, ScoringOptions(), no_verify=True)
    assert len(embedded.rows) == len(library.rows)
    for row, lb_row in zip(embedded.rows, library.rows, strict=True):
        overall = lb_row.overall
        if overall.cases:
            assert row.overall.text == f"{100 * overall.passed / overall.cases:.1f}"
            low, high = overall.ci95
            assert row.interval == f"[{100 * low:.1f}–{100 * high:.1f}]" and row.cases == overall.cases
            assert f">{row.overall.text}<" in embedded.html and f">{row.interval}<" in embedded.html
    for a, b, result in embedded.comparisons:
        assert result.overall.paired_runs > 0 and a.number < b.number


def test_links_go_to_the_viewer_with_its_filters(sources):
    built = html_report(sources, viewer_url="http://127.0.0.1:9999/")
    assert "http://127.0.0.1:9999/?configuration=reference+%C2%B7+tools+full&amp;domain=bank" in built.html
    assert "kind=" in built.html and "judgement=procedure" in built.html


def test_the_verb_writes_one_file(sources, tmp_path):
    folders = sources.run_folders
    target = tmp_path / "report.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sopbench.cli",
            "report",
            *map(str, folders),
            "--output",
            str(target),
            "--tasks-dir",
            str(folders[0].parent / "tasks"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert target.read_text().startswith("<!doctype html>")
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "sopbench.cli",
            "report",
            str(folders[0]),
            "--output",
            str(target),
            "--protocol",
            "x",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "--protocol x" in refused.stderr


@needs_browser
def test_in_a_browser_from_file(embedded, tmp_path, start_chromium):
    from selenium.webdriver.common.by import By

    with report_in_chromium(start_chromium, embedded.html, tmp_path) as driver:
        assert not [line for line in driver.get_log("browser") if line["level"] in ("SEVERE", "WARNING")]
        urls = requested_urls(driver)
        assert urls and all(u.startswith("file://") or u.startswith("data:") for u in urls), urls
        assert driver.execute_script("return window.__injected === undefined")
        overall = driver.find_elements(By.CSS_SELECTOR, "#leaderboard-table td.overall")
        assert [c.text for c in overall] == [r.overall.text for r in embedded.rows]

        def rates() -> list[float]:
            cells = driver.find_elements(By.CSS_SELECTOR, "#goal-table tbody tr td:nth-child(5)")
            return [float(c.get_attribute("data-v")) for c in cells]

        header = driver.find_element(By.CSS_SELECTOR, "#goal-table th:nth-child(5)")
        header.click()
        assert rates() == sorted(rates()) and len(rates()) > 1
        header.click()
        assert rates() == sorted(rates(), reverse=True)
        assert not [line for line in driver.get_log("browser") if line["level"] == "SEVERE"]


def test_a_configuration_under_the_threshold_is_greyed_and_drawn_without_a_bar(embedded):
    html = embedded.html
    (few,) = [r for r in embedded.rows if not r.ranked and not r.baseline]  # the injected file: 3 runs
    assert few.cases < embedded.leaderboard.min_cases
    assert re.search(rf'<tr class="[^"]*apart[^"]*" data-row="{few.number}">', html)
    domains = html[
        html.index('<figure id="fig-domains">') : html.index("</figure>", html.index('id="fig-domains"'))
    ]
    label = re.search(rf'<text style="[^"]*fill: (#[0-9a-f]{{6}})"[^>]*>{re.escape(few.name)}\s*<', domains)
    assert label is not None and label[1] == "#9a9a9a"
    others = [r for r in embedded.rows if r.ranked]
    assert all(re.search(rf'fill: #222222"[^>]*>{re.escape(r.name)}\s*<', domains) for r in others)

    # Bars are filled with their row's colour (its swatch in the table); the greyed row has none.
    def colour(row) -> str:
        return re.search(rf'data-row="{row.number}">.*?background: (#[0-9a-f]{{6}})', html, re.S)[1]

    assert f"fill: {colour(few)}" not in domains
    assert all(f"fill: {colour(r)}" in domains for r in others)
