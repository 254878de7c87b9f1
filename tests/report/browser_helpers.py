"""What the report's browser tests share: the skip when Debian's chromium is missing (an error under
``SOPBENCH_REQUIRE_BROWSER=1``, as in ``.ci/run``), opening a page from file://, and the URLs it asked for."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

MISSING = "chromium and chromedriver are needed (Debian: apt-get install chromium chromium-driver)"
INSTALLED = (shutil.which("chromium") or shutil.which("chromium-browser")) is not None and shutil.which(
    "chromedriver"
) is not None
needs_browser = pytest.mark.skipif(
    not INSTALLED and os.environ.get("SOPBENCH_REQUIRE_BROWSER") != "1", reason=MISSING
)


def requested_urls(driver: Any) -> list[str]:
    """Every URL the page asked for since the performance log was last read."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


@contextmanager
def report_in_chromium(
    start_chromium: Callable[[], Any], html: str, folder: Path, viewport: tuple[int, int] | None = None
) -> Iterator[Any]:
    """The page written to ``folder``/report.html and opened from file:// in a new headless chromium
    (``viewport``: its exact size in CSS pixels), quit afterwards."""
    pytest.importorskip("selenium.webdriver")
    page = folder / "report.html"
    page.write_text(html)
    driver = start_chromium()
    try:
        if viewport is not None:
            metrics = {"width": viewport[0], "height": viewport[1], "deviceScaleFactor": 1, "mobile": False}
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        driver.get(page.as_uri())
        yield driver
    finally:
        driver.quit()
