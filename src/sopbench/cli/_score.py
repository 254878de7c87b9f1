"""The verbs that score recorded runs: ``evaluate``, ``leaderboard``, ``compare`` and ``quirks``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._contract import verb
from ._frames import PARQUET, evaluate_to_parquet
from ._job import UserError, current_job, err_console, out_console
from ._options import (
    RUN_CHOICES,
    AsJson,
    BankCards,
    By,
    JustifiedRefusal,
    NoCache,
    Output,
    ProtocolName,
    QuirkOff,
    QuirkOn,
    RankBy,
    Sources,
    breakdowns_of,
    card_choice,
    choice,
    chosen_protocol,
    price_table_of,
    rank_choices,
)
from ._sources import (
    baseline_tasks,
    find_sources,
    nothing_found,
    run_folder_errors,
    runs_to_jsonl,
    scoring_options,
)

EVALUATE_FORMATS = ("jsonl", PARQUET)
RunsOption = Annotated[
    str,
    typer.Option(metavar="all|first", help="All runs of each record, or only the first (as published)."),
]
EvaluateFormat = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="jsonl|parquet",
        help="jsonl (one verdict per line) or parquet (one row per episode, the columns of "
        "sopbench.results.episodes_frame; needs the frames extra and a file for --output).",
    ),
]
PricesOption = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        show_default=False,
        help="TOML or JSON: USD per million input/output tokens per model; adds cost_usd to live runs.",
    ),
]


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
    runs: RunsOption = "all",
    bank_cards: BankCards = None,
    by: By = None,
    prices: PricesOption = None,
    as_json: AsJson = False,
    output_format: EvaluateFormat = "jsonl",
    no_cache: NoCache = False,
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
    --format parquet writes one row per episode instead, with the judgements, the seven checks,
    tokens, latency and cost as columns (pandas.read_parquet reads it back).
    """
    from sopbench.report import EvaluationReport
    from sopbench.results import evaluate

    job = current_job()
    chosen = chosen_protocol(protocol, quirk, no_quirk)
    choice("--format", output_format, EVALUATE_FORMATS)
    choice("--runs", runs, RUN_CHOICES)
    cards = card_choice(bank_cards)
    breakdowns = breakdowns_of(by)
    options = scoring_options(
        chosen, runs=runs, credit_cards=cards, justify_refusal=require_justified_refusal,
        prices=price_table_of(prices), no_cache=no_cache,
    )  # fmt: skip

    if output_format == PARQUET:
        evaluate_to_parquet(
            paths, output, as_json, options, lambda result: EvaluationReport(result, by=breakdowns)
        )
        return

    def produce(sources, write, advance):
        with run_folder_errors():
            result = evaluate(sources, options, write, progress=advance, on_problem=job.problem)
        return EvaluationReport(result, by=breakdowns), result.runs_scored

    runs_to_jsonl(paths, output, as_json, "scored", produce, run_folders=True)


OutputFormat = Annotated[
    str, typer.Option("--format", metavar="markdown|csv|json", help="The document printed.")
]
CompareProtocols = Annotated[
    bool, typer.Option("--compare", help="Add sound vs sopbench per domain, and what each quirk flips.")
]
TasksDir = Annotated[
    Path | None,
    typer.Option(
        metavar="DIR",
        show_default=False,
        help="Task files to play the refuse-all floor on (default: the sources' own tasks: a run "
        "folder's manifest, the tasks inside trajectory files).",
    ),
]
MinCases = Annotated[
    int, typer.Option(metavar="N", min=0, help="Rows with fewer cases are listed apart, not ranked.")
]
OutputOption = Annotated[
    Path, typer.Option("--output", "-o", metavar="FILE", help="Where to write the table; - is stdout.")
]
PassHatK = Annotated[
    bool, typer.Option("--pass-hat-k", help="Add pass^k columns (k = 2..K) for tasks run K times.")
]
LeaderboardRunsOption = Annotated[
    str,
    typer.Option(
        metavar="all|first", help="Every run of each task (mean pass rate), or the first (as published)."
    ),
]


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
    output_format: OutputFormat = "markdown",
    compare_protocols: CompareProtocols = False,
    tasks_dir: TasksDir = None,
    bank_cards: BankCards = None,
    require_justified_refusal: JustifiedRefusal = False,
    min_cases: MinCases = 20,
    output: OutputOption = Path("-"),
    pass_hat_k: PassHatK = False,
    runs: LeaderboardRunsOption = "all",
    by: By = None,
    rank_by: RankBy = "pass",
    no_cache: NoCache = False,
) -> None:
    """The published leaderboard recomputed from trajectory files and run folders.

    One row per (model, mode, tool list, user) configuration and folder, one column per domain and
    Overall (pooled over cases), each cell with its 95% Wilson interval and the number of cases
    behind it (every run of each task: the mean pass rate over runs), then the Overall pass rate
    split into tasks that must succeed and tasks that must be refused, and their balanced mean.
    The unit of every interval is the task (clustered by task when tasks ran K >= 2 times). The
    refuse-all floor, played on the sources' own tasks, is ranked where it scores and marked
    (floor). Rows the exact sign test over shared tasks cannot tell apart from the row above (at
    0.05) share a rank, shown as 3-5. Rows whose domains differ from those of the agents' rows
    together are marked and ranked after the others; rows with fewer than --min-cases cases are
    listed apart below the table.
    """
    from sopbench.report import records_without_trajectory, render_leaderboard
    from sopbench.results import leaderboard

    job = current_job()
    chosen = chosen_protocol(protocol, quirk, no_quirk)
    _check_leaderboard_choices(output_format, runs, compare_protocols)
    choice("--rank-by", rank_by, rank_choices())
    cards = card_choice(bank_cards)
    breakdowns = breakdowns_of(by)
    sources = find_sources(paths)
    target = job.output(output)
    tasks = baseline_tasks(tasks_dir)
    if not len(sources):
        nothing_found(paths)
        return
    options = scoring_options(
        chosen, tasks, runs=runs, credit_cards=cards, justify_refusal=require_justified_refusal,
        min_cases=min_cases, rank_by=rank_by, no_cache=no_cache,
    )  # fmt: skip
    passes = 2 if compare_protocols else 1
    with (
        job.progress(passes * len(sources.files) + len(sources.run_folders), "scored") as advance,
        run_folder_errors(),
    ):
        report = leaderboard(
            sources,
            options,
            pass_hat_k=pass_hat_k,
            by=breakdowns,
            compare=compare_protocols,
            progress=advance,
            on_problem=job.problem,
        )
    named = records_without_trajectory(report.records_without_runs, not_done="not counted")
    if named is not None:
        err_console().print(named, markup=False)
    if not report.scores:  # the table (its floors, if any) is written, but nothing was ranked: exit 1
        job.nothing_to_do(f"no episode to score in {', '.join(str(p) for p in paths)}")
    job.finish("every file was scored")
    job.write_text(target, render_leaderboard(report, output_format))
    if not target.is_stdout:
        err_console().print(f"wrote {target}", markup=False)


def _check_leaderboard_choices(output_format: str, runs: str, compare_protocols: bool) -> None:
    from sopbench.report import LEADERBOARD_FORMATS

    choice("--format", output_format, LEADERBOARD_FORMATS)
    choice("--runs", runs, RUN_CHOICES)
    if compare_protocols and output_format == "csv":
        raise UserError(
            "--compare does not fit in one CSV table: use --format json (one document) or markdown"
        )


A = Annotated[Path, typer.Argument(metavar="A", help="A run folder, trajectory file or folder of them.")]
B = Annotated[Path, typer.Argument(metavar="B", help="The same for the other side.")]
ConfigA = Annotated[
    str | None,
    typer.Option(
        metavar="FILTER",
        show_default=False,
        help="Choose A's configuration: key=value pairs (agent, model, tool_mode, tool_list, user) "
        "separated by commas, or a text of its name.",
    ),
]
ConfigB = Annotated[
    str | None, typer.Option(metavar="FILTER", show_default=False, help="Choose B's configuration.")
]
AsJsonOption = Annotated[bool, typer.Option("--json", help="Same as --format json.")]
CompareViewerUrl = Annotated[
    str | None,
    typer.Option(
        metavar="URL",
        show_default=False,
        help="Where sopbench view serves both sides: each flipped run links to its side-by-side page.",
    ),
]
AllowDifferentTasks = Annotated[
    bool,
    typer.Option(
        "--allow-different-tasks",
        help="When a task id names other tasks on the two sides (other task sets), compare the same "
        "tasks only and name the others (default: refuse, exit 2).",
    ),
]
CompareRunsOption = Annotated[
    str,
    typer.Option(metavar="all|first", help="Every run of each task, or each task's first run only."),
]


@verb(
    app,
    epilog="Examples: sopbench compare runs/reference runs/no-verify ;  sopbench compare "
    "../shared/sopbench/trajectories ../shared/sopbench/trajectories --protocol sopbench "
    "--config-a model=gpt-4o,tool_mode=fc,tool_list=full,user=none "
    "--config-b model=gpt-4o-mini,tool_mode=fc,tool_list=full,user=none",
)
def compare(
    a: A,
    b: B,
    protocol: ProtocolName = "sound",
    quirk: QuirkOn = None,
    no_quirk: QuirkOff = None,
    config_a: ConfigA = None,
    config_b: ConfigB = None,
    by: By = None,
    as_json: AsJsonOption = False,
    output_format: OutputFormat = "markdown",
    viewer_url: CompareViewerUrl = None,
    runs: CompareRunsOption = "all",
    allow_different_tasks: AllowDifferentTasks = False,
    no_cache: NoCache = False,
) -> None:
    """Compare two agents on the same tasks: runs paired by task (same id and same content) and run.

    The unit of every figure is the task. Prints the paired tasks, each side's pass rate with its
    95% interval (Wilson's; clustered by task when tasks ran K >= 2 times), the difference with a
    95% paired bootstrap interval over tasks (seeded, 2,000 resamples), the p-value of the exact
    sign test over tasks (McNemar's exact test when each task ran once), per domain and overall,
    and the runs that flipped with each side's first failing judgement. --by goal pairs per
    (domain, goal). Runs on one side only are counted and named. Both sides must hold one
    configuration (--config-a / --config-b), the same K, and the same task under each shared id.
    """
    from sopbench.report import COMPARE_FORMATS, CompareReport, render_compare
    from sopbench.results import CompareError, RunFolderError, compare

    job = current_job()
    chosen = chosen_protocol(protocol, quirk, no_quirk)
    if as_json:
        output_format = "json"
    choice("--format", output_format, COMPARE_FORMATS)
    choice("--runs", runs, RUN_CHOICES)
    breakdowns = breakdowns_of(by)
    sides = [find_sources([path]) for path in (a, b)]
    for path, side in zip((a, b), sides, strict=True):
        if not len(side):
            raise UserError(f"{path}: no run folder and no trajectory file (.json, .json.gz) here")
    with job.progress(sum(len(side) for side in sides), "read") as advance:
        try:
            compared = compare(
                sides[0],
                sides[1],
                scoring_options(chosen, runs=runs, no_cache=no_cache),
                config_a=config_a,
                config_b=config_b,
                allow_different_tasks=allow_different_tasks,
                progress=advance,
                on_problem=job.problem,
            )
        except (CompareError, RunFolderError) as exc:
            raise UserError(str(exc)) from None
    report = CompareReport(compared, by=breakdowns, viewer_url=viewer_url)
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


QuirksAsJsonOption = Annotated[bool, typer.Option("--json", help="Print them as one JSON document.")]


@verb(
    app,
    name="quirks",
    epilog="Example: sopbench evaluate ../shared/sopbench/trajectories/dmv --protocol sound --quirk python_eval "
    "-o out.jsonl",
)
def quirks(
    as_json: QuirksAsJsonOption = False,
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
