"""The report's layout on the published university trajectories (36 configurations, skipped without
../shared): like-with-like comparisons linking to the viewer's side-by-side page, figures naming each
configuration in words in one colour, and, in Debian's chromium at 1400×900, no horizontal scroll
on the first screen and no figure label on another (bounding boxes of every SVG text)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from browser_helpers import needs_browser, report_in_chromium  # noqa: E402

from sopbench.report import build_html_report  # noqa: E402
from sopbench.results import ScoringOptions, Sources, report_leaderboard  # noqa: E402

VIEWER = "http://127.0.0.1:8765/"  # the default: the README image shows it

# Every pair of SVG texts of one figure whose boxes intersect (by more than half a pixel).
OVERLAPS = """
const out = [];
document.querySelectorAll('figure').forEach(fig => {
  const boxes = [...fig.querySelectorAll('svg text')].map(t => [t.getBoundingClientRect(), t.textContent])
    .filter(b => b[0].width > 0 && b[0].height > 0);
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i][0], b = boxes[j][0];
    if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
      out.push([fig.id, boxes[i][1], boxes[j][1]]);
  }
});
return out;
"""


@pytest.fixture(scope="module")
def university(published_trajectories_dir):
    sources = Sources.of([published_trajectories_dir / "university"])
    return build_html_report(report_leaderboard(sources, ScoringOptions()), sources, viewer_url=VIEWER)


def test_comparisons_pair_one_model_across_one_setting_and_link_side_by_side(university):
    assert len(university.comparisons) >= 10
    for a, b, result in university.comparisons:
        settings = [(x.mode, x.tool_list, x.user, x.folder) for x in (a.row, b.row)]
        assert a.row.model == b.row.model and a.ranked and b.ranked and a.number < b.number
        assert sum(x != y for x, y in zip(*settings, strict=True)) == 1
        assert result.overall.paired_runs > 0
    links = re.findall(r'href="(http://127\.0\.0\.1:8765/compare\?[^"]+)"', university.html)
    assert links
    configurations = {r.configuration for r in university.rows if r.configuration}
    flipped = {
        f.task_id
        for _, _, r in university.comparisons
        for f in (*r.overall.a_only_passed, *r.overall.b_only_passed)
    }
    for link in links:
        query = parse_qs(urlparse(link.replace("&amp;", "&")).query)
        assert set(query) == {"a", "b", "task"}
        assert (
            query["a"][0] in configurations
            and query["b"][0] in configurations
            and query["task"][0] in flipped
        )
    ranked = [r for r in university.rows if r.ranked and not r.baseline]
    assert [row.number for row, _ in university.floors] == [r.number for r in ranked]
    assert all(len(results) == 2 and all(c is not None for c in results) for _, results in university.floors)


def test_figures_name_each_configuration_in_words_in_its_leaderboard_colour(university):
    html = university.html
    figures = dict(re.findall(r'<figure id="([^"]+)">(.*?)</figure>', html, re.S))
    assert set(figures) >= {"fig-domains", "fig-split", "fig-failures"}
    texts = {
        anchor: {t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)}
        for anchor, svg in figures.items()
    }
    assert not any(t.startswith("#") for t in texts["fig-domains"] | texts["fig-split"])  # no "#n" to look up
    for row in university.rows:
        swatch = re.search(rf'<tr[^>]*data-row="{row.number}">.*?background: (#[0-9a-f]{{6}})', html, re.S)
        assert swatch is not None
        assert row.name in texts["fig-domains"] and swatch[1] in figures["fig-domains"]
        pooled = row.row.pooled
        if (
            pooled is not None and pooled.should_succeed[1] and pooled.should_refuse[1]
        ):  # a point on the plane
            assert row.name in texts["fig-split"] and swatch[1] in figures["fig-split"]
        if not row.baseline:
            assert row.name in texts["fig-failures"]


@needs_browser
def test_the_first_screen_fits_1400_by_900_and_no_figure_label_overlaps(university, tmp_path, start_chromium):
    from selenium.webdriver.common.by import By

    with report_in_chromium(start_chromium, university.html, tmp_path, viewport=(1400, 900)) as driver:
        width = driver.execute_script("return document.documentElement.clientWidth")
        assert driver.execute_script("return document.documentElement.scrollWidth") <= width
        headers = driver.find_elements(By.CSS_SELECTOR, "#leaderboard-table thead th")
        shown = [h.text for h in headers if h.is_displayed()]
        assert (
            shown[:5] == ["#", "configuration", "pass %", "95% interval", "cases"]
            and "balanced [95%]" in shown
        )
        assert all(h.rect["x"] + h.rect["width"] <= width for h in headers if h.is_displayed())
        first = driver.find_element(By.CSS_SELECTOR, "#leaderboard-table tbody tr")
        assert first.rect["y"] + first.rect["height"] <= 900
        for table in ("comparisons-table", "floors-table"):
            box = driver.find_element(By.ID, table).rect
            assert box["x"] + box["width"] <= width, table
        assert driver.execute_script(OVERLAPS) == []
        # The toggle shows the domains, must succeed and must refuse, without a script.
        hidden = [h for h in headers if not h.is_displayed()]
        assert {"university", "must succeed", "must refuse"} <= {
            h.get_attribute("textContent") for h in hidden
        }
        driver.find_element(By.CSS_SELECTOR, "label[for=show-detail]").click()
        assert all(h.is_displayed() for h in headers)
        assert not [line for line in driver.get_log("browser") if line["level"] == "SEVERE"]
        wanted = os.environ.get("SOPBENCH_SCREENSHOT_DIR")
        if wanted:
            driver.find_element(By.CSS_SELECTOR, "label[for=show-detail]").click()
            driver.save_screenshot(os.path.join(wanted, "report.png"))
