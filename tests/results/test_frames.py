"""``sopbench.results.episodes_frame`` and ``configurations_frame`` (the extra ``frames``): fixed
columns and dtypes, the values of ``sopbench evaluate``'s lines and ``sopbench leaderboard``'s rows,
and a Parquet file that reads back equal."""

from __future__ import annotations

import io
import json
import math

import pytest

pd = pytest.importorskip(
    "pandas", reason="the frames extra is not installed (pip install 'sopbench[frames]')"
)
pytest.importorskip("pyarrow", reason="the frames extra is not installed (pip install 'sopbench[frames]')")

from sopbench.results import (  # noqa: E402 - after the skip: these load pandas
    CONFIGURATION_COLUMNS,
    EPISODE_COLUMNS,
    ScoringOptions,
    Sources,
    configurations_frame,
    episodes_frame,
    scores_frame,
    write_parquet,
)
from sopbench.scoring import PUBLISHED_CHECKS, SOPBENCH, RunScore  # noqa: E402
from sopbench.statistics import Configuration, Usage  # noqa: E402

JUDGEMENTS = ["database", "permission", "procedure", "passed"]
SETTINGS = ["env_mode", "shuffle_tools", "constraint_format", "default_sop"]
USAGE = ["prompt_tokens", "completion_tokens", "user_prompt_tokens", "user_completion_tokens", "latency_s"]


def dtypes(frame) -> list[tuple[str, str]]:
    return [(name, str(dtype)) for name, dtype in frame.dtypes.items()]


def plain(value):
    """A frame's cell as JSON gives it: <NA> is None, numpy scalars are Python's."""
    if value is pd.NA:
        return None
    return value.item() if hasattr(value, "item") else value


@pytest.fixture
def both(trajectories, run_folders):
    """A trajectory file (2 runs) and two run folders (6 episodes each)."""
    return Sources.of([trajectories, run_folders])


def test_one_row_per_episode_in_fixed_columns_and_dtypes(both):
    frame = episodes_frame(both)
    assert dtypes(frame) == list(EPISODE_COLUMNS)
    assert len(frame) == 2 + 12 and list(frame.index) == list(range(14))
    names = list(frame.columns)
    # the configuration first, the verdict as an evaluate line orders it, the cost last
    assert names[:5] == ["agent", "model", "tool_mode", "tool_list", "user"] and names[5:9] == SETTINGS
    verdict = names[names.index("database") :][:11]
    assert verdict[:4] == JUDGEMENTS and sorted(verdict[4:]) == sorted(PUBLISHED_CHECKS)
    assert names[-6:] == [*USAGE, "cost_usd"]
    # no source at all: the same columns and dtypes, no row
    empty = episodes_frame(Sources())
    assert dtypes(empty) == list(EPISODE_COLUMNS) and len(empty) == 0


def test_values_agree_with_the_lines_of_evaluate(both, trajectories, run_folders, cli, tmp_path):
    for protocol in ("sound", "sopbench"):
        out = tmp_path / f"{protocol}.jsonl"
        done = cli("evaluate", str(trajectories), str(run_folders), "--protocol", protocol, "-o", str(out))
        assert done.returncode == 0, done.stderr
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        frame = episodes_frame([trajectories, run_folders], protocol)
        assert len(frame) == len(lines) == 14
        for line, (_, row) in zip(lines, frame.iterrows(), strict=True):
            flat = {
                key: value
                for key, value in line.items()
                if key not in ("verdict", "explanations", "artefacts")
            }
            flat.update(line["verdict"])
            assert {key: plain(row[key]) for key in flat} == flat


def test_run_folders_give_their_settings_and_usage_trajectory_files_none(both):
    frame = episodes_frame(both)
    recorded = frame[frame["agent"] == "recorded"]
    live = frame[frame["agent"] != "recorded"]
    assert len(recorded) == 2 and set(live["agent"]) == {"reference", "no-verify"}
    assert recorded[SETTINGS + USAGE + ["cost_usd"]].isna().all().all()
    assert list(recorded["model"]) == ["gpt-4o", "gpt-4o"] and list(recorded["record"]) == [0, 2]
    # a run folder's environment settings are its manifest's (the defaults here)
    assert set(live["env_mode"]) == {"prompt"} and not live["shuffle_tools"].any()
    assert set(live["constraint_format"]) == {"structured"} and set(live["default_sop"]) == {"full"}
    # a built-in agent calls no model: no token, but a measured latency; no price, no cost
    assert (live["prompt_tokens"] == 0).all() and live["latency_s"].notna().all()
    assert live["cost_usd"].isna().all() and live["model"].isna().all()
    assert set(live["should_succeed"]) == {True, False}
    # the reference agent follows every SOP; the no-verify one does not always
    assert live[live["agent"] == "reference"]["passed"].all()
    assert not live[live["agent"] == "no-verify"]["passed"].all()


def test_the_options_of_evaluate_go_through_whole(trajectories):
    first = episodes_frame(trajectories, ScoringOptions(protocol=SOPBENCH, justify_refusal=True))
    assert set(first["protocol"]) == {"sopbench"}
    refused = first[~first["should_succeed"]]
    assert (
        refused["justified_refusal"].notna().all()
        and first[first["should_succeed"]]["justified_refusal"].isna().all()
    )
    with pytest.raises(ValueError, match="unknown protocol 'strict'"):
        episodes_frame(trajectories, "strict")


def test_the_cost_of_a_priced_model_is_its_tokens_at_the_prices_given():
    score = RunScore(
        source="runs/x",
        domain="bank",
        record=0,
        run=0,
        protocol="sound",
        verdict=dict.fromkeys([*JUDGEMENTS, *PUBLISHED_CHECKS], True),
        explanations=(),
        justified_refusal=None,
        should_succeed=True,
        goal="g",
        task_id="bank/g[0]",
        configuration=Configuration("openai", "m", "fc", "full", "none"),
        usage=Usage(agent_prompt_tokens=1_000_000, agent_completion_tokens=500_000, latency_s=2.5),
    )
    frame = scores_frame([score], {"m": (1.0, 4.0)})
    assert frame.loc[0, "cost_usd"] == pytest.approx(3.0) and frame.loc[0, "prompt_tokens"] == 1_000_000
    assert frame.loc[0, "latency_s"] == 2.5 and frame.loc[0, "user_prompt_tokens"] == 0
    assert scores_frame([score]).loc[0, "cost_usd"] is pd.NA  # no price, no cost
    assert frame.loc[0, "env_mode"] is pd.NA  # not read from a run folder given


def test_a_parquet_file_reads_back_equal(both):
    for frame in (episodes_frame(both), configurations_frame(both, ScoringOptions(min_cases=0))):
        sink = io.BytesIO()
        write_parquet(frame, sink)
        back = pd.read_parquet(io.BytesIO(sink.getvalue()))
        pd.testing.assert_frame_equal(back, frame, check_dtype=True, check_exact=True)


def test_configurations_mirror_the_rows_of_the_leaderboard(both, trajectories, run_folders, cli):
    frame = configurations_frame(both, ScoringOptions(min_cases=0))
    done = cli("leaderboard", str(trajectories), str(run_folders), "--format", "json", "--min-cases", "0")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    fixed = [(name, dtype) for name, dtype in CONFIGURATION_COLUMNS]
    domain_part = [(f"bank_{name}", dtype) for name, dtype in (("cases", "Int64"), ("passed", "Int64"))]
    assert dtypes(frame)[: len(fixed)] == fixed and dtypes(frame)[len(fixed) :][:2] == domain_part
    assert len(frame) == len(shown) == 4  # gpt-4o, reference, no-verify and the refuse-all floor
    for data, (_, row) in zip(shown, frame.iterrows(), strict=True):
        for key in ("rank", "model", "mode", "tool_list", "user", "folder", "floor", "pass_rate", "balanced"):
            assert plain(row[key]) == data[key], key
        overall = data["cells"]["Overall"]
        assert (plain(row["cases"]), plain(row["passed"])) == (overall["cases"], overall["passed"])
        assert [plain(row["pass_rate_ci_low"]), plain(row["pass_rate_ci_high"])] == data["pass_rate_ci95"]
        for name in ("should_succeed", "should_refuse"):
            assert plain(row[f"{name}_cases"]) == data[name]["total"]
            assert plain(row[f"{name}_rate"]) == data[name]["rate"]
            interval = data[name]["ci95"] or [None, None]  # no case, no interval
            assert [plain(row[f"{name}_ci_low"]), plain(row[f"{name}_ci_high"])] == interval
        bank = data["cells"]["bank"]
        assert [plain(row[f"bank_{key}"]) for key in ("cases", "passed", "rate")] == [
            bank["cases"],
            bank["passed"],
            bank["rate"],
        ]
        assert math.isclose(row["bank_ci_low"], bank["ci95"][0]) and math.isclose(
            row["bank_ci_high"], bank["ci95"][1]
        )
    assert frame["floor"].sum() == 1 and frame.loc[frame["floor"], "model"].item() == "refuse-all"
