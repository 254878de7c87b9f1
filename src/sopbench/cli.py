"""The ``sopbench`` command line. Each verb checks its options and paths, then calls one function of
``sopbench.report`` and prints what it returns; ``sopbench._output.verb`` keeps the contract shared
by every verb (outputs written whole or not at all, exit codes, one-line errors, ``--problems``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import orjson
import typer

from sopbench._output import (
    Job,
    OutputTarget,
    UserError,
    current_job,
    err_console,
    out_console,
    set_debug,
    verb,
)
from sopbench.tasks import LoadError

app = typer.Typer(
    name="sopbench",
    help="Measure whether tool-using LLM agents follow standard operating procedures (SOPBench).",
    no_args_is_help=True,
    add_completion=False,
    # Plain click help: it wraps to the terminal and never cuts option names or defaults.
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


@app.callback(
    epilog="Exit codes: 0 everything asked was done; 1 finished, but some input was skipped (each "
    "one named) or there was nothing to do; 2 usage error (bad option, or a path that cannot be "
    "used); 130 interrupted."
)
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of any error.")] = False,
) -> None:
    """Evaluate agent traces against SOPs: diagnose, replay, evaluate, leaderboard, quirks."""
    set_debug(debug)


DEFAULT_TASKS_DIR = Path("../shared/sopbench/tasks")
RUN_CHOICES = ("all", "first")

Paths = Annotated[
    list[Path],
    typer.Argument(metavar="PATH", help="Trajectory files (.json, .json.gz) or folders of them.", show_default=False),
]
Output = Annotated[
    Path, typer.Option("--output", "-o", metavar="FILE", help="Where to write; - is standard output.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the summary as one JSON document on stdout.")]
ProtocolName = Annotated[
    str, typer.Option("--protocol", metavar="NAME", help="sound (the default) or sopbench (the published evaluator).")
]
QuirkOn = Annotated[
    list[str] | None,
    typer.Option("--quirk", metavar="NAME", help="Turn a quirk on (repeatable; names: sopbench quirks).",
                 show_default=False),
]
QuirkOff = Annotated[
    list[str] | None,
    typer.Option("--no-quirk", metavar="NAME", help="Turn a quirk off (repeatable).", show_default=False),
]
BankCards = Annotated[
    Path | None,
    typer.Option("--bank-cards", metavar="FILE", show_default=False,
                 help="CSV file,credit_cards_as_when_scored (list or dict): the bank card reading per file."),
]
JustifiedRefusal = Annotated[
    bool,
    typer.Option("--require-justified-refusal", "--justify",
                 help="Also judge whether each correct refusal revealed a violated constraint."),
]


# ---- diagnose ------------------------------------------------------------------------------------
@verb(
    app,
    epilog="Examples: sopbench diagnose --seed 42;  "
    "sopbench diagnose --seed 42 --tasks all --tasks-dir ../shared/sopbench/tasks",
)
def diagnose(
    seed: Annotated[int, typer.Option(metavar="N", help="Seed of the constructed traces.")] = 42,
    per_kind: Annotated[int, typer.Option(metavar="N", min=1, help="Traces of each kind (built-in SOP).")] = 5,
    tasks: Annotated[
        str | None,
        typer.Option(metavar="DOMAINS", show_default=False,
                     help="Also build traces over published tasks: all, or domains separated by commas."),
    ] = None,
    tasks_dir: Annotated[
        Path, typer.Option(metavar="DIR", help="Folder of <domain>_tasks.json[.gz] files.")
    ] = DEFAULT_TASKS_DIR,
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as one JSON document.")] = False,
) -> None:
    """Self-check the evaluator on constructed traces whose verdicts are known in advance.

    Without --tasks: ten kinds of traces over a small built-in SOP. With --tasks: for every
    published task, a reference trace (must pass) and its mutants (skipped helper, swapped steps,
    wrong user, forbidden execution, refusal, claimed success, extra reads), scored with the sound
    protocol. Exits 1 on any unexpected verdict, or when the task files hold no task.
    """
    from sopbench.evaluation import DiagnosticFailure
    from sopbench.report import domains_of, load_domain_tasks, run_diagnosis

    job = current_job()
    task_list = None
    if tasks:
        try:
            domains = domains_of(tasks)
        except ValueError as exc:
            raise UserError(f"--tasks {tasks}: {exc}") from None
        job.inputs([tasks_dir], "--tasks-dir")
        task_list = _read_tasks("--tasks-dir", tasks_dir, lambda: load_domain_tasks(tasks_dir, domains))
        if not task_list:
            job.nothing_to_do(f"the task files in {tasks_dir} for {', '.join(domains)} hold no task")
            return
    try:
        with job.progress(len(task_list or ()), "diagnosed", unit="tasks") as advance:
            result = run_diagnosis(seed, per_kind=per_kind, tasks=task_list, progress=advance)
    except DiagnosticFailure as exc:
        raise UserError(f"diagnostic failed: {exc}", exit_code=1) from exc
    console = out_console()
    if as_json:
        sys.stdout.write(json.dumps(result.as_dict(), indent=2) + "\n")
    else:
        for table in result.tables():
            table.print(console)
        for note in result.notes():
            console.print(note, markup=False)
    for surprise in result.surprises:
        job.problem(surprise, kind="unexpected verdict")
    if not result.surprises and not as_json:
        console.print("every verdict is the expected one", markup=False)


def _read_tasks(option: str, where: Path, load):
    """Tasks from ``load()``; a task file that cannot be read is the user's to fix (one line, exit 2)."""
    try:
        return load()
    except LoadError as exc:
        raise UserError(f"{option} {where}: {exc}") from None


# ---- replay --------------------------------------------------------------------------------------
@verb(app, epilog="Example: sopbench replay ../shared/sopbench/trajectories --output replay.jsonl")
def replay(paths: Paths, output: Output, as_json: AsJson = False) -> None:
    """Re-execute recorded tool calls on fresh lenient systems and compare with the recordings.

    Writes one JSON line per run (source, domain, record, run, tool_outputs, final_database,
    errors, ...) and prints, per domain, how many tool outputs and final databases match the
    recorded ones. Runs whose conversation belongs to another task are counted as misaligned.
    """
    from sopbench.report import replay_files

    def produce(files, write, advance):
        result = replay_files(files, write, progress=advance, on_problem=current_job().problem)
        return result, result.runs

    _runs_to_jsonl(paths, output, as_json, "replayed", produce)


# ---- evaluate ------------------------------------------------------------------------------------
@verb(
    app,
    epilog="Example: sopbench evaluate ../shared/sopbench/trajectories --protocol sopbench "
    "--output verdicts.jsonl",
)
def evaluate(
    paths: Paths,
    output: Output,
    protocol: ProtocolName = "sound",
    quirk: QuirkOn = None,
    no_quirk: QuirkOff = None,
    require_justified_refusal: JustifiedRefusal = False,
    runs: Annotated[
        str, typer.Option(metavar="all|first", help="All runs of each record, or only the first (as published).")
    ] = "all",
    bank_cards: BankCards = None,
    as_json: AsJson = False,
) -> None:
    """Score recorded trajectories: one verdict per run, then a summary per domain.

    Each line of --output holds source, domain, record, run, protocol, the verdict (passed,
    database, permission, procedure and the seven published checks) and explanations. The summary
    gives runs, pass rate, the rates on tasks that must succeed and must be refused, their balanced
    mean, and failures by judgement. Records without a trajectory are counted and named, not
    scored.
    """
    from sopbench.report import evaluate_files

    job = current_job()
    chosen = _protocol(protocol, quirk, no_quirk)
    if runs not in RUN_CHOICES:
        raise UserError(f"--runs {runs}: choose all or first")
    cards = _card_choice(bank_cards)

    def produce(files, write, advance):
        result = evaluate_files(
            files, chosen, write, runs=runs, credit_cards=cards, justify_refusal=require_justified_refusal,
            progress=advance, on_problem=job.problem,
        )
        return result, result.runs_scored

    _runs_to_jsonl(paths, output, as_json, "scored", produce)


# ---- leaderboard ---------------------------------------------------------------------------------
@verb(
    app,
    epilog="Example: sopbench leaderboard ../shared/sopbench/trajectories --protocol sopbench "
    "--format markdown",
)
def leaderboard(
    paths: Paths,
    protocol: ProtocolName = "sound",
    quirk: QuirkOn = None,
    no_quirk: QuirkOff = None,
    output_format: Annotated[
        str, typer.Option("--format", metavar="markdown|csv|json", help="The document printed.")
    ] = "markdown",
    compare_protocols: Annotated[
        bool, typer.Option("--compare", help="Add sound vs sopbench per domain, and what each quirk flips.")
    ] = False,
    tasks_dir: Annotated[
        Path | None,
        typer.Option(metavar="DIR", show_default=False,
                     help="Task files for the refuse-all row (default: ../shared/sopbench/tasks when it "
                     "exists, else the tasks inside the records)."),
    ] = None,
    bank_cards: BankCards = None,
    require_justified_refusal: JustifiedRefusal = False,
    min_cases: Annotated[
        int, typer.Option(metavar="N", min=0, help="Rows with fewer cases are listed apart, not ranked.")
    ] = 20,
    output: Annotated[
        Path, typer.Option("--output", "-o", metavar="FILE", help="Where to write the table; - is stdout.")
    ] = Path("-"),
) -> None:
    """The published leaderboard recomputed from trajectory files.

    One row per (model, mode, tool list, user) configuration and folder, one column per domain and
    Overall (pooled over cases), each cell with the number of cases behind it (first run of each
    record), then the Overall pass rate split into tasks that must succeed and tasks that must be
    refused, and their balanced mean. A refuse-all baseline row is always included. Rows whose
    domains differ from those of the agents' rows together are marked and ranked after the others,
    so that Overall rates are compared over the same domains; rows with fewer than --min-cases
    cases are listed apart below the table.
    """
    from sopbench.report import (
        LEADERBOARD_FORMATS,
        build_leaderboard,
        records_without_trajectory,
        render_leaderboard,
    )
    from sopbench.tasks import iter_all_tasks

    job = current_job()
    chosen = _protocol(protocol, quirk, no_quirk)
    if output_format not in LEADERBOARD_FORMATS:
        raise UserError(f"--format {output_format}: choose markdown, csv or json")
    if compare_protocols and output_format == "csv":
        raise UserError("--compare does not fit in one CSV table: use --format json (one document) or markdown")
    cards = _card_choice(bank_cards)
    files = _trajectory_files(paths)
    target = job.output(output)
    if tasks_dir is not None:
        job.inputs([tasks_dir], "--tasks-dir")
    folder = tasks_dir if tasks_dir is not None else DEFAULT_TASKS_DIR
    baseline_tasks = None
    if tasks_dir is not None or folder.is_dir():
        baseline_tasks = _read_tasks("--tasks-dir", folder, lambda: list(iter_all_tasks(folder)))
    if not files:
        _nothing_found(paths)
        return
    if baseline_tasks is None:
        err_console().print(f"{folder} not found: the refuse-all row uses the tasks inside the records", markup=False)
    passes = 2 if compare_protocols else 1
    with job.progress(passes * len(files), "scored") as advance:
        report = build_leaderboard(
            files, chosen, tasks=baseline_tasks, credit_cards=cards, justify_refusal=require_justified_refusal,
            compare_protocols=compare_protocols, min_cases=min_cases, progress=advance, on_problem=job.problem,
        )
    named = records_without_trajectory(report.records_without_runs)
    if named is not None:
        err_console().print(named.replace("not scored", "not counted"), markup=False)
    job.finish("every file was scored")
    job.write_text(target, render_leaderboard(report, output_format))
    if not target.is_stdout:
        err_console().print(f"wrote {target}", markup=False)


# ---- quirks --------------------------------------------------------------------------------------
@verb(app, name="quirks", epilog="Example: sopbench evaluate PATH --protocol sound --quirk python_eval -o out.jsonl")
def quirks(as_json: Annotated[bool, typer.Option("--json", help="Print them as one JSON document.")] = False) -> None:
    """The named quirks of the published evaluator, for --quirk and --no-quirk.

    The sopbench protocol is the sound protocol with every quirk on; see docs/protocols.md.
    """
    from dataclasses import asdict

    from sopbench.report import TextTable
    from sopbench.scoring import QUIRKS

    if as_json:
        sys.stdout.write(json.dumps([asdict(q) for q in QUIRKS.values()], indent=2) + "\n")
        return
    table = TextTable("quirks (all on in --protocol sopbench, all off in sound)", ["quirk", "spec", "what it does"])
    for quirk in QUIRKS.values():
        table.add_row([quirk.name, quirk.spec, quirk.summary])
    table.print(out_console())


# ---- shared option handling ----------------------------------------------------------------------
def _protocol(name: str, enable: list[str] | None, disable: list[str] | None):
    from sopbench.scoring import protocol_by_name

    try:
        chosen = protocol_by_name(name)
    except ValueError as exc:
        raise UserError(f"--protocol {name}: {exc}") from None
    try:
        return chosen.with_quirks(enable=enable or [], disable=disable or [])
    except ValueError as exc:
        raise UserError(f"--quirk/--no-quirk: {exc} (list them with: sopbench quirks)") from None


def _card_choice(csv_path: Path | None):
    """The per-file bank card reading from --bank-cards (checked whole before any output is touched)."""
    if csv_path is None:
        return None
    from sopbench.report import read_card_choices

    current_job().inputs([csv_path], "--bank-cards")
    try:
        return read_card_choices(csv_path)
    except LoadError as exc:
        raise UserError(f"--bank-cards {csv_path}: {exc.message}") from None


def _trajectory_files(paths: list[Path]) -> list[Path]:
    """The trajectory files under ``paths``, all declared as inputs (no output may be one of them)."""
    from sopbench.traces import iter_trajectory_files

    job = current_job()
    job.inputs(paths)
    files = list(iter_trajectory_files(paths))
    job.inputs(files, must_exist=False)
    return files


def _runs_to_jsonl(paths: list[Path], output: Path, as_json: bool, done: str, produce) -> None:
    """Check ``paths`` and ``output``, then ``produce(files, write, advance)`` -> (result, runs): each
    run's ``to_json()`` goes to ``write``, one JSON line of ``output``; then the summary."""
    job = current_job()
    files = _trajectory_files(paths)
    target = job.output(output)
    if target.is_stdout and as_json:
        raise UserError("--output - and --json would both print on standard output; name a file for --output")
    if not files:
        _nothing_found(paths, target)
        return
    with job.progress(len(files), done) as advance, job.write(target) as sink:
        result, runs = produce(files, lambda item: sink.write(_json_line(item.to_json())), advance)
    job.finish(f"{runs} runs {done}, written to {target}")
    if runs == 0:
        job.nothing_to_do(f"no run could be {done}")
    _show(result, target, as_json)


def _nothing_found(paths: list[Path], target: OutputTarget | None = None) -> None:
    untouched = "" if target is None else f"; {target} not written"
    names = ", ".join(str(p) for p in paths)
    current_job().nothing_to_do(f"no trajectory file (.json, .json.gz) in {names}{untouched}")


def _json_line(data: object) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS) + b"\n"


def _show(result, target: OutputTarget, as_json: bool) -> None:
    """A verb's summary: one JSON document, or its table and notes (on stderr when the data is on stdout)."""
    if as_json:
        sys.stdout.write(json.dumps(result.as_dict(), indent=2) + "\n")
        return
    console = err_console() if target.is_stdout else out_console()
    result.table().print(console)
    for note in result.notes():
        console.print(note, markup=False)
    console.print(f"wrote {target}", markup=False)


# ---- adapter: the helpers of the old cli.py, for verbs written against it (run, export, generate)
# until the lead moves them onto ``verb``/``Job`` at merge; then this section goes.
console = out_console()
errors = err_console()


def _check_paths(paths: list[Path]) -> None:
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        errors.print(f"error: no such file or folder: {', '.join(missing)}", markup=False)
        raise typer.Exit(2)


def _task_file(tasks_dir: Path, domain: str) -> Path:
    from sopbench.tasks import task_file

    try:
        return task_file(tasks_dir, domain)
    except LoadError as exc:
        errors.print(f"error: --tasks-dir {tasks_dir}: {exc}", markup=False)
        raise typer.Exit(2) from None


def _report_problems(problems: list[str]) -> None:
    for problem in problems[:20]:
        errors.print(f"skipped: {problem}", markup=False)
    if len(problems) > 20:
        errors.print(f"... and {len(problems) - 20} more problems", markup=False)


def _progress(total: int, what: str):
    """The old ``_progress``: ``advance(path)`` after each file (a bar on a terminal only)."""
    from contextlib import contextmanager


    @contextmanager
    def bar():
        with Job(what).progress(total, what) as advance:
            yield lambda path: advance(Path(path).name)

    return bar()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
