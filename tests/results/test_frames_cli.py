"""``sopbench evaluate --format parquet`` and ``sopbench export --format parquet``: the file reads back
equal to ``episodes_frame`` of the same sources; it is never standard output; without the extra
``frames`` the verb says which to install and writes nothing."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def pd():
    pytest.importorskip(
        "pyarrow", reason="the frames extra is not installed (pip install 'sopbench[frames]')"
    )
    return pytest.importorskip(
        "pandas", reason="the frames extra is not installed (pip install 'sopbench[frames]')"
    )


def test_evaluate_writes_the_episodes_frame_and_prints_the_same_summary(
    pd, trajectories, run_folders, cli, tmp_path
):
    from sopbench.results import episodes_frame

    parquet, jsonl = tmp_path / "verdicts.parquet", tmp_path / "verdicts.jsonl"
    sources = [str(trajectories), str(run_folders)]
    done = cli(
        "evaluate", *sources, "--protocol", "sopbench", "--format", "parquet", "-o", str(parquet), "--json"
    )
    assert done.returncode == 0, done.stderr
    written = pd.read_parquet(parquet)
    pd.testing.assert_frame_equal(written, episodes_frame([trajectories, run_folders], "sopbench"))
    assert len(written) == 14 and set(written["protocol"]) == {"sopbench"}
    lines = cli("evaluate", *sources, "--protocol", "sopbench", "-o", str(jsonl), "--json")
    assert json.loads(done.stdout) == json.loads(lines.stdout)  # the same summary either way
    assert [json.loads(line)["task_id"] for line in jsonl.read_text().splitlines()] == list(
        written["task_id"]
    )


def test_export_writes_the_run_folders_episodes(pd, run_folders, cli, tmp_path):
    from sopbench.results import episodes_frame

    folder, target = run_folders / "no-verify", tmp_path / "episodes.parquet"
    done = cli("export", str(folder), "--format", "parquet", "-o", str(target))
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == f"exported 6 episodes to {target}"
    written = pd.read_parquet(target)
    pd.testing.assert_frame_equal(written, episodes_frame(folder))
    assert set(written["agent"]) == {"no-verify"} and set(written["env_mode"]) == {"prompt"}


@pytest.mark.parametrize(
    ("verb", "output"),
    [("evaluate", ["-o", "-"]), ("export", ["-o", "-"]), ("export", [])],  # export's default is stdout
)
def test_parquet_is_never_written_to_standard_output(verb, output, run_folders, cli):
    done = cli(verb, str(run_folders / "reference"), "--format", "parquet", *output)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: --format parquet writes a binary file: name it with --output FILE (not standard output)"
    ]


@pytest.mark.parametrize("verb", ["evaluate", "export"])
def test_without_the_extra_the_verb_names_it_and_writes_nothing(verb, run_folders, tmp_path, without_frames):
    target = tmp_path / "episodes.parquet"
    argv = [verb, str(run_folders / "reference"), "--format", "parquet", "-o", str(target)]
    done = without_frames(
        f"import sys\nsys.argv = ['sopbench', *{argv!r}]\nfrom sopbench.cli import main\nmain()\n"
    )
    assert done.returncode == 2 and not target.exists()
    assert done.stderr.splitlines() == [
        "error: --format parquet needs the frames extra (pandas, pyarrow not installed): "
        "pip install 'sopbench[frames]'"
    ]
