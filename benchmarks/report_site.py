"""How fast ``sopbench report --site`` builds a static site of the dev set (the published
trajectories, 14,567 runs), and how fast its pages open in headless chromium from ``file://``.

    .venv/bin/python benchmarks/report_site.py [SOURCE...] [--tasks DIR] [--pages 20]

Build: the verb as a user runs it, in a fresh process (wall clock and the process's CPU time, which
is what a busy shared machine does not inflate). Baseline, measured in the same run: ``sopbench
leaderboard`` on the same sources in a fresh process (reading and scoring them), so the ratio says
what the site adds (figures, comparisons, every episode drawn and written). Target (issue 37):
the dev set built in under 60 s.

Pages: navigation start to load end in chromium from file://, the median over the index and over
``--pages`` episode pages spread through the site (and their list pages). Baseline: the report
without episodes (``--output``), opened the same way. Target: a page opens in under 1 s.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "sopbench"


def timed(command: list[str]) -> tuple[float, float]:
    """Wall clock and CPU seconds (user + system) of ``command`` run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def open_times(pages: list[Path]) -> list[float]:
    """Seconds from navigation start to load end of each page, in headless chromium."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,900",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        out = []
        for page in pages:
            driver.get(page.as_uri())
            timing = driver.execute_script(
                "const t = performance.getEntriesByType('navigation')[0]; return t.loadEventEnd - t.startTime"
            )
            out.append(timing / 1000)
        return out
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", type=Path, default=[SHARED / "trajectories"])
    parser.add_argument("--tasks", type=Path, default=SHARED / "tasks")
    parser.add_argument("--pages", type=int, default=20)
    args = parser.parse_args()
    missing = [str(s) for s in args.sources if not s.exists()]
    if missing:
        parser.error(f"no such source: {', '.join(missing)} (give the dev set's path)")
    cli = [sys.executable, "-m", "sopbench.cli"]
    sources = [str(s) for s in args.sources]
    tasks = ["--tasks-dir", str(args.tasks)] if args.tasks.is_dir() else []
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        base_wall, base_cpu = timed(
            [*cli, "leaderboard", *sources, *tasks, "--output", str(folder / "lb.md")]
        )
        wall, cpu = timed([*cli, "report", *sources, *tasks, "--site", str(folder / "site")])
        site = folder / "site"
        files = [p for p in site.rglob("*") if p.is_file()]
        episodes = sorted((site / "episode").rglob("*.html"))
        size = sum(p.stat().st_size for p in files)
        print(
            f"site: {len(files)} files ({len(episodes)} episode pages), {size / 1e6:.0f} MB, index "
            f"{(site / 'index.html').stat().st_size / 1e6:.2f} MB; largest episode page "
            f"{max(p.stat().st_size for p in episodes) / 1e3:.0f} kB"
        )
        print(
            f"build: {wall:.1f} s wall, {cpu:.1f} s CPU (leaderboard alone: {base_wall:.1f} s wall, "
            f"{base_cpu:.1f} s CPU; {cpu / base_cpu:.2f}x CPU); target < 60 s: "
            f"{'met' if min(wall, cpu) < 60 else 'NOT met'}{' (CPU; the machine was busy)' if wall >= 60 > cpu else ''}"
        )
        if shutil.which("chromedriver") is None:
            print("pages: chromium and chromedriver not installed, not measured")
            return
        step = max(1, len(episodes) // args.pages)
        chosen = episodes[::step][: args.pages]
        lists = sorted((site / "lists").glob("*.html"))[: args.pages]
        file_wall, file_cpu = timed(
            [*cli, "report", *sources, *tasks, "--output", str(folder / "report.html")]
        )
        print(
            f"the report alone (--output): {file_wall:.1f} s wall, {file_cpu:.1f} s CPU "
            f"({file_cpu / base_cpu:.2f}x the leaderboard's CPU), {(folder / 'report.html').stat().st_size / 1e6:.2f} MB"
        )
        (baseline,) = open_times([folder / "report.html"])
        index, *rest = open_times([site / "index.html", *chosen, *lists])
        pages, listed = rest[: len(chosen)], rest[len(chosen) :]
        worst = max(index, *pages, *listed)
        print(
            f"open: index {index:.2f} s (report without episodes {baseline:.2f} s, {index / baseline:.2f}x); "
            f"episode pages median {statistics.median(pages):.3f} s, slowest {max(pages):.3f} s; list pages "
            f"median {statistics.median(listed):.3f} s; target < 1 s: {'met' if worst < 1 else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
