"""Without a terminal, a run reports progress as plain lines at a steady pace."""

from __future__ import annotations

import io
import subprocess
import sys

from sopbench.runner import Progress
from sopbench.runner.frontend import PlainProgress, progress_line


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_line_says_done_passed_infra_errors_elapsed_and_eta():
    progress = Progress(total=40, skipped=0, done=10, scored=9, passed=4, infra_errors=1)
    line = progress_line(progress, 125.0)
    assert line == "progress: 10/40 episodes, 4 passed of 9 scored, 1 infra error, elapsed 2m05s, ETA 6m15s"


def test_lines_come_every_5_percent_after_a_quiet_first_interval():
    clock, stream = Clock(), io.StringIO()
    reporter = PlainProgress(stream, interval=30.0, clock=clock)
    reporter.started = 0.0
    progress = Progress(total=100)
    for done in range(1, 101):
        clock.now = done  # one episode per second
        progress.done = progress.scored = done
        reporter.update(progress)
    lines = stream.getvalue().splitlines()
    # nothing in the first 30 s, then one line per 5 episodes and the last
    assert lines[0].startswith("progress: 30/100 episodes")
    assert lines[-1].startswith("progress: 100/100 episodes") and lines[-1].endswith("ETA 0m00s")
    assert len(lines) == 15


def test_a_slow_run_still_reports_every_interval():
    stream = io.StringIO()
    with PlainProgress(stream, interval=0.05) as reporter:
        reporter.update(Progress(total=10))
        import time

        time.sleep(0.3)
    assert stream.getvalue().count("progress: 0/10 episodes") >= 3


def test_run_without_a_terminal_writes_plain_lines_not_a_bar(tmp_path):
    # a real process with stderr to a pipe; the interval is long, so only the final 5% steps can
    # print, and only after 30 s: a quick run writes no progress line at all
    done = subprocess.run(
        [sys.executable, "-m", "sopbench.cli", "run", "--agent", "refuse-all", "--domain", "university",
         "--limit", "3", "--output", str(tmp_path / "r"), "--no-baselines"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "progress:" not in done.stderr and "\x1b[" not in done.stderr
