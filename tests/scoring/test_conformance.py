"""The compat protocol reproduces every recorded verdict of the published trajectories.

Every record with a recorded verdict is checked on its first run (the one the published evaluator
scored), all seven checks together, misaligned records included (the original scored them against
the task they are stored with). Bank files are scored with the card reading their verdicts were
computed with (bank_scoring_semantics.csv); with the shipped reading alone, every difference is in
a file that was scored with list-format cards.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

from sopbench.scoring import SOPBENCH, load_records, score_run
from sopbench.traces import PUBLISHED_CHECKS as CHECKS
from sopbench.traces import detect_output_format, iter_trajectory_files


def _card_readings(shared: Path) -> dict[str, str]:
    with open(shared / "sopbench" / "bank_scoring_semantics.csv", newline="") as handle:
        return {row["file"]: row["credit_cards_as_when_scored"] for row in csv.DictReader(handle)}


def _compare(trajectories: Path, cards_for) -> tuple[Counter, Counter, list[tuple[str, str, int, list[str]]]]:
    runs: Counter = Counter()
    equal: Counter = Counter()
    differences = []
    for path in iter_trajectory_files(trajectories):
        records = load_records(path)
        fmt = detect_output_format(records)
        cards = cards_for(path)
        for record in records:
            if not record.runs or not record.evaluations:
                continue
            recorded = record.evaluations[0]
            verdict = score_run(record, 0, SOPBENCH, output_format=fmt, credit_cards=cards).verdict
            wrong = [check for check in CHECKS if verdict[check] != getattr(recorded, check)]
            runs[record.domain] += 1
            if wrong:
                differences.append((record.domain, path.name, record.index, wrong))
            else:
                equal[record.domain] += 1
    return runs, equal, differences


def test_every_recorded_verdict_is_reproduced(shared_dir: Path, published_trajectories_dir: Path) -> None:
    readings = _card_readings(shared_dir)

    def cards_for(path: Path) -> str | None:
        if path.parent.name != "bank":
            return None
        return "list" if readings.get(path.name.removesuffix(".gz")) == "list" else "dict"

    runs, equal, differences = _compare(published_trajectories_dir, cards_for)
    assert sum(runs.values()) > 12_000
    assert set(runs) == {"bank", "dmv", "healthcare", "library", "university"}
    assert differences == []


def test_with_the_shipped_card_reading_only_list_scored_bank_files_differ(
    shared_dir: Path, published_trajectories_dir: Path
) -> None:
    readings = _card_readings(shared_dir)
    runs, equal, differences = _compare(published_trajectories_dir / "bank", lambda path: None)
    assert differences, "the list-scored files must differ somewhere under the shipped reading"
    for _domain, name, _index, _wrong in differences:
        assert readings[name.removesuffix(".gz")] == "list", name
