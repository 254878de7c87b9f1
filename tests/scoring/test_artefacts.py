"""Recording artefacts are named, not blamed on the agent: the salted-hash DMV licence number."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.scoring import ARTEFACTS, SOPBENCH, SOUND, recording_artefacts, score_paths

LICENCE = "dmv_licence_number_salted_hash"


def _db(number: str | None) -> dict:
    licence = None if number is None else {"dl_number": number, "legal_name": "A B", "address": "x"}
    return {"accounts": {"HIGH666": {"driver_license": licence, "tests": {}}}}


def test_a_licence_number_the_recording_issued_is_taken_from_the_recording():
    expected, names = recording_artefacts("dmv", _db("D3312621763"), _db("D4912165533"))
    assert names == (LICENCE,) and expected == _db("D4912165533")
    assert LICENCE in ARTEFACTS
    # Not a licence number issued on both sides (one side has none), or another domain: no artefact.
    assert recording_artefacts("dmv", _db(None), _db("D4912165533"))[1] == ()
    assert recording_artefacts("bank", _db("D3312621763"), _db("D4912165533"))[1] == ()
    assert recording_artefacts("dmv", _db("D3312621763"), _db("not a number"))[1] == ()


def test_sixteen_published_dmv_runs_pass_in_sound_and_keep_their_published_verdict(
    published_trajectories_dir: Path,
):
    dmv = published_trajectories_dir / "dmv"
    sound = Counter((s.passed, s.verdict["database"]) for s in score_paths(dmv, SOUND) if s.artefacts)
    assert sound == {(True, True): 16, (False, True): 8}
    assert not any(s.artefacts for s in score_paths(dmv, SOPBENCH))  # published verdicts kept


def test_evaluate_counts_the_artefacts_and_names_them_on_each_verdict(published_trajectories_dir, tmp_path):
    name = "ast_claude-3-5-sonnet-20241022-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json.gz"
    out = tmp_path / "verdicts.jsonl"
    result = CliRunner().invoke(
        app, ["evaluate", str(published_trajectories_dir / "dmv" / name), "-o", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    marked = [line for line in lines if line["artefacts"]]
    assert marked and all(line["artefacts"] == [LICENCE] for line in marked)
    assert json.loads(result.stdout)["artefacts"] == {LICENCE: len(marked)}
