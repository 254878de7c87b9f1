"""The contract every verb keeps: nothing destroyed, exit codes a script can trust, one-line errors,
one document on stdout, full-width tables when piped, --problems, help that reads at 80 columns.

Small synthetic trajectory files (a few records) keep these fast; the published data is only used
by the Ctrl-C test in a subprocess, skipped when it is absent.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.scoring import QUIRKS

FILE_NAME = "ast_gpt-4o-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "sopbench"
runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def stderr_lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


@pytest.fixture
def trajectories(tmp_path, make_record) -> Path:
    """``runs/bank/<file>``: two valid records."""
    folder = tmp_path / "runs" / "bank"
    folder.mkdir(parents=True)
    (folder / FILE_NAME).write_text(json.dumps([make_record(), make_record()]))
    return tmp_path / "runs"


@pytest.fixture
def tasks_dir(tmp_path, make_task) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "bank_tasks.json").write_text(json.dumps({"get_account_balance": [make_task()]}))
    return folder


def sibling_temporaries(path: Path) -> list[Path]:
    return [p for p in path.parent.iterdir() if p.name.startswith(f".{path.name}.")]


# ---- exit codes ----------------------------------------------------------------------------------
def test_exit_0_when_every_input_was_read_and_scored(trajectories, tmp_path):
    out = tmp_path / "verdicts.jsonl"
    result = invoke("evaluate", trajectories, "-o", out)
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 2
    assert result.stderr == ""


def test_exit_1_when_a_file_was_skipped_and_every_problem_goes_to_the_problems_file(trajectories, tmp_path):
    for index in range(25):
        (trajectories / "bank" / f"broken{index:02}.json").write_text("{not json")
    out, problems = tmp_path / "verdicts.jsonl", tmp_path / "problems.txt"
    result = invoke("evaluate", trajectories, "-o", out, "--problems", problems)
    assert result.exit_code == 1
    assert len(out.read_text().splitlines()) == 2  # what could be scored is kept
    listed = problems.read_text().splitlines()
    assert len(listed) == 25 and all("broken" in line and "invalid JSON" in line for line in listed)
    shown = [line for line in stderr_lines(result) if line.startswith("skipped: ")]
    assert len(shown) == 20
    assert f"25 problems in all (all of them in {problems})" in result.stderr


def test_exit_1_when_there_is_nothing_to_do_and_the_output_is_left_alone(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "verdicts.jsonl"
    out.write_text("previous results\n")
    result = invoke("evaluate", empty, "-o", out)
    assert result.exit_code == 1
    assert stderr_lines(result) == [
        f"nothing to do: no trajectory file (.json, .json.gz) in {empty}; {out} not written"
    ]
    assert out.read_text() == "previous results\n"


def test_exit_1_when_diagnose_is_given_a_task_file_without_tasks(tmp_path):
    (tmp_path / "bank_tasks.json").write_text("{}")
    result = invoke("diagnose", "--tasks", "bank", "--tasks-dir", tmp_path)
    assert result.exit_code == 1
    assert "nothing to do" in result.stderr and "hold no task" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "xml"], "error: --format xml: choose markdown, csv or json"),
        (["--protocol", "strict"], "error: --protocol strict: unknown protocol"),
        (["--quirk", "nope"], "error: --quirk/--no-quirk: unknown quirk(s) nope"),
        (["--compare", "--format", "csv"], "error: --compare does not fit in one CSV table"),
    ],
)
def test_exit_2_with_one_line_for_a_bad_option(trajectories, args, message):
    result = invoke("leaderboard", trajectories, *args)
    assert result.exit_code == 2
    assert len(stderr_lines(result)) == 1 and stderr_lines(result)[0].startswith(message)
    assert result.stdout == ""


def test_an_invalid_bank_cards_value_is_a_usage_error_before_the_output_is_touched(trajectories, tmp_path):
    cards = tmp_path / "cards.csv"
    cards.write_text(f"file,credit_cards_as_when_scored\n{FILE_NAME},banana\n")
    out = tmp_path / "verdicts.jsonl"
    out.write_text("previous results\n")
    result = invoke("evaluate", trajectories, "--bank-cards", cards, "-o", out)
    assert result.exit_code == 2
    assert stderr_lines(result) == [
        f"error: --bank-cards {cards}: line 2: 'banana' for {FILE_NAME} is not a card reading (expected list or dict)"
    ]
    assert out.read_text() == "previous results\n"
    cards.write_text("nope\n")
    result = invoke("evaluate", trajectories, "--bank-cards", cards, "-o", out)
    assert result.exit_code == 2 and "missing column(s)" in result.stderr
    assert out.read_text() == "previous results\n"


def test_exit_130_after_an_interrupt_leaves_the_existing_output_as_it_was(
    trajectories, tmp_path, monkeypatch
):
    import sopbench.results

    real = sopbench.results.evaluate

    def interrupted(sources, options, write, **rest):
        def write_then_stop(score):
            write(score)
            raise KeyboardInterrupt

        return real(sources, options, write_then_stop, **rest)

    monkeypatch.setattr(sopbench.results, "evaluate", interrupted)
    out = tmp_path / "verdicts.jsonl"
    out.write_text("previous results\n")
    result = invoke("evaluate", trajectories, "-o", out)
    assert result.exit_code == 130
    assert stderr_lines(result) == [
        f"interrupted: 0 of 1 files scored; not written: {out} (an existing file is left as it was)"
    ]
    assert out.read_text() == "previous results\n"
    assert sibling_temporaries(out) == []


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/sopbench not found: published data needed")
def test_ctrl_c_in_a_real_process_keeps_the_old_output_and_leaves_no_partial_file(tmp_path):
    out = tmp_path / "verdicts.jsonl"
    out.write_text("previous results\n")
    command = [sys.executable, "-m", "sopbench.cli", "evaluate", str(SHARED / "trajectories"), "-o", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(p.stat().st_size for p in sibling_temporaries(out)) and time.monotonic() < deadline:
        time.sleep(0.05)  # wait until the verdicts are being written
    assert process.poll() is None, "finished before it could be interrupted"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert stderr.strip().startswith("interrupted: ") and "files scored" in stderr
    assert out.read_text() == "previous results\n"
    assert sibling_temporaries(out) == []


# ---- nothing is destroyed ------------------------------------------------------------------------
@pytest.mark.parametrize("spelling", ["same", "dotdot", "symlink"])
def test_an_output_that_is_one_of_the_inputs_is_refused(trajectories, spelling):
    file = trajectories / "bank" / FILE_NAME
    before = file.read_bytes()
    target = {
        "same": file,
        "dotdot": trajectories / "bank" / ".." / "bank" / FILE_NAME,
        "symlink": trajectories.parent / "link.json",
    }[spelling]
    if spelling == "symlink":
        target.symlink_to(file)
    result = invoke("evaluate", trajectories, "-o", target)
    assert result.exit_code == 2
    assert stderr_lines(result) == [
        f"error: --output {target} is also an input (argument); writing it would destroy the input: "
        "choose another output name"
    ]
    assert file.read_bytes() == before


def test_problems_file_may_not_be_the_output(trajectories, tmp_path):
    out = tmp_path / "out.jsonl"
    result = invoke("evaluate", trajectories, "-o", out, "--problems", out)
    assert result.exit_code == 2 and "name the same file" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("missing/out.jsonl", "folder {base}/missing does not exist (create it first)"),
        ("afile/out.jsonl", "{base}/afile is not a folder"),
        ("adir", "is a folder; name a file inside it"),
    ],
)
def test_an_output_that_cannot_be_written_is_one_line(trajectories, tmp_path, where, message):
    (tmp_path / "afile").write_text("")
    (tmp_path / "adir").mkdir()
    target = tmp_path / where
    result = invoke("evaluate", trajectories, "-o", target)
    assert result.exit_code == 2
    (line,) = stderr_lines(result)
    assert line.startswith(f"error: --output {target}: ") and line.endswith(message.format(base=tmp_path))


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_output_in_a_read_only_folder_is_one_line(trajectories, tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = invoke("evaluate", trajectories, "-o", folder / "out.jsonl")
    finally:
        folder.chmod(0o755)
    assert result.exit_code == 2
    assert stderr_lines(result) == [
        f"error: --output {folder / 'out.jsonl'}: folder {folder} is not writable (choose another place)"
    ]


def test_a_place_that_refuses_the_file_is_one_line(trajectories, tmp_path, monkeypatch):
    # What a read-only file system does even to root: creating the file fails.
    import tempfile

    def refuse(*_args, **_kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    out = tmp_path / "out.jsonl"
    result = invoke("evaluate", trajectories, "-o", out)
    assert result.exit_code == 2
    assert stderr_lines(result) == [f"error: --output {out}: cannot write (Permission denied)"]


def test_a_new_output_gets_ordinary_permissions_and_an_old_one_keeps_its_own(trajectories, tmp_path):
    fresh, kept = tmp_path / "fresh.jsonl", tmp_path / "kept.jsonl"
    kept.write_text("")
    kept.chmod(0o640)
    assert invoke("evaluate", trajectories, "-o", fresh).exit_code == 0
    assert invoke("evaluate", trajectories, "-o", kept).exit_code == 0
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask
    assert kept.stat().st_mode & 0o777 == 0o640


def test_dash_means_standard_output(trajectories, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("evaluate", trajectories, "-o", "-")
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["record"] for line in lines] == [0, 1]
    assert "2 runs scored" in result.stderr  # the summary moves out of the way of the data
    assert not (tmp_path / "-").exists()
    both = invoke("evaluate", trajectories, "-o", "-", "--json")
    assert both.exit_code == 2 and "both print on standard output" in both.stderr


# ---- one-line errors -----------------------------------------------------------------------------
@pytest.mark.parametrize("verb", ["diagnose", "leaderboard"])
def test_a_bad_task_file_is_one_line(trajectories, tmp_path, verb):
    bad = tmp_path / "badtasks"
    bad.mkdir()
    (bad / "bank_tasks.json").write_text("{broken")
    args = (
        ["--tasks", "bank", "--tasks-dir", bad] if verb == "diagnose" else [trajectories, "--tasks-dir", bad]
    )
    result = invoke(verb, *args)
    assert result.exit_code == 2
    (line,) = stderr_lines(result)
    assert line.startswith(f"error: --tasks-dir {bad}: ") and "bank_tasks.json: invalid JSON" in line


def test_a_missing_task_file_names_what_was_expected(tmp_path):
    result = invoke("diagnose", "--tasks", "dmv", "--tasks-dir", tmp_path)
    assert result.exit_code == 2
    assert "no task file for dmv (expected dmv_tasks.json.gz or dmv_tasks.json)" in result.stderr


def test_debug_shows_the_traceback(trajectories, tmp_path):
    plain = invoke("evaluate", trajectories, "-o", tmp_path / "missing" / "out.jsonl")
    debug = invoke("--debug", "evaluate", trajectories, "-o", tmp_path / "missing" / "out.jsonl")
    assert "Traceback" not in plain.stderr and len(stderr_lines(plain)) == 1
    assert debug.exit_code == 2 and "Traceback (most recent call last)" in debug.stderr
    assert stderr_lines(debug)[-1] == stderr_lines(plain)[0]


# ---- machine-readable stays machine-readable -----------------------------------------------------
def test_compare_prints_exactly_one_json_document(trajectories, tasks_dir):
    result = invoke("leaderboard", trajectories, "--tasks-dir", tasks_dir, "--compare", "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)  # raises on a second document
    assert set(document) == {"leaderboard", "comparison"}
    assert document["comparison"]["runs"] == 2 and set(document["comparison"]["quirk_flips"]) == set(QUIRKS)


def test_compare_in_markdown_is_one_text_on_stdout(trajectories, tasks_dir):
    result = invoke("leaderboard", trajectories, "--tasks-dir", tasks_dir, "--compare")
    assert result.exit_code == 0, result.output
    assert "sound vs sopbench on 2 runs" in result.stdout and "| quirk |" in result.stdout
    assert "━" not in result.stdout and "┃" not in result.stdout


def _run_piped(*args: str, columns: int = 40) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run(
        [sys.executable, "-m", "sopbench.cli", *args], capture_output=True, text=True, env=env
    )


def test_tables_written_to_a_pipe_are_full_width_markdown(trajectories, tmp_path):
    long_domain = trajectories / "bank" / ("x" * 70 + "-" + FILE_NAME)
    (trajectories / "bank" / FILE_NAME).rename(long_domain)
    result = _run_piped("evaluate", str(trajectories), "-o", str(tmp_path / "out.jsonl"))
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout
    assert (
        "| bank | 2 | 0.00% [0.0-65.8] | 0.00% (0/2) [0.0-65.8] | - | 0.00% [0.0-65.8] | 0 | 0 | 2 |"
        in result.stdout
    )
    assert f"wrote {tmp_path / 'out.jsonl'}" in result.stdout.splitlines()  # never hard-wrapped


def test_messages_never_hard_wrap_file_names(trajectories, tmp_path):
    broken = trajectories / "bank" / ("broken-" + "y" * 80 + ".json")
    broken.write_text("{")
    result = _run_piped("evaluate", str(trajectories), "-o", str(tmp_path / "out.jsonl"))
    assert result.returncode == 1
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped: ")]
    assert len(skipped) == 1 and broken.name in skipped[0]


def test_json_summary_is_one_document(trajectories, tmp_path):
    result = invoke("evaluate", trajectories, "-o", tmp_path / "out.jsonl", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["report"]["scored"] == 2


# ---- leaderboard rows ----------------------------------------------------------------------------
def test_two_folders_with_the_same_file_names_never_pool(trajectories, tmp_path, make_record, tasks_dir):
    other = tmp_path / "other" / "bank"
    other.mkdir(parents=True)
    (other / FILE_NAME).write_text(json.dumps([make_record()]))
    result = invoke(
        "leaderboard",
        trajectories,
        tmp_path / "other",
        "--tasks-dir",
        tasks_dir,
        "--format",
        "json",
        "--min-cases",
        "0",
    )
    assert result.exit_code == 0, result.output
    rows = [row for row in json.loads(result.stdout) if row["model"] == "gpt-4o"]
    assert sorted((row["folder"], row["cells"]["bank"]["cases"]) for row in rows) == [
        (tmp_path.joinpath("other").as_posix(), 1),
        (trajectories.as_posix(), 2),
    ]
    markdown = invoke(
        "leaderboard", trajectories, tmp_path / "other", "--tasks-dir", tasks_dir, "--min-cases", "0"
    )
    assert f"| gpt-4o [{trajectories.as_posix()}] |" in markdown.stdout


def test_rows_with_few_cases_are_listed_apart_below_the_table(trajectories, tasks_dir):
    result = invoke("leaderboard", trajectories, "--tasks-dir", tasks_dir)
    assert result.exit_code == 0, result.output
    table, apart = result.stdout.split("Rows with fewer than 20 cases (not ranked):")
    assert "| gpt-4o |" not in table and "| gpt-4o | fc | full | - | 0.00 [0.0-65.8] (2) |" in apart
    ranked = invoke("leaderboard", trajectories, "--tasks-dir", tasks_dir, "--min-cases", "2")
    assert "Rows with fewer" not in ranked.stdout and "| gpt-4o | fc | full |" in ranked.stdout


# ---- help ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("verb", ["diagnose", "replay", "evaluate", "leaderboard", "compare", "quirks"])
def test_help_reads_well_at_80_columns(verb):
    result = _run_piped(verb, "--help", columns=80)
    assert result.returncode == 0
    assert "…" not in result.stdout and "<list[" not in result.stdout and "<path>" not in result.stdout
    assert all(
        len(line) <= 80 for line in result.stdout.splitlines() if not line.lstrip().startswith("Example")
    )
    assert "--problems FILE" in result.stdout


def test_the_quirks_verb_lists_every_quirk():
    result = invoke("quirks", "--json")
    assert result.exit_code == 0
    assert [quirk["name"] for quirk in json.loads(result.stdout)] == list(QUIRKS)


def test_an_output_through_a_symlink_replaces_the_file_it_points_to(trajectories, tmp_path):
    real = tmp_path / "real.jsonl"
    real.write_text("previous results\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    assert invoke("evaluate", trajectories, "-o", link).exit_code == 0
    assert link.is_symlink() and len(real.read_text().splitlines()) == 2


def test_a_full_disk_while_writing_is_one_line_and_leaves_nothing_behind(trajectories, tmp_path, monkeypatch):
    import os as os_module

    def full(_fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os_module, "fsync", full)
    out = tmp_path / "out.jsonl"
    out.write_text("previous results\n")
    result = invoke("evaluate", trajectories, "-o", out)
    assert result.exit_code == 1
    assert stderr_lines(result) == [f"error: --output {out}: cannot write (No space left on device)"]
    assert out.read_text() == "previous results\n" and sibling_temporaries(out) == []


def test_parsing_errors_are_one_line_with_exit_2(tmp_path):
    for args, expected in (
        (("evaluate", str(tmp_path)), "error: Missing option '--output'"),
        (("run", "--agent", "reference", "-o", str(tmp_path / "r"), "--concurrency", "0"), "'--concurrency'"),
        (("nosuchverb",), "No such command 'nosuchverb'"),
    ):
        result = _run_piped(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.count("\n") == 1 and expected in result.stderr, result.stderr
        assert "Traceback" not in result.stderr and result.stdout == ""


# ---- outputs that are not files, and outputs that are inputs --------------------------------------
def test_an_output_that_is_a_named_pipe_is_refused_not_replaced(trajectories, tmp_path):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    result = invoke("evaluate", trajectories, "-o", pipe)
    assert result.exit_code == 2
    assert stderr_lines(result) == [
        f"error: --output {pipe}: is a named pipe, not a file; name a regular file"
    ]
    assert stat.S_ISFIFO(pipe.stat().st_mode)


def test_generate_refuses_to_write_into_the_folder_it_compares_with(tmp_path):
    folder = tmp_path / "published"
    folder.mkdir()
    (folder / "bank_tasks.json").write_text('{"apply_credit_card": []}')
    before = (folder / "bank_tasks.json").read_bytes()
    result = invoke(
        "generate",
        "--domain",
        "bank",
        "--goals",
        "apply_credit_card",
        "--compare",
        folder,
        "--output",
        folder,
    )
    assert result.exit_code == 2
    assert stderr_lines(result) == [
        f"error: --output {folder} is also an input folder (--compare); writing into it could destroy the "
        "input: choose another output folder"
    ]
    assert (folder / "bank_tasks.json").read_bytes() == before and sorted(
        p.name for p in folder.iterdir()
    ) == ["bank_tasks.json"]


def test_generate_refuses_a_problems_file_that_is_one_of_its_outputs(tmp_path):
    out = tmp_path / "gen"
    out.mkdir()
    result = invoke(
        "generate",
        "--domain",
        "bank",
        "--goals",
        "apply_credit_card",
        "--output",
        out,
        "--problems",
        out / "bank_tasks.json",
    )
    assert result.exit_code == 2
    assert stderr_lines(result) == [
        f"error: --problems and --output name the same file {out / 'bank_tasks.json'}"
    ]
    assert list(out.iterdir()) == []


def test_generated_files_honour_the_umask(tmp_path):
    out = tmp_path / "gen"
    umask = os.umask(0o022)
    try:
        assert (
            invoke("generate", "--domain", "bank", "--goals", "apply_credit_card", "--output", out).exit_code
            == 0
        )
    finally:
        os.umask(umask)
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()} == {
        "bank_tasks.json": 0o644,
        "bank_coverage.json": 0o644,
    }
