"""What the Ray sweep tests read back from a sweep's run folders: the stored rows, even while the
sweep is still writing them, and a hash of the export without timings (equal for equal results)."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path

SOPBENCH = [sys.executable, "-c", "from sopbench.cli import main; main()"]


def rows(folder: Path) -> list[tuple[str, int, str]]:
    store = folder / "results.sqlite"
    if not store.exists():
        return []
    try:
        with sqlite3.connect(store, timeout=5) as db:
            return list(db.execute("SELECT task_id, run, status FROM episodes"))
    except sqlite3.OperationalError:  # the sweep holds the store at this moment: nothing to read yet
        return []


def export_hash(folder: Path) -> str:
    done = subprocess.run(
        [*SOPBENCH, "export", str(folder), "--no-timings", "-o", "-"], capture_output=True, check=True
    )
    return hashlib.sha256(done.stdout).hexdigest()
