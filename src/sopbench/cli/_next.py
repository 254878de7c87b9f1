"""What a verb suggests doing next with what it wrote."""

from __future__ import annotations

import shlex
from pathlib import Path


def next_steps(output: Path) -> list[str]:
    """Where the results are and the three commands that show them (``run`` ends with these)."""
    folder, name = shlex.quote(str(output)), output.name or "run"
    return [
        f"results: {output / 'results.sqlite'}",
        "next: browse the episodes, write one HTML page, export one line per episode:",
        f"  sopbench view {folder}",
        f"  sopbench report {folder} --output {shlex.quote(name + '-report.html')}",
        f"  sopbench export {folder} --format jsonl --output {shlex.quote(name + '-episodes.jsonl')}",
    ]
