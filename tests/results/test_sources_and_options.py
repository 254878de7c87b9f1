"""``Sources`` (what a use case reads: found and checked once) and ``ScoringOptions`` (how it is
scored: one frozen value, the bank card reading inside it)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from sopbench.results import ScoringOptions, Sources, evaluate, read_card_choices
from sopbench.scoring import SOPBENCH, SOUND
from sopbench.tasks import LoadError

FILE_NAME = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"
# A published bank file whose sopbench verdicts depend on how its credit cards are read.
BANK_FILE = "ast_gpt-4o-mode_act-only-dep_full-fmt_structured-tool_full-shuffle_False.json.gz"


def test_sources_find_run_folders_at_any_depth_and_files_outside_them(run_folders, trajectories):
    found = Sources.of([run_folders, trajectories])
    assert found.run_folders == (run_folders / "no-verify", run_folders / "reference")
    assert found.files == (trajectories / "bank" / FILE_NAME,) and len(found) == 3


def test_a_run_folders_export_is_read_once(run_folders, trajectories):
    """``Sources.of`` leaves out a trajectory file inside a run folder it found (the folder's own
    export); given both by hand, the file is refused, named."""
    folder = run_folders / "reference"
    export = folder / "trajectories" / "bank" / FILE_NAME
    export.parent.mkdir(parents=True, exist_ok=True)
    export.write_bytes((trajectories / "bank" / FILE_NAME).read_bytes())
    try:
        assert Sources.of([folder]) == Sources(run_folders=(folder,))
        with pytest.raises(ValueError, match=f"^{export}: a trajectory file inside a run folder given too"):
            Sources(run_folders=(folder,), files=(export,))
    finally:
        export.unlink()
        export.parent.rmdir()
        export.parent.parent.rmdir()


def test_scoring_options_are_one_frozen_checked_value():
    options = ScoringOptions(protocol=SOPBENCH, runs="first")
    assert options.first_runs_only and not ScoringOptions().first_runs_only
    assert ScoringOptions().protocol == SOUND and ScoringOptions().min_cases == 20
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.runs = "all"  # type: ignore[misc]
    with pytest.raises(ValueError, match="runs='some'"):
        ScoringOptions(runs="some")
    with pytest.raises(ValueError, match="min_cases=-1"):
        ScoringOptions(min_cases=-1)


def test_card_choices_are_validated(tmp_path):
    good = tmp_path / "cards.csv"
    good.write_text(f"file,credit_cards_as_when_scored\n{FILE_NAME},dict\n")
    choose = read_card_choices(good)
    assert choose(Path("bank") / (FILE_NAME + ".gz")) == "dict" and choose(Path("other.json")) is None
    bad = tmp_path / "bad.csv"
    bad.write_text(f"file,credit_cards_as_when_scored\n{FILE_NAME},banana\n")
    with pytest.raises(LoadError, match="line 2: 'banana'"):
        read_card_choices(bad)


def test_the_card_reading_in_the_options_changes_the_bank_verdicts_as_bank_cards_does(
    published_trajectories_dir, tmp_path, cli
):
    file = published_trajectories_dir / "bank" / BANK_FILE
    passed = {}
    for reading in ("list", "dict"):
        cards = tmp_path / f"{reading}.csv"
        cards.write_text(f"file,credit_cards_as_when_scored\n{BANK_FILE.removesuffix('.gz')},{reading}\n")
        options = ScoringOptions(protocol=SOPBENCH, credit_cards=read_card_choices(cards))
        (summary,) = evaluate(Sources(files=(file,)), options).configurations
        passed[reading] = summary.summary.overall.passed
        done = cli(
            "evaluate",
            str(file),
            "--protocol",
            "sopbench",
            "--bank-cards",
            str(cards),
            "--json",
            "--output",
            str(tmp_path / "verdicts.jsonl"),
        )
        assert done.returncode == 0, done.stderr
        (shown,) = json.loads(done.stdout)["configurations"]
        assert shown["domains"]["all"]["passed"] == passed[reading]
    assert passed["list"] != passed["dict"]
