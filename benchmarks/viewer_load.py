"""How fast ``sopbench view`` is on a set of sources (by default the published dev trajectories,
14,567 runs): start-up, the first page, and filter changes, over HTTP and in a real browser.

    .venv/bin/python benchmarks/viewer_load.py [SOURCE...] [--protocol sound] [--repeat 5]

Start-up is measured from launching the process to the URL it prints (every episode read, scored
and indexed). The baseline, measured in the same run, is scoring the same sources with the library
alone in a fresh process (``score_paths``, or ``read_run`` and ``score_run`` for a run folder): the viewer's start-up cost beyond that is its own.
Pages are timed over HTTP (median of --repeat requests, each filter a different one) and, when
chromium and chromedriver are installed, in headless chromium (navigation start to load end).
Targets (issue 20): first page < 1 s after start-up, filter change < 300 ms.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEV_SET = REPO.parent / "shared" / "sopbench" / "trajectories"
FILTERS = [
    "?outcome=failed",
    "?domain=bank",
    "?domain=dmv&outcome=failed",
    "?judgement=procedure",
    "?kind=chain",
    "?judgement=database&domain=healthcare",
    "?outcome=passed&page=40",
    "?q=never+verified",
    "?task=bank/transfer_funds[3]",
]


def get(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as answer:
        answer.read()
    return time.perf_counter() - started


BASELINE = """
import sys, time
from pathlib import Path
from sopbench.runner import read_run
from sopbench.runner.store import STORE_NAME
from sopbench.scoring import protocol_by_name, score_paths, score_run
protocol = protocol_by_name(sys.argv[1])
started = time.perf_counter()
runs = 0
for source in map(Path, sys.argv[2:]):
    if (source / STORE_NAME).is_file():
        for episode in read_run(source).episodes:
            if episode.status == "completed":
                score_run(episode.record, 0, protocol)
                runs += 1
    else:
        runs += sum(1 for _ in score_paths(source, protocol))
print(time.perf_counter() - started, runs)
"""


def _address(url: str, number: int) -> str:
    """The stable address of the viewer's episode ``number`` (``/episode/<n>`` redirects there)."""
    page = 1 + number // 50
    listed = json.loads(urllib.request.urlopen(f"{url}api/episodes?page={page}", timeout=60).read())[
        "episodes"
    ]
    return listed[number % 50]["address"]


def baseline(sources: list[str], protocol: str) -> tuple[float, int]:
    """Reading and scoring the sources with the library alone, in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", BASELINE, protocol, *sources], capture_output=True, text=True, check=True
    )
    seconds, runs = out.stdout.split()
    return float(seconds), int(runs)


def in_browser(url: str) -> dict[str, float] | None:
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    load = "const t = performance.getEntriesByType('navigation')[0]; return t.loadEventEnd - t.startTime;"
    try:
        driver.get(url)
        first = driver.execute_script(load) / 1000
        Select(driver.find_element(By.NAME, "outcome")).select_by_value("failed")
        WebDriverWait(driver, 30).until(lambda d: "outcome=failed" in d.current_url)
        WebDriverWait(driver, 30).until(
            lambda d: d.execute_script("return document.readyState") == "complete"
        )
        WebDriverWait(driver, 30).until(lambda d: d.execute_script(load) > 0)
        changed = driver.execute_script(load) / 1000
        failed = (
            driver.find_element(By.ID, "episodes")
            .find_element(By.CSS_SELECTOR, "tbody tr a")
            .get_attribute("href")
        )
        driver.get(failed)
        episode = driver.execute_script(load) / 1000
    finally:
        driver.quit()
    return {"first page": first, "filter change": changed, "episode page": episode}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", default=[str(DEV_SET)])
    parser.add_argument("--protocol", default="sound")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    base_seconds, runs = baseline(args.sources, args.protocol)
    started = time.perf_counter()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sopbench.cli",
            "view",
            *args.sources,
            "--port",
            "0",
            "--protocol",
            args.protocol,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        startup = time.perf_counter() - started
        if "http://" not in line:
            raise SystemExit(f"the viewer did not start: {line!r} {process.stderr.read()}")
        url = line.split()[2]
        first = get(url)
        pages = [get(url)] + [get(url + "?page=2") for _ in range(args.repeat - 1)]
        filters = [get(url + FILTERS[i % len(FILTERS)]) for i in range(max(args.repeat, len(FILTERS)))]
        total = json.loads(urllib.request.urlopen(url + "api/episodes", timeout=60).read())["total"]
        addresses = [_address(url, i * 997 % total) for i in range(args.repeat)]
        episodes = [get(url.rstrip("/") + address) for address in addresses]
        browser = in_browser(url)
        peak_kb = next(
            (
                int(x.split()[1])
                for x in Path(f"/proc/{process.pid}/status").read_text().splitlines()
                if x.startswith("VmHWM")
            ),
            0,
        )
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    print(
        f"sources: {' '.join(args.sources)}; protocol {args.protocol}; {total} episodes shown, {runs} runs scored by the baseline"
    )
    print("| measure | seconds | against |")
    print("|---|---|---|")
    print(f"| baseline: scoring with the library alone (fresh process) | {base_seconds:.2f} | |")
    print(
        f"| start-up to the printed URL (read, score, index) | {startup:.2f} | {startup / base_seconds:.2f}x the baseline |"
    )
    print(f"| first page over HTTP | {first:.3f} | {first / 1.0:.2f} of the 1 s target |")
    print(f"| list page, median of {len(pages)} | {statistics.median(pages):.3f} | |")
    print(
        f"| filter change, median of {len(filters)} (max {max(filters):.3f}) | {statistics.median(filters):.3f} | {statistics.median(filters) / 0.3:.2f} of the 300 ms target |"
    )
    print(f"| episode page, median of {len(episodes)} | {statistics.median(episodes):.3f} | |")
    if browser is None:
        print("| in the browser | skipped: chromium/chromedriver not installed | |")
    else:
        print(
            f"| in chromium: first page load | {browser['first page']:.3f} | {browser['first page']:.2f} of the 1 s target |"
        )
        print(
            f"| in chromium: filter change (page load) | {browser['filter change']:.3f} | {browser['filter change'] / 0.3:.2f} of the 300 ms target |"
        )
        print(f"| in chromium: episode page load | {browser['episode page']:.3f} | |")
    print(f"| peak memory of the viewer | {peak_kb / 1024:.0f} MB | |")


if __name__ == "__main__":
    main()
