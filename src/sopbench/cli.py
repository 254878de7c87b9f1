"""The ``sopbench`` command line. Each verb checks its options and paths, then calls one function of
``sopbench.report`` and prints what it returns; ``sopbench._output.verb`` keeps the contract shared
by every verb (outputs written whole or not at all, exit codes, one-line errors, ``--problems``)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Annotated

import orjson
import typer

from sopbench._output import (
    EXIT_PARTIAL,
    Job,
    OutputTarget,
    UserError,
    _show_problems,
    current_job,
    err_console,
    out_console,
    process_ends_after_verb,
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
    "used); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM)."
)
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of any error.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=lambda on: _print_version(on),
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Evaluate agent traces against SOPs: diagnose, replay, evaluate, leaderboard, quirks."""
    set_debug(debug)


def _print_version(on: bool) -> None:
    if on:
        from sopbench import __version__

        out_console().print(f"sopbench {__version__}", markup=False)
        raise typer.Exit()


DEFAULT_TASKS_DIR = Path("../shared/sopbench/tasks")
RUN_CHOICES = ("all", "first")

Paths = Annotated[
    list[Path],
    typer.Argument(
        metavar="PATH", help="Trajectory files (.json, .json.gz) or folders of them.", show_default=False
    ),
]
Sources = Annotated[
    list[Path],
    typer.Argument(
        metavar="PATH",
        help="Run folders of sopbench run (results.sqlite), trajectory files (.json, .json.gz) or folders of them.",
        show_default=False,
    ),
]
By = Annotated[
    list[str] | None,
    typer.Option(
        "--by",
        metavar="goal|constraint|judgement",
        help="Also show this breakdown (repeatable; --json always holds all three).",
        show_default=False,
    ),
]
Output = Annotated[
    Path, typer.Option("--output", "-o", metavar="FILE", help="Where to write; - is standard output.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the summary as one JSON document on stdout.")]
ProtocolName = Annotated[
    str,
    typer.Option(
        "--protocol", metavar="NAME", help="sound (the default) or sopbench (the published evaluator)."
    ),
]
QuirkOn = Annotated[
    list[str] | None,
    typer.Option(
        "--quirk",
        metavar="NAME",
        help="Turn a quirk on (repeatable; names: sopbench quirks).",
        show_default=False,
    ),
]
QuirkOff = Annotated[
    list[str] | None,
    typer.Option("--no-quirk", metavar="NAME", help="Turn a quirk off (repeatable).", show_default=False),
]
BankCards = Annotated[
    Path | None,
    typer.Option(
        "--bank-cards",
        metavar="FILE",
        show_default=False,
        help="CSV file,credit_cards_as_when_scored (list or dict): the bank card reading per file.",
    ),
]
JustifiedRefusal = Annotated[
    bool,
    typer.Option(
        "--require-justified-refusal",
        "--justify",
        help="Also judge whether each correct refusal revealed a violated constraint.",
    ),
]


# ---- diagnose ------------------------------------------------------------------------------------
@verb(
    app,
    epilog="Examples: sopbench diagnose --seed 42;  "
    "sopbench diagnose --seed 42 --tasks all --tasks-dir ../shared/sopbench/tasks",
)
def diagnose(
    seed: Annotated[int, typer.Option(metavar="N", help="Seed of the constructed traces.")] = 42,
    per_kind: Annotated[
        int, typer.Option(metavar="N", min=1, help="Traces of each kind (built-in SOP).")
    ] = 5,
    tasks: Annotated[
        str | None,
        typer.Option(
            metavar="DOMAINS",
            show_default=False,
            help="Also build traces over published tasks: all, or domains separated by commas.",
        ),
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
    Records without a trajectory are counted and named, not replayed.
    """
    from sopbench.report import replay_files

    def produce(files, write, advance):
        result = replay_files(files, write, progress=advance, on_problem=current_job().problem)
        return result, result.runs

    _runs_to_jsonl(paths, output, as_json, "replayed", lambda sources, write, advance: produce(sources.files, write, advance))


# ---- evaluate ------------------------------------------------------------------------------------
@verb(
    app,
    epilog="Example: sopbench evaluate ../shared/sopbench/trajectories --protocol sopbench "
    "--output verdicts.jsonl",
)
def evaluate(
    paths: Sources,
    output: Output,
    protocol: ProtocolName = "sound",
    quirk: QuirkOn = None,
    no_quirk: QuirkOff = None,
    require_justified_refusal: JustifiedRefusal = False,
    runs: Annotated[
        str,
        typer.Option(metavar="all|first", help="All runs of each record, or only the first (as published)."),
    ] = "all",
    bank_cards: BankCards = None,
    by: By = None,
    prices: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            show_default=False,
            help="TOML or JSON: USD per million input/output tokens per model; adds cost_usd to live runs.",
        ),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Score recorded trajectories and read run folders: one verdict per run, then a summary per
    configuration and domain.

    Each line of --output holds source, domain, record, run, model, tool_mode, tool_list, user,
    goal, task_id, protocol, the verdict (passed, database, permission, procedure and the seven
    published checks) and explanations. The summary, one block per configuration (never pooled),
    gives runs, pass rate, the rates on tasks that must succeed and must be refused, their balanced
    mean, each with its 95% interval, pass^k with several runs per task, failures by judgement and,
    for live runs, tokens and latency. A run folder holds the sound and sopbench verdicts: other
    quirk mixes need exported trajectories. Records without a trajectory are counted and named.
    """
    from sopbench.report import evaluate_files

    job = current_job()
    chosen = _protocol(protocol, quirk, no_quirk)
    if runs not in RUN_CHOICES:
        raise UserError(f"--runs {runs}: choose all or first")
    cards = _card_choice(bank_cards)
    breakdowns = _breakdowns(by)
    price_table = _prices(prices)

    def produce(sources, write, advance):
        from sopbench.report import RunFolderError

        try:
            result = _evaluate(sources, write, advance)
        except RunFolderError as exc:
            raise UserError(str(exc)) from None
        return result, result.runs_scored

    def _evaluate(sources, write, advance):
        return evaluate_files(
            sources.files,
            chosen,
            write,
            run_folders=sources.run_folders,
            by=breakdowns,
            prices=price_table,
            runs=runs,
            credit_cards=cards,
            justify_refusal=require_justified_refusal,
            progress=advance,
            on_problem=job.problem,
        )

    _runs_to_jsonl(paths, output, as_json, "scored", produce, run_folders=True)


# ---- leaderboard ---------------------------------------------------------------------------------
@verb(
    app,
    epilog="Example: sopbench leaderboard ../shared/sopbench/trajectories --protocol sopbench "
    "--format markdown",
)
def leaderboard(
    paths: Sources,
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
        typer.Option(
            metavar="DIR",
            show_default=False,
            help="Task files for the refuse-all row (default: ../shared/sopbench/tasks when it "
            "exists, else the tasks inside the records).",
        ),
    ] = None,
    bank_cards: BankCards = None,
    require_justified_refusal: JustifiedRefusal = False,
    min_cases: Annotated[
        int, typer.Option(metavar="N", min=0, help="Rows with fewer cases are listed apart, not ranked.")
    ] = 20,
    output: Annotated[
        Path, typer.Option("--output", "-o", metavar="FILE", help="Where to write the table; - is stdout.")
    ] = Path("-"),
    pass_hat_k: Annotated[
        bool, typer.Option("--pass-hat-k", help="Add pass^k columns (k = 2..K) for tasks run K times.")
    ] = False,
    runs: Annotated[
        str,
        typer.Option(metavar="all|first", help="Every run of each task (mean pass rate), or the first (as published)."),
    ] = "all",
    by: By = None,
) -> None:
    """The published leaderboard recomputed from trajectory files and run folders.

    One row per (model, mode, tool list, user) configuration and folder, one column per domain and
    Overall (pooled over cases), each cell with its 95% Wilson interval and the number of cases
    behind it (every run of each task: the mean pass rate over runs), then the Overall pass rate
    split into tasks that must succeed and tasks that must be refused, and their balanced mean. A
    refuse-all baseline row is always included. Rows whose
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
    if runs not in RUN_CHOICES:
        raise UserError(f"--runs {runs}: choose all or first")
    if compare_protocols and output_format == "csv":
        raise UserError(
            "--compare does not fit in one CSV table: use --format json (one document) or markdown"
        )
    cards = _card_choice(bank_cards)
    breakdowns = _breakdowns(by)
    sources = _sources(paths)
    files = sources.files
    target = job.output(output)
    if tasks_dir is not None:
        job.inputs([tasks_dir], "--tasks-dir")
    folder = tasks_dir if tasks_dir is not None else DEFAULT_TASKS_DIR
    baseline_tasks = None
    if tasks_dir is not None or folder.is_dir():
        baseline_tasks = _read_tasks("--tasks-dir", folder, lambda: list(iter_all_tasks(folder)))
    if not len(sources):
        _nothing_found(paths)
        return
    if baseline_tasks is None:
        err_console().print(
            f"{folder} not found: the refuse-all row uses the tasks inside the records", markup=False
        )
    passes = 2 if compare_protocols else 1
    from sopbench.report import RunFolderError

    with job.progress(passes * len(files) + len(sources.run_folders), "scored") as advance:
        try:
            report = build_leaderboard(
                files,
                chosen,
                run_folders=sources.run_folders,
                runs=runs,
                pass_hat_k=pass_hat_k,
                by=breakdowns,
                tasks=baseline_tasks,
                credit_cards=cards,
                justify_refusal=require_justified_refusal,
                compare_protocols=compare_protocols,
                min_cases=min_cases,
                progress=advance,
                on_problem=job.problem,
            )
        except RunFolderError as exc:
            raise UserError(str(exc)) from None
    named = records_without_trajectory(report.records_without_runs, not_done="not counted")
    if named is not None:
        err_console().print(named, markup=False)
    job.finish("every file was scored")
    job.write_text(target, render_leaderboard(report, output_format))
    if not target.is_stdout:
        err_console().print(f"wrote {target}", markup=False)


# ---- compare -------------------------------------------------------------------------------------
@verb(
    app,
    epilog="Examples: sopbench compare runs/reference runs/no-verify ;  sopbench compare "
    "../shared/sopbench/trajectories ../shared/sopbench/trajectories --protocol sopbench "
    "--config-a model=gpt-4o,tool_mode=fc,tool_list=full --config-b model=gpt-4o-mini,tool_mode=fc,tool_list=full",
)
def compare(
    a: Annotated[Path, typer.Argument(metavar="A", help="A run folder, trajectory file or folder of them.")],
    b: Annotated[Path, typer.Argument(metavar="B", help="The same for the other side.")],
    protocol: ProtocolName = "sound",
    quirk: QuirkOn = None,
    no_quirk: QuirkOff = None,
    config_a: Annotated[
        str | None,
        typer.Option(
            metavar="FILTER",
            show_default=False,
            help="Choose A's configuration: key=value pairs (agent, model, tool_mode, tool_list, user) "
            "separated by commas, or a text of its name.",
        ),
    ] = None,
    config_b: Annotated[
        str | None, typer.Option(metavar="FILTER", show_default=False, help="Choose B's configuration.")
    ] = None,
    by: By = None,
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
    output_format: Annotated[
        str, typer.Option("--format", metavar="markdown|csv|json", help="The document printed.")
    ] = "markdown",
) -> None:
    """Compare two agents on the same tasks: runs paired by task id and run.

    Prints the paired tasks, each side's pass rate, the difference with a 95% paired bootstrap
    interval (seeded, 2,000 resamples over tasks), the exact McNemar p-value, per domain and
    overall, and the runs that flipped in each direction with each side's first failing judgement.
    Runs present on one side only are counted and named. Each side must hold one configuration
    (choose with --config-a / --config-b).
    """
    from sopbench.report import COMPARE_FORMATS, CompareError, RunFolderError, compare_sources, render_compare

    job = current_job()
    chosen = _protocol(protocol, quirk, no_quirk)
    if as_json:
        output_format = "json"
    if output_format not in COMPARE_FORMATS:
        raise UserError(f"--format {output_format}: choose markdown, csv or json")
    breakdowns = _breakdowns(by)
    sides = [_sources([path]) for path in (a, b)]
    for path, side in zip((a, b), sides, strict=True):
        if not len(side):
            raise UserError(f"{path}: no run folder and no trajectory file (.json, .json.gz) here")
    with job.progress(sum(len(side) for side in sides), "read") as advance:
        try:
            report = compare_sources(
                [a], [b], chosen, config_a=config_a, config_b=config_b, by=breakdowns,
                progress=advance, on_problem=job.problem,
            )
        except (CompareError, RunFolderError) as exc:
            raise UserError(str(exc)) from None
    job.finish(f"{report.result.overall.paired_runs} paired runs compared")
    if output_format == "markdown" and out_console().is_terminal:
        for table in report.tables():
            table.print(out_console())
        for note in report.notes():
            out_console().print(note, markup=False)
    else:
        sys.stdout.write(render_compare(report, output_format))
    if report.result.overall.paired_runs == 0:
        job.nothing_to_do("A and B share no task and run")


# ---- quirks --------------------------------------------------------------------------------------
@verb(
    app,
    name="quirks",
    epilog="Example: sopbench evaluate PATH --protocol sound --quirk python_eval -o out.jsonl",
)
def quirks(
    as_json: Annotated[bool, typer.Option("--json", help="Print them as one JSON document.")] = False,
) -> None:
    """The named quirks of the published evaluator, for --quirk and --no-quirk.

    The sopbench protocol is the sound protocol with every quirk on; see docs/protocols.md.
    """
    from dataclasses import asdict

    from sopbench.report import TextTable
    from sopbench.scoring import QUIRKS

    if as_json:
        sys.stdout.write(json.dumps([asdict(q) for q in QUIRKS.values()], indent=2) + "\n")
        return
    table = TextTable(
        "quirks (all on in --protocol sopbench, all off in sound)", ["quirk", "spec", "what it does"]
    )
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


def _breakdowns(by: list[str] | None) -> list[str]:
    from sopbench.statistics import BREAKDOWNS

    chosen = []
    for item in by or ():
        for name in (part.strip() for part in item.split(",")):
            if name not in BREAKDOWNS:
                raise UserError(f"--by {name}: choose {', '.join(BREAKDOWNS)}")
            if name not in chosen:
                chosen.append(name)
    return chosen


def _prices(path: Path | None):
    """The --prices table (checked whole before any output is touched)."""
    if path is None:
        return None
    from sopbench.report import read_prices

    current_job().inputs([path], "--prices")
    try:
        return read_prices(path)
    except ValueError as exc:
        raise UserError(f"--prices {path}: {exc}") from None


def _trajectory_files(paths: list[Path]) -> list[Path]:
    """The trajectory files under ``paths``, all declared as inputs (no output may be one of them)."""
    from sopbench.traces import iter_trajectory_files

    job = current_job()
    job.inputs(paths)
    files = list(iter_trajectory_files(paths))
    job.inputs(files, must_exist=False)
    return files


class _Sources:
    """What a verb reads: run folders (their results.sqlite) and trajectory files."""

    def __init__(self, run_folders: list[Path], files: list[Path]) -> None:
        self.run_folders = run_folders
        self.files = files

    def __len__(self) -> int:
        return len(self.run_folders) + len(self.files)


def _sources(paths: list[Path], *, run_folders: bool = True) -> _Sources:
    """Run folders among ``paths`` and the trajectory files under the others, all declared inputs."""
    from sopbench.report import outside_run_folders, split_sources

    if not run_folders:
        return _Sources([], _trajectory_files(paths))
    job = current_job()
    job.inputs(paths)
    folders, others = split_sources(paths)
    job.inputs([folder / "results.sqlite" for folder in folders], must_exist=False)
    files = outside_run_folders(_trajectory_files(others), folders) if others else []
    return _Sources(folders, files)


def _runs_to_jsonl(
    paths: list[Path], output: Path, as_json: bool, done: str, produce, *, run_folders: bool = False
) -> None:
    """Check ``paths`` and ``output``, then ``produce(sources, write, advance)`` -> (result, runs):
    each run's ``to_json()`` goes to ``write``, one JSON line of ``output``; then the summary."""
    job = current_job()
    sources = _sources(paths, run_folders=run_folders)
    target = job.output(output)
    if target.is_stdout and as_json:
        raise UserError("--output - and --json would both print on standard output; name a file for --output")
    if not len(sources):
        _nothing_found(paths, target)
        return
    with job.progress(len(sources), done) as advance, job.write(target) as sink:
        result, runs = produce(sources, lambda item: sink.write(_json_line(item.to_json())), advance)
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
    for table in result.tables() if hasattr(result, "tables") else [result.table()]:
        table.print(console)
    for note in result.notes():
        console.print(note, markup=False)
    console.print(f"wrote {target}", markup=False)


@verb(
    app,
    epilog="Examples: sopbench generate --domain all --output tasks ; sopbench generate --domain bank "
    "--seed 7 --per-assignment 2 --compare ../shared/sopbench/tasks --output tasks",
)
def generate(
    domain: Annotated[str, typer.Option(metavar="NAME", help="A domain, comma-separated domains, or all.")],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", metavar="DIR", help="Folder for <domain>_tasks.json and <domain>_coverage.json."
        ),
    ],
    seed: Annotated[int, typer.Option(metavar="S", help="The same seed gives byte-identical files.")] = 0,
    goals: Annotated[
        str | None,
        typer.Option(metavar="NAMES", show_default=False, help="Only these goals (comma-separated)."),
    ] = None,
    per_assignment: Annotated[
        int, typer.Option(min=1, metavar="K", help="Distinct tasks made for each (variant, assignment).")
    ] = 1,
    compare: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH",
            show_default=False,
            help="A published task file or folder to compare with, combination by combination.",
        ),
    ] = None,
    include_hidden_prerequisites: Annotated[
        bool,
        typer.Option(
            "--include-hidden-prerequisites",
            help="Also make the combinations excluded by design (refused only for a hidden prerequisite), "
            "marked refused_only_for_hidden_prerequisite in the task file: no honest agent can pass them.",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the coverage reports as one JSON document.")
    ] = False,
) -> None:
    """Generate tasks without an LLM: every SOP variant and outcome, realised by search, verified by the oracle.

    For each goal of a domain: its SOP variants (the required part, then with each subset of the
    optional constraints) and each variant's outcome assignments (which constraints must hold or
    fail). Each assignment gets a database, user-known values and parameters that realise it, found
    by a seeded search and kept only when the strict oracle's reference path gives the expected
    outcome. Writes <domain>_tasks.json (the published layout) and <domain>_coverage.json. A
    combination that would be refused only for a hidden prerequisite (no agent could refuse it for a
    reason it can check) is excluded by design and reported as such. Exits 0 when every other
    combination was realised, 1 when one that should have been was not (each is named, with its reason).
    """
    from sopbench.domains import PUBLISHED_DOMAINS, domain_names, get_domain
    from sopbench.generation import generate as generate_tasks
    from sopbench.generation import goals as goals_of
    from sopbench.report import generation_table

    job = current_job()
    names = (
        list(PUBLISHED_DOMAINS) if domain == "all" else [d.strip() for d in domain.split(",") if d.strip()]
    )
    known = set(domain_names())
    unknown = [d for d in names if d not in known]
    if unknown or not names:
        raise UserError(
            f"--domain: unknown domain {', '.join(unknown) or domain!r}; known: all, {', '.join(sorted(known))}"
        )
    wanted = [g.strip() for g in goals.split(",") if g.strip()] if goals else None
    if wanted is not None:
        offered = {g for d in names for g in goals_of(get_domain(d).catalogue)}
        missing = [g for g in wanted if g not in offered]
        if missing:
            raise UserError(f"--goals: unknown goal {', '.join(missing)} in {', '.join(names)}")
        names = [d for d in names if set(wanted) & set(goals_of(get_domain(d).catalogue))]
    if compare is not None:
        job.inputs([compare], "--compare")
        if compare.is_dir():
            job.inputs(sorted(compare.iterdir()), "--compare", must_exist=False)
    job.output_folder(output)
    for name in names:  # the files it writes: none may be an input, --problems, or each other
        job.output(output / f"{name}_tasks.json", new_folders=True)
        job.output(output / f"{name}_coverage.json", new_folders=True)
    with _generation_progress(job, len(names)) as on_goal:
        try:
            done = generate_tasks(
                names,
                output,
                seed=seed,
                goals=wanted,
                per_assignment=per_assignment,
                compare_with=compare,
                progress=on_goal,
                include_hidden_prerequisites=include_hidden_prerequisites,
            )
        except KeyError as exc:  # a custom domain without a world database, say
            raise UserError(f"--domain: cannot generate: {exc.args[0] if exc.args else exc}") from None
    reports = []
    for item in done:
        report = item.result.report.as_dict()
        report.pop("combinations")
        if item.comparison is not None:
            comparison = item.comparison.as_dict()
            comparison.pop("rows")
            report["comparison"] = comparison
        report["tasks_file"] = str(item.tasks_file)
        reports.append(report)
        for u in report["unrealisable"]:
            job.problem(
                f"{report['domain']} {u['goal']} variant {u['variant']} "
                f"(must {'succeed' if u['outcome'] else 'fail'}): {u['reason']}",
                kind="unrealisable",
            )
    excluded = [(r["domain"], u) for r in reports for u in r["excluded"]]
    notes = [
        f"excluded by design: {d} {u['goal']} variant {u['variant']} (must "
        f"{'succeed' if u['outcome'] else 'fail'}): refused only for a hidden prerequisite"
        for d, u in excluded
    ]
    job.finish(f"{sum(r['tasks'] for r in reports)} tasks written to {output}")
    if as_json:
        sys.stdout.write(json.dumps({"domains": reports}, indent=2) + "\n")
    else:
        generation_table(reports, compared=compare is not None).print(out_console())
        for note in notes:
            out_console().print(note, markup=False)
        made = sum(r["hidden_prerequisite_tasks"] for r in reports)
        if made:
            out_console().print(
                f"{made} tasks refused only for a hidden prerequisite were made on request (marked)", markup=False
            )
        out_console().print(f"wrote {output}", markup=False)


def main() -> None:
    """The console script: click's own usage errors (a missing option, a bad value) become one line
    like every other user mistake; exit codes are those of the verbs."""
    process_ends_after_verb()
    try:
        code = app(standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):  # Ctrl-C outside any verb (while options are parsed)
        err_console().print("interrupted: nothing was started", markup=False)
        sys.exit(130)
    except typer.TyperException as exc:  # typer's parsing errors: usage errors, exit 2
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare ``sopbench``: the help itself
            out_console().print(exc.format_message(), markup=False, highlight=False)
            sys.exit(0)
        ctx = getattr(exc, "ctx", None)
        where = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
        err_console().print(f"error: {exc.format_message()}{where}", markup=False, soft_wrap=True)
        sys.exit(getattr(exc, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)


# ---- run and export ------------------------------------------------------------------------------
AgentOption = Annotated[str | None, typer.Option(metavar="TEXT", show_default=False)]


@verb(
    app,
    epilog="Examples: sopbench run --agent reference --domain all --tasks ../shared/sopbench/tasks "
    "--output runs/reference ; sopbench run --agent openai --base-url http://localhost:8000/v1 "
    "--model qwen2.5 --domain bank --limit 20 --output runs/qwen",
)
def run(
    agent: Annotated[
        str, typer.Option(metavar="NAME", help="reference, refuse-all, no-verify, replay, openai, human (you play it), ...")
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", metavar="DIR", help="Run folder (results.sqlite); the same folder resumes."
        ),
    ],
    domain: Annotated[
        str, typer.Option(metavar="NAME", help="A domain, comma-separated domains, or all.")
    ] = "all",
    tasks: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH",
            show_default=False,
            help="A task file or a folder of <domain>_tasks.json[.gz] (default: the generated task set).",
        ),
    ] = None,
    tool_list: Annotated[
        str, typer.Option(metavar="NAME", help="full (every tool an agent may call) or oracle.")
    ] = "full",
    user: Annotated[
        str, typer.Option(metavar="NAME", help="none (the published fixed replies), scripted, llm, human (you play it), ...")
    ] = "none",
    limit: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Only the first N tasks of each domain.")
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, metavar="N", help="Episodes played at once.")] = 8,
    runs: Annotated[int, typer.Option(min=1, metavar="K", help="Runs per task.")] = 1,
    seed: Annotated[int, typer.Option(metavar="S", help="Run seed (each episode derives its own).")] = 0,
    max_turns: Annotated[
        int,
        typer.Option(
            min=1,
            metavar="N",
            help="Message limit, checked before each reply as published (20): no reply is asked for once "
            "the transcript holds N messages; the answers to the last reply's calls may take it past N.",
        ),
    ] = 20,
    max_actions: Annotated[
        int, typer.Option(min=1, metavar="N", help="Executed calls per episode (published: 10).")
    ] = 10,
    episode_timeout: Annotated[
        float, typer.Option(min=0.001, metavar="SECONDS", help="After this an episode is an infra_error.")
    ] = 600.0,
    base_url: Annotated[
        list[str] | None,
        typer.Option(
            metavar="URL",
            show_default=False,
            help="Agent: OpenAI-compatible endpoint; repeat it for replicas of one model (requests go "
            "to the least busy one; a failing one is left out for a while).",
        ),
    ] = None,
    model: Annotated[str | None, typer.Option(metavar="NAME", help="Agent: model name.")] = None,
    tool_mode: Annotated[
        str | None, typer.Option(metavar="MODE", help="Agent: fc, react or act-only.")
    ] = None,
    temperature: Annotated[
        str | None,
        typer.Option(
            metavar="T",
            show_default=False,
            help="Agent: sampling temperature (published: 0), or 'default' to send none (o-series models).",
        ),
    ] = None,
    max_tokens: Annotated[
        str | None,
        typer.Option(
            metavar="N",
            show_default="512",
            help="Agent: completion token limit per reply (published: 512), or 'none' to send no limit.",
        ),
    ] = None,
    tool_choice: Annotated[
        str | None,
        typer.Option(
            metavar="CHOICE",
            show_default="auto",
            help="Agent (fc): tool_choice sent with the tools: auto, required or none.",
        ),
    ] = None,
    compact_tools: Annotated[
        bool,
        typer.Option(
            "--compact-tools",
            help="Agent (react, act-only): the tool list as compact JSON (small-context models).",
        ),
    ] = False,
    api_key_env: Annotated[
        str | None, typer.Option(metavar="VAR", help="Agent: variable holding the API key.")
    ] = None,
    request_timeout: Annotated[
        float | None, typer.Option(metavar="SECONDS", help="Agent: per request.")
    ] = None,
    max_retries: Annotated[int | None, typer.Option(metavar="N", help="Agent: retries per request.")] = None,
    endpoint_slots: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            show_default=False,
            help="Agent: requests in flight at once per endpoint URL (default: no cap; 1 for serve-local). A "
            "request waits for a slot before its --request-timeout starts; the wait is reported as queue time.",
        ),
    ] = None,
    trajectories: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Agent (replay): a published trajectory file.")
    ] = None,
    user_base_url: Annotated[
        str | None, typer.Option(metavar="URL", help="User: OpenAI-compatible endpoint.")
    ] = None,
    user_model: Annotated[str | None, typer.Option(metavar="NAME", help="User: model name.")] = None,
    user_api_key_env: Annotated[
        str | None, typer.Option(metavar="VAR", help="User: variable holding the API key.")
    ] = None,
    user_temperature: Annotated[
        str | None,
        typer.Option(
            metavar="T",
            show_default="1.0",
            help="User (llm): sampling temperature (published: 1.0), or 'default' to send none.",
        ),
    ] = None,
    user_max_tokens: Annotated[
        str | None,
        typer.Option(
            metavar="N",
            show_default="128",
            help="User (llm): completion token limit per reply (published: 128), or 'none' to send no limit.",
        ),
    ] = None,
    user_request_timeout: Annotated[
        float | None, typer.Option(metavar="SECONDS", show_default="300", help="User (llm): per request.")
    ] = None,
    user_script: Annotated[
        Path | None, typer.Option(metavar="FILE", help="User (scripted): a JSON file of replies.")
    ] = None,
    baselines: Annotated[bool, typer.Option(help="Show refuse-all and no-verify on the same tasks.")] = True,
    prices: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            show_default=False,
            help="TOML or JSON: USD per million input/output tokens per model; adds the agent's cost_usd.",
        ),
    ] = None,
    env_mode: Annotated[
        str,
        typer.Option(
            metavar="MODE",
            help="prompt (constraints listed; lenient system), program (the environment enforces them; no "
            "listing, no internal_* tools) or guard (listed, and unverified service calls are not executed).",
        ),
    ] = "prompt",
    shuffle_tools: Annotated[bool, typer.Option(help="Shuffle the offered tools (seeded per episode).")] = False,
    constraint_format: Annotated[
        str, typer.Option(metavar="FORMAT", help="How constraints are listed: structured or old (numbered).")
    ] = "structured",
    default_sop: Annotated[
        str, typer.Option(metavar="OPTION", help="The SOP of the non-goal actions: full or required.")
    ] = "full",
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--import",
            metavar="MODULE",
            show_default=False,
            help="Import a module that registers agents or users (repeatable).",
        ),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Run an agent on tasks: one episode per task and run, scored, stored and resumable.

    Episodes follow the published loop (the task's user_prompt first; the user replies with the
    known values; the episode ends at exit_conversation, at 20 messages before a reply or after 10 calls). Each finished
    episode is stored in OUTPUT/results.sqlite at once; the same command on the same folder skips
    finished episodes and retries infra_error ones. Exits 1 when infra_error episodes remain or
    the model never replied in some episode (reported apart, not scored).
    """
    from sopbench.domains import PUBLISHED_DOMAINS
    from sopbench.report import run_tables
    from sopbench.runner import RunConfig, RunConfigError, StoreError, import_plugins, store_files
    from sopbench.runner import run as run_agents

    job = current_job()
    try:
        import_plugins(plugin or ())
    except ImportError as exc:
        raise UserError(f"--import: {exc}") from None
    if tasks is None:  # the generated set holds the published domains: check before building it
        unknown = [d for d in domain.split(",") if d.strip() and d.strip() not in (*PUBLISHED_DOMAINS, "all")]
        if unknown:
            raise UserError(
                f"--domain: unknown domain {', '.join(unknown)}; known: all, {', '.join(PUBLISHED_DOMAINS)}"
            )
    price_table = _prices(prices)
    if tasks is not None:
        job.inputs([tasks], "--tasks")
    for option, path in (("--trajectories", trajectories), ("--user-script", user_script)):
        if path is not None:
            job.inputs([path], option)
    if output.exists() and not output.is_dir():
        raise UserError(f"--output {output}: is {_what(output)}; name a folder (it holds results.sqlite)")
    job.output_folder(output, new_folders=True)  # a run creates its folder, parents included
    job.inputs(store_files(output), "the run's store", must_exist=False)  # no output may replace it
    agent_options = _given(
        base_url=None if not base_url else base_url[0] if len(base_url) == 1 else list(base_url),
        model=model,
        tool_mode=tool_mode,
        temperature=_temperature(temperature),
        max_tokens=_max_tokens(max_tokens),
        tool_choice=tool_choice,
        compact_tools=True if compact_tools else None,
        api_key_env=api_key_env,
        request_timeout=request_timeout,
        max_retries=max_retries,
        endpoint_slots=endpoint_slots,
        trajectories=None if trajectories is None else str(trajectories),
    )
    _sampling(agent_options, temperature, max_tokens)
    user_options = _given(
        base_url=user_base_url,
        model=user_model,
        api_key_env=user_api_key_env,
        temperature=_temperature(user_temperature, "--user-temperature"),
        max_tokens=_max_tokens(user_max_tokens, "--user-max-tokens"),
        request_timeout=user_request_timeout,
        script=None if user_script is None else str(user_script),
    )
    _sampling(user_options, user_temperature, user_max_tokens)
    try:
        config = RunConfig(
            domains=domain,
            agent=agent,
            agent_options=agent_options,
            user=user,
            user_options=user_options,
            tasks=tasks,
            output=output,
            tool_list=tool_list,
            limit=limit,
            concurrency=concurrency,
            runs=runs,
            seed=seed,
            max_turns=max_turns,
            max_actions=max_actions,
            episode_timeout=episode_timeout,
            baselines=baselines,
            env_mode=env_mode,
            shuffle_tools=shuffle_tools,
            constraint_format=constraint_format,
            default_sop=default_sop,
        )
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise UserError(_first_error(exc)) from None
    if "human" in (agent, user):  # a person plays a seat: one episode at a time, no time limit
        config = config.model_copy(update={"concurrency": 1, "episode_timeout": None})
    if tasks is None:  # every option checked first: building the generated set takes a while
        try:
            config.check_options()
        except RunConfigError as exc:
            raise UserError(str(exc)) from None
        _default_task_set(job)  # built now, with a progress bar; the run plays it (tasks None)
    progress = _EpisodeProgress(job, show="human" not in (agent, user))  # no bar under a person's prompts
    try:
        with progress:
            report = run_agents(config, progress=progress.update)
    except (RunConfigError, StoreError) as exc:
        raise UserError(str(exc)) from None
    if report.usage is not None and price_table is not None:
        from sopbench.statistics import with_cost

        report.usage = with_cost(report.usage, model, price_table)
    job.finish(f"{report.completed} of {report.episodes} episodes stored in {output}")
    for damaged in report.damaged:
        job.problem(damaged)
    if as_json:
        sys.stdout.write(json.dumps(report.as_dict(), indent=2) + "\n")
    else:
        if report.task_set is not None:
            out_console().print(report.task_set.describe(), markup=False)
        for table in run_tables(report, agent):
            table.print(out_console())
        out_console().print("database / permission / procedure: failed episodes per judgement", markup=False)
    for reason in report.infra_reasons:
        job.problem(reason, kind="infra_error")
    for end, count in report.no_reply.items():
        job.problem(
            f"{count} episodes ended at the first request: {end} (the model never replied; not scored)",
            kind="no_reply",
        )
    if report.timed_out_requests:
        err_console().print(
            f"{report.timed_out_requests} requests got no reply within --request-timeout and were sent "
            "again (the server may have kept working on them: consider a lower --max-tokens)",
            markup=False,
        )
    if report.queue_s:
        err_console().print(
            f"model requests waited {report.queue_s:.1f} s for an endpoint slot (--endpoint-slots) and were "
            f"answered in {report.model_s:.1f} s",
            markup=False,
        )
    if report.infra_errors:
        err_console().print(
            f"{report.infra_errors} episodes ended in infra_error (not scored): run the same command to retry them",
            markup=False,
        )
    elif report.episodes == 0:
        job.nothing_to_do("no task matches --domain / --limit")


@verb(
    app,
    epilog="Example: sopbench sweep examples/sweeps/builtin.toml --output sweeps/builtin",
)
def sweep(
    file: Annotated[Path, typer.Argument(metavar="SWEEP.toml", help="The sweep file (a matrix of configurations).")],
    output: Annotated[
        Path, typer.Option("--output", "-o", metavar="DIR", help="One run folder per configuration: DIR/<name>/.")
    ],
    executor: Annotated[
        str, typer.Option(metavar="NAME", help="local (this process) or ray (episodes as Ray tasks).")
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(metavar="ADDR", show_default=False, help="ray: the cluster to join (auto: this machine's); default: a new local instance."),
    ] = None,
    output_format: Annotated[str, typer.Option("--format", metavar="FORMAT", help="markdown, csv or json.")] = "markdown",
) -> None:
    """Run every configuration of a sweep file (each resumable), then the leaderboard over them all.

    The whole file is checked before any episode. Running the same command again resumes every
    configuration; configurations added to the file are run, changed ones are refused.
    """
    from contextlib import nullcontext

    from sopbench.report import render_leaderboard
    from sopbench.runner import RunConfigError, StoreError
    from sopbench.sweep import (
        RayUnavailable,
        SweepDisplay,
        SweepError,
        expand,
        planned_episodes,
        ray_player,
        read_sweep,
        run_sweep,
    )

    job = current_job()
    if executor not in ("local", "ray"):
        raise UserError(f"--executor {executor}: choose local or ray")
    if address is not None and executor != "ray":
        raise UserError("--address needs --executor ray")
    job.inputs([file], "SWEEP.toml")
    if output.exists() and not output.is_dir():
        raise UserError(f"--output {output}: is {_what(output)}; name a folder (it holds one run folder per configuration)")
    job.output_folder(output, new_folders=True)
    target = job.output(None, "stdout")
    try:
        configurations = expand(read_sweep(file), output, str(file))
        cluster = ray_player(address) if executor == "ray" else nullcontext(None)
        with cluster as player, SweepDisplay(sys.stderr, planned_episodes(configurations)) as display:
            report = run_sweep(configurations, display, player)
    except (SweepError, RunConfigError, StoreError, RayUnavailable) as exc:
        raise UserError(str(exc)) from None
    assert report.leaderboard is not None
    incomplete = [name for name, r in report.reports.items() if not r.complete]
    for name in incomplete:
        job.problem(f"{name}: {report.reports[name].infra_errors} episodes in infra_error (run the same command to retry)", kind="infra_error")
    job.finish(f"{len(report.reports)} configurations in {output}")
    job.write_text(target, render_leaderboard(report.leaderboard, output_format))


def _default_task_set(job: Job) -> Path:
    """The generated task set (built into the cache on first use, with a progress bar)."""
    from sopbench.domains import PUBLISHED_DOMAINS
    from sopbench.generation import default_tasks_dir, default_tasks_ready

    if default_tasks_ready():
        return default_tasks_dir()
    err_console().print("building the generated task set (first use only; about 20 s)", markup=False)
    with _generation_progress(job, len(PUBLISHED_DOMAINS)) as on_goal:
        return default_tasks_dir(progress=on_goal)


@contextmanager
def _generation_progress(job: Job, domains: int) -> Iterator[Callable[[str, str], None]]:
    """The ``progress(domain, goal)`` callback of generation, as one bar step per finished domain."""
    started: list[str] = []
    with job.progress(domains, "generated", unit="domains") as advance:

        def on_goal(domain: str, goal: str) -> None:
            if domain not in started:
                if started:
                    advance(started[-1])
                started.append(domain)

        yield on_goal
        if started:
            advance(started[-1])


def _what(path: Path) -> str:
    return "a file" if path.is_file() else "not a folder"


def _temperature(text: str | None, option: str = "--temperature") -> float | None:
    if text is None or text == "default":
        return None
    try:
        return float(text)
    except ValueError:
        raise UserError(f"{option} {text}: give a number or 'default'") from None


def _max_tokens(text: str | None, option: str = "--max-tokens") -> int | None:
    if text is None or text.strip().lower() == "none":
        return None
    try:
        value = int(text)
    except ValueError:
        raise UserError(f"{option} {text}: give a positive whole number or 'none'") from None
    if value <= 0:
        raise UserError(f"{option} {text}: give a positive whole number or 'none'")
    return value


def _sampling(options: dict[str, object], temperature: str | None, max_tokens: str | None) -> None:
    """'default' and 'none', given: sent as "not set" (the model's own default, no token limit)."""
    if temperature == "default":
        options["temperature"] = None
    if max_tokens is not None and max_tokens.strip().lower() == "none":
        options["max_tokens"] = None


def _given(**options: object) -> dict[str, object]:
    """The options the user set (an agent's constructor gets only those)."""
    return {key: value for key, value in options.items() if value is not None}


def _first_error(exc: Exception) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "settings"
        return f"--{where.replace('_', '-')}: {error['msg']}"
    return str(exc)


class _EpisodeProgress:
    """Episodes done, pass rate so far, infra errors and ETA on stderr (a bar on a terminal, a plain
    line otherwise); the job's ``done`` line stays current so that Ctrl-C says how many episodes are
    stored."""

    def __init__(self, job: Job, *, show: bool = True) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        from sopbench.runner import PlainProgress

        self.job = job
        console = err_console()
        self.bar = Progress(
            TextColumn("episodes"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("pass {task.fields[rate]}"),
            TextColumn("infra errors {task.fields[errors]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            disable=not (show and console.is_terminal),
        )
        self.handle = self.bar.add_task("episodes", total=None, rate="-", errors=0)
        # Without a terminal (nohup, CI, a pipe): a plain line every 30 s and every 5% of episodes.
        self.plain = PlainProgress(sys.stderr) if show and not console.is_terminal else None

    def __enter__(self) -> _EpisodeProgress:
        self.bar.__enter__()
        if self.plain is not None:
            self.plain.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self.plain is not None:
            self.plain.__exit__(kind, error, trace)
        self.bar.__exit__(kind, error, trace)

    def update(self, progress) -> None:
        rate = progress.pass_rate
        total = progress.total - progress.skipped
        self.job.finish(
            f"{progress.done} of {total} episodes finished and stored ({progress.skipped} stored before); "
            "run the same command to resume"
        )
        self.bar.update(
            self.handle,
            total=total,
            completed=progress.done,
            rate="-" if rate is None else f"{100 * rate:.1f}%",
            errors=progress.infra_errors,
        )
        if self.plain is not None:
            self.plain.update(progress)


@verb(
    app,
    epilog="Examples: sopbench export runs/reference --format jsonl > episodes.jsonl ; "
    "sopbench export runs/reference --format sopbench --output runs/reference/trajectories",
)
def export(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="A run folder (holding results.sqlite).")],
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="NAME",
            help="jsonl (one episode per line), sopbench (trajectory files) or shown (the system prompts "
            "and tool schemas the model was shown, one JSON document).",
        ),
    ] = "jsonl",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="PATH",
            show_default=False,
            help="jsonl: a file, - for stdout (the default); sopbench: a folder (default DIR/trajectories).",
        ),
    ] = None,
    timings: Annotated[
        bool, typer.Option(help="Include latency_s (off: byte-identical exports of deterministic agents).")
    ] = True,
    tasks: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH", show_default=False, help="Task files for --format sopbench (default: the run's)."
        ),
    ] = None,
) -> None:
    """Export a run folder: JSON Lines with one episode per line, or trajectory files of the published layout.

    Each line holds domain, task_id, goal, agent, model, tool_mode, tool_list, run, seed, status,
    tool_calls, final_database, verdict (passed, database, permission, procedure and the seven
    published checks), explanations, usage and latency_s, in a fixed order (domain, task, run).
    --format sopbench writes <output>/<domain>/ast_<model>-mode_...json files that sopbench evaluate
    (and the original code) can score. --format shown writes what a model agent was shown: each
    distinct system prompt and tool list once, and which ones each episode got.
    """
    from sopbench.runner import (
        StoreError,
        default_tasks_path,
        export_jsonl,
        export_shown,
        export_sopbench,
        open_existing,
        store_files,
    )

    job = current_job()
    if output_format not in ("jsonl", "sopbench", "shown"):
        raise UserError(f"--format {output_format}: choose jsonl, sopbench or shown")
    job.inputs([folder], "argument", must_exist=False)  # open_existing names what is missing
    job.inputs(store_files(folder), "the run's store", must_exist=False)
    if output_format in ("jsonl", "shown"):
        target = job.output(output)
    else:
        if output is not None and str(output) == "-":
            raise UserError("--output -: --format sopbench writes a folder of files; name a folder")
        trajectories_folder = job.output_folder(output or folder / "trajectories", new_folders=True)
    try:
        store = open_existing(folder)
    except StoreError as exc:
        raise UserError(str(exc)) from None
    try:
        if output_format == "shown":
            with job.write(target) as sink:
                count = export_shown(store, sink)
            job.finish(f"what the model was shown in {count} episodes exported to {target}")
            err_console().print(f"exported what the model was shown in {count} episodes to {target}", markup=False)
            if count == 0:
                job.nothing_to_do(f"{folder} holds no record of what a model was shown (no model agent ran)")
            return
        if output_format == "jsonl":
            with job.write(target) as sink:
                count = export_jsonl(store, sink, timings=timings, on_damaged=job.problem)
            job.finish(f"{count} episodes exported to {target}")
            err_console().print(f"exported {count} episodes to {target}", markup=False)
            if count == 0:
                job.nothing_to_do(f"{folder} holds no episode")
            return
        task_path = tasks or default_tasks_path(store)
        job.inputs([task_path], "--tasks")
        if task_path.is_dir():
            job.inputs(sorted(task_path.iterdir()), "--tasks", must_exist=False)

        def declare(files: list[Path]) -> None:
            for file in files:
                job.output(file, new_folders=True)

        try:
            written = export_sopbench(
                store, trajectories_folder, task_path, on_damaged=job.problem, check_targets=declare
            )
        except StoreError as exc:
            raise UserError(str(exc)) from None
        for path in written:
            err_console().print(f"wrote {path}", markup=False)
        if not written:
            job.nothing_to_do(f"{folder} holds no completed episode")
    finally:
        store.close()


# ---- report --------------------------------------------------------------------------------------
@verb(
    app,
    epilog="Example: sopbench report ../shared/sopbench/trajectories runs/reference --output report.html",
)
def report(
    sources: Sources,
    output: Annotated[Path, typer.Option("--output", "-o", metavar="FILE", help="The HTML file to write.")],
    protocol: ProtocolName = "sound",
    prices: Annotated[
        Path | None,
        typer.Option(metavar="FILE", show_default=False, help="TOML or JSON: USD per million input/output tokens per model."),
    ] = None,
    embed_episodes: Annotated[
        bool, typer.Option("--embed-episodes", help="Draw the episodes inside the file; numbers link to them there.")
    ] = False,
    tasks_dir: Annotated[
        Path | None,
        typer.Option(metavar="DIR", show_default=False, help="Task files for the refuse-all and no-verify rows "
                     "(default: ../shared/sopbench/tasks when it exists, else the tasks inside the records)."),
    ] = None,
    viewer_url: Annotated[
        str, typer.Option(metavar="URL", help="Where sopbench view serves the same sources (the numbers' links).")
    ] = "http://127.0.0.1:8765/",
) -> None:
    """One self-contained HTML file: leaderboard, figures, paired comparisons, per-goal table.

    Works offline from a file:// URL (no network request); every number links to the episodes
    behind it in sopbench view, or, with --embed-episodes, inside the file.
    """
    try:
        from sopbench.report import build_html_report
    except ImportError as exc:
        raise UserError(f"sopbench report needs the optional extra: pip install 'sopbench[report]' ({exc})") from None
    from sopbench.report import RunFolderError
    from sopbench.tasks import iter_all_tasks

    job = current_job()
    if protocol not in ("sound", "sopbench"):
        raise UserError(f"--protocol {protocol}: choose sound or sopbench")
    chosen = _protocol(protocol, None, None)
    price_table = _prices(prices)
    found = _sources(sources)
    target = job.output(output, stdout_ok=False)
    folder = tasks_dir if tasks_dir is not None else DEFAULT_TASKS_DIR
    if tasks_dir is not None:
        job.inputs([tasks_dir], "--tasks-dir")
    tasks = None
    if tasks_dir is not None or folder.is_dir():
        tasks = _read_tasks("--tasks-dir", folder, lambda: list(iter_all_tasks(folder)))
    if not len(found):
        _nothing_found(sources, target)
        return
    with job.progress(len(found), "read") as advance:
        try:
            built = build_html_report(
                found.files, chosen, run_folders=found.run_folders, tasks=tasks,
                tasks_source="the task files" if tasks is not None else "", prices=price_table,
                embed_episodes=embed_episodes, viewer_url=viewer_url, progress=advance, on_problem=job.problem,
            )
        except RunFolderError as exc:
            raise UserError(str(exc)) from None
    job.finish(f"{built.episodes} runs reported in {target}")
    job.write_text(target, built.html)
    err_console().print(f"wrote {target} ({len(built.html.encode()) // 1024} KiB)", markup=False)


@verb(
    app,
    epilog="Example: sopbench view ../shared/sopbench/trajectories runs/reference  (then open the printed URL; "
    "Ctrl-C stops it, exit code 130)",
)
def view(
    sources: Annotated[
        list[Path],
        typer.Argument(
            metavar="SOURCE",
            help="Run folders of sopbench run, trajectory files (.json, .json.gz) or folders of them.",
            show_default=False,
        ),
    ],
    port: Annotated[int, typer.Option(metavar="P", min=0, max=65535, help="Port (0: any free one).")] = 8765,
    host: Annotated[
        str,
        typer.Option(metavar="ADDRESS", help="Address to listen on; anything but 127.0.0.1 is warned about."),
    ] = "127.0.0.1",
    protocol: ProtocolName = "sound",
) -> None:
    """A local web viewer of episodes: filter the list, read an episode next to its SOP's graph.

    Every episode of every SOURCE is read and scored under --protocol at start-up; the list filters
    by domain, goal, configuration, outcome, failing judgement and constraint kind; an episode shows
    the conversation, the goal's constraint graph marked at the goal call, the first failing step
    and the database difference against the oracle. Stop it with Ctrl-C (exit code 130).
    """
    try:
        from sopbench.view import EpisodeIndex, SourceError, load_sources, source_files
        from sopbench.view.server import bind, create_app, is_loopback, serve, url_of
    except ImportError as exc:
        raise UserError(
            f"sopbench view needs the optional extra: pip install 'sopbench[view]' ({exc})"
        ) from None
    job = current_job()
    job.inputs(sources, "SOURCE")
    chosen = _protocol(protocol, None, None)
    try:
        units = source_files(sources)
        sock = bind(host, port)
    except SourceError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"--host {host} --port {port}: cannot listen there ({exc.strerror or exc})") from None
    errors = err_console()
    started = time.perf_counter()
    errors.print(f"reading and scoring {len(units)} sources ...", markup=False)
    try:
        with job.progress(len(units), "read and scored") as advance:
            loaded = load_sources(units, chosen, advance)
    except BaseException as exc:
        sock.close()
        if isinstance(exc, SourceError):
            raise UserError(str(exc)) from None
        raise
    for problem in loaded.problems:
        job.problem(problem)
    # Shown now: the viewer ends with Ctrl-C, after which the contract prints no list of problems.
    _show_problems(errors, job.problems, None)
    index = EpisodeIndex(loaded.episodes)
    errors.print(
        f"{len(index.episodes)} episodes from {loaded.files} sources, scored ({chosen.name}) and indexed "
        f"in {time.perf_counter() - started:.1f} s",
        markup=False,
    )
    if not is_loopback(host):
        errors.print(
            f"warning: --host {host} lets other machines on the network read these episodes", markup=False
        )
    url = url_of(sock)

    def ready() -> None:
        job.finish(f"the viewer served {len(index.episodes)} episodes at {url}")
        out_console().print(f"sopbench view: {url}  (Ctrl-C to stop)", markup=False)
        sys.stdout.flush()

    serve(
        create_app(index, chosen.name, f"{len(index.episodes)} episodes · protocol {chosen.name}"),
        sock,
        ready,
    )


@verb(
    app,
    name="serve-local",
    epilog="Examples: sopbench serve-local ; sopbench serve-local --port 8081 --model-path models/qwen2.5-0.5b-instruct-q4_k_m.gguf",
)
def serve_local(
    port: Annotated[int, typer.Option(metavar="P", min=0, max=65535, help="Port on 127.0.0.1 (0: any free one).")] = 8080,
    model_path: Annotated[
        Path | None,
        typer.Option(metavar="GGUF", show_default=False, help="A GGUF model file (default: the bundled SmolLM2-135M-Instruct)."),
    ] = None,
    ctx: Annotated[int, typer.Option(metavar="N", min=512, help="Context length in tokens.")] = 16384,
    threads: Annotated[
        int | None, typer.Option(metavar="N", min=1, show_default=False, help="CPU threads (default: every core).")
    ] = None,
) -> None:
    """Serve a local model through llama.cpp's OpenAI-compatible server, for `run --agent openai`.

    Needs the optional extra: pip install 'sopbench[local-llm]'. Listens on 127.0.0.1 only, with the
    function-calling chat format (tool calls in fc mode), prints the base URL and the model name once
    the server answers, and stops it (with every process it started) on Ctrl-C or SIGTERM.
    """
    from sopbench.local import LocalServer, LocalServerError, bundled_gguf, describe

    job = current_job()
    try:
        if model_path is not None:
            job.inputs([model_path], "--model-path")
        server = LocalServer(model_path or bundled_gguf(), port=port, ctx=ctx, threads=threads)
        err_console().print(f"starting llama.cpp's server for {server.gguf.name} ...", markup=False)
        server.start()
    except LocalServerError as exc:
        raise UserError(str(exc)) from None
    try:
        job.finish(f"the local server for {server.model_name} was stopped")
        for line in describe(server):
            out_console().print(line, markup=False, soft_wrap=True)
        sys.stdout.flush()
        code = server.wait()  # until Ctrl-C or SIGTERM (raised here by the verb's contract)
        raise UserError(server.exited(code), EXIT_PARTIAL)
    finally:
        server.stop()  # the whole process group, whatever ended the wait


if __name__ == "__main__":  # last, so that every verb above is registered (python -m sopbench.cli)
    main()
