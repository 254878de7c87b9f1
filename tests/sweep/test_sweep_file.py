"""The sweep file: checked whole before any episode, resumed, extended, and refused when changed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.runner import read_run
from sopbench.sweep import SweepError, expand, read_sweep

BASE = """
domains = ["bank"]
runs = 2
[limits]
limit = 2
[[agents]]
name = "reference"
agent = "reference"
[[agents]]
name = "refuse-all"
agent = "refuse-all"
"""


def write(tmp_path: Path, text: str, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def finished_at(folder: Path) -> list[str]:
    with sqlite3.connect(folder / "results.sqlite") as db:
        return sorted(row[0] for row in db.execute("SELECT finished_at FROM episodes"))


def sweep(*args: str):
    return CliRunner().invoke(app, ["sweep", *args])


def test_every_mistake_is_one_line_and_nothing_runs(tmp_path: Path) -> None:
    file = write(
        tmp_path,
        """
domains = ["bank"]
colour = "blue"
[[agents]]
name = "m"
agent = "openai"
model = "qwen"
[[agents]]
name = "m"
agent = "reference"
[matrix]
agents = ["m", "ghost"]
""",
    )
    result = sweep(str(file), "--output", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "unknown key colour" in result.output
    with pytest.raises(SweepError) as caught:
        expand(
            read_sweep(write(tmp_path, file.read_text().replace('colour = "blue"\n', ""), "b.toml")), tmp_path
        )
    lines = str(caught.value).splitlines()
    assert any("duplicate agent name 'm'" in line for line in lines)
    assert any("'m' (openai) has no endpoint" in line for line in lines)
    assert any("'ghost'" in line for line in lines)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_include_and_exclude_shape_the_matrix(tmp_path: Path) -> None:
    file = write(
        tmp_path,
        BASE
        + """
[matrix]
agents = ["reference", "refuse-all"]
tool_lists = ["full", "oracle"]
[[exclude]]
agent = "refuse-all"
[[include]]
agent = "refuse-all"
tool_list = "oracle"
""",
    )
    names = [c.name for c in expand(read_sweep(file), tmp_path / "out")]
    assert names == ["reference-full", "reference-oracle", "refuse-all-oracle"]


def test_rerun_resumes_adds_new_and_refuses_changed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    file = write(tmp_path, BASE + '[matrix]\nagents = ["reference"]\n')
    first = sweep(str(file), "--output", str(out), "--format", "json")
    assert first.exit_code == 0, first.output
    stored = read_run(out / "reference-full")
    assert len(stored.episodes) == 4
    rows = json.loads(first.stdout)
    assert any(row.get("model") == "reference" for row in rows)
    # The summary's refuse-all floor is played on the sweep's own tasks (its folders' manifests):
    # the 2 bank tasks, not a folder found from the working directory.
    floor = next(row for row in rows if row["floor"] and row["model"] == "refuse-all")
    assert floor["cells"]["Overall"]["cases"] == 2 and floor["unavailable"] is None
    finished = finished_at(out / "reference-full")

    again = sweep(str(file), "--output", str(out))
    assert again.exit_code == 0
    assert finished_at(out / "reference-full") == finished  # resumed: nothing played again

    file.write_text(BASE + '[matrix]\nagents = ["reference", "refuse-all"]\n', encoding="utf-8")
    added = sweep(str(file), "--output", str(out))
    assert added.exit_code == 0, added.output
    assert len(read_run(out / "refuse-all-full").episodes) == 4
    assert len(read_run(out / "reference-full").episodes) == 4

    file.write_text(BASE.replace("runs = 2", "runs = 2\nseed = 7") + '[matrix]\nagents = ["reference"]\n')
    changed = sweep(str(file), "--output", str(out))
    assert changed.exit_code == 2
    assert "changed configurations" in changed.output and "reference-full (seed)" in changed.output
    assert len(read_run(out / "reference-full").episodes) == 4


def test_builtin_example_is_valid() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "sweeps" / "builtin.toml"
    configurations = expand(read_sweep(example), Path("out"))
    assert [c.name for c in configurations] == ["reference-full", "no-verify-full", "refuse-all-full"]
    assert all(c.config.runs == 2 and c.config.domains == ("all",) for c in configurations)


def test_published_example_names_the_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    example = Path(__file__).resolve().parents[2] / "examples" / "sweeps" / "published.toml"
    names = [c.name for c in expand(read_sweep(example), Path("out"))]
    assert len(names) == 4 * 3 * 2 - 2  # two llama3.1-70b fc configurations excluded
    assert "llama3.1-70b-fc-full" not in names and "qwen2.5-72b-act-only-oracle" in names


def test_overrides_set_runs_seed_and_limits_per_configuration(tmp_path: Path) -> None:
    file = write(
        tmp_path,
        BASE
        + """
[matrix]
agents = ["reference", "refuse-all"]
tool_lists = ["full", "oracle"]
[[override]]
agent = "refuse-all"
runs = 1
seed = 3
[override.limits]
limit = 1
max_turns = 8
[[override]]
tool_list = "oracle"
concurrency = 2
""",
    )
    configs = {c.name: c.config for c in expand(read_sweep(file), tmp_path / "out")}
    assert (
        configs["reference-full"].runs,
        configs["reference-full"].seed,
        configs["reference-full"].limit,
    ) == (2, 0, 2)
    refuse = configs["refuse-all-oracle"]
    assert (refuse.runs, refuse.seed, refuse.limit, refuse.max_turns, refuse.concurrency) == (1, 3, 1, 8, 2)
    assert configs["reference-oracle"].concurrency == 2 and configs["refuse-all-full"].concurrency == 8
    out = tmp_path / "out"
    assert sweep(str(file), "--output", str(out)).exit_code == 0
    assert len(read_run(out / "refuse-all-full").episodes) == 1  # one task, one run
    assert len(read_run(out / "reference-full").episodes) == 4


def test_an_override_that_matches_nothing_is_a_mistake(tmp_path: Path) -> None:
    file = write(
        tmp_path, BASE + '[matrix]\nagents = ["reference"]\n[[override]]\ntool_list = "oracle"\nruns = 3\n'
    )
    result = sweep(str(file), "--output", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "[[override]] entry 1 matches no configuration" in result.output


def test_the_user_table_gives_llm_users_their_model_and_options(tmp_path: Path) -> None:
    file = write(
        tmp_path,
        BASE
        + """
[user]
model = "user-model"
endpoint = "http://127.0.0.1:9/v1"
temperature = 0.5
max_tokens = 256
request_timeout = 30
[matrix]
agents = ["reference"]
users = ["none", "llm"]
""",
    )
    configs = {c.name: c.config for c in expand(read_sweep(file), tmp_path / "out")}
    assert configs["reference-full-llm"].user_options.model_dump(exclude_defaults=True) == {
        "model": "user-model",
        "base_url": "http://127.0.0.1:9/v1",
        "temperature": 0.5,
        "max_tokens": 256,
        "request_timeout": 30.0,
    }
    assert configs["reference-full"].user_options.arguments() == {}  # the fixed replies take no options


def test_an_unknown_user_key_is_one_line(tmp_path: Path) -> None:
    file = write(tmp_path, BASE + '[user]\nmodle = "x"\n[matrix]\nagents = ["reference"]\nusers = ["llm"]\n')
    result = sweep(str(file), "--output", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "modle" in result.output


def test_a_missing_user_model_is_named_as_the_file_spells_it(tmp_path: Path) -> None:
    file = write(tmp_path, BASE + '[matrix]\nagents = ["reference"]\nusers = ["llm"]\n')
    result = sweep(str(file), "--output", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "configuration reference-full-llm: user 'llm' needs [user] model" in result.output
