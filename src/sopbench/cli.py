"""The ``sopbench`` command line. Each verb parses options and calls one library function."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import orjson
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

app = typer.Typer(
    name="sopbench",
    help="Measure whether tool-using LLM agents follow standard operating procedures (SOPBench).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
)
console = Console()
errors = Console(stderr=True)


@app.callback()
def _root() -> None:
    """Evaluate agent traces against SOPs: diagnose, replay, evaluate, leaderboard."""


DEFAULT_TASKS_DIR = Path("../shared/sopbench/tasks")


@app.command(
    epilog="Examples: [bold]sopbench diagnose --seed 42[/bold]   "
    "[bold]sopbench diagnose --seed 42 --tasks all --tasks-dir ../shared/sopbench/tasks[/bold]",
)
def diagnose(
    seed: Annotated[int, typer.Option(help="Seed of the constructed traces (deterministic per seed).")] = 42,
    per_kind: Annotated[int, typer.Option(min=1, help="Traces built for each kind (built-in SOP only).")] = 5,
    tasks: Annotated[
        str | None,
        typer.Option(help="Also build traces over published tasks: 'all' or comma-separated domains."),
    ] = None,
    tasks_dir: Annotated[Path, typer.Option(help="Folder of <domain>_tasks.json[.gz] files.")] = DEFAULT_TASKS_DIR,
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON instead of a table.")] = False,
) -> None:
    """Self-check the evaluator on constructed traces whose verdicts are known in advance.

    Without --tasks: ten kinds of traces over a small built-in SOP. With --tasks: for every
    published task, a reference trace (must pass) and its mutants (skipped helper, swapped steps,
    wrong user, forbidden execution, refusal, claimed success, extra reads), scored with the sound
    protocol. Exits non-zero on any unexpected verdict.
    """
    from sopbench.evaluation import DiagnosticFailure, diagnostic

    try:
        result = diagnostic(seed, per_kind=per_kind)
    except DiagnosticFailure as exc:
        errors.print(f"[red]diagnostic failed:[/red] {exc}")
        raise typer.Exit(1) from exc
    over_tasks = _diagnose_tasks(tasks, tasks_dir, seed) if tasks else None
    if as_json:
        payload = {**result, "tasks": over_tasks} if over_tasks is not None else result
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    else:
        _print_kinds(f"built-in SOP, seed {seed} (traces {result['digest']})", result["kinds"], result)
        if over_tasks is not None:
            _print_kinds(f"published tasks, seed {seed}", over_tasks["kinds"], over_tasks)
            console.print(
                f"{len(over_tasks['unreachable_goals'])} tasks skipped: their goal is never offered to an agent; "
                f"{len(over_tasks['unverifiable_tasks'])} tasks no agent can verify (see --json)"
            )
    if over_tasks is not None and over_tasks["surprises"]:
        for surprise in over_tasks["surprises"][:20]:
            errors.print(f"[red]unexpected:[/red] {surprise}")
        raise typer.Exit(1)
    if not as_json:
        console.print("[green]every verdict is the expected one[/green]")


def _diagnose_tasks(selection: str, tasks_dir: Path, seed: int) -> dict[str, object]:
    from sopbench.diagnosis import diagnose_tasks
    from sopbench.domains import PUBLISHED_DOMAINS
    from sopbench.tasks import load_tasks

    domains = list(PUBLISHED_DOMAINS) if selection == "all" else [d.strip() for d in selection.split(",")]
    unknown = [d for d in domains if d not in PUBLISHED_DOMAINS]
    if unknown:
        errors.print(f"[red]unknown domain(s):[/red] {', '.join(unknown)} (known: {', '.join(PUBLISHED_DOMAINS)})")
        raise typer.Exit(2)
    files = {d: _task_file(tasks_dir, d) for d in domains}
    all_tasks = [task for d in domains for task in load_tasks(files[d])]
    with _progress(len(all_tasks), "diagnosing") as advance:
        diagnosis = diagnose_tasks(all_tasks, seed=seed, progress=lambda task: advance(Path(task.goal)))
    return diagnosis.as_dict()


def _task_file(tasks_dir: Path, domain: str) -> Path:
    for name in (f"{domain}_tasks.json.gz", f"{domain}_tasks.json"):
        if (tasks_dir / name).exists():
            return tasks_dir / name
    errors.print(f"[red]no task file for {domain} in {tasks_dir}[/red] (expected {domain}_tasks.json[.gz])")
    raise typer.Exit(2)


def _print_kinds(title: str, kinds: dict[str, dict[str, int]], totals: dict[str, object]) -> None:
    table = Table(title=title)
    columns = ["fixtures", "accepted", "rejected"] + (["unexpected"] if "unexpected" in totals else [])
    table.add_column("kind")
    for column in columns:
        table.add_column(column, justify="right")
    for kind, counts in kinds.items():
        table.add_row(kind, *(str(counts[c]) for c in columns))
    table.add_row("total", *(str(totals[c]) for c in columns), style="bold")
    console.print(table)


@app.command(
    epilog="Example: [bold]sopbench replay ../shared/sopbench/trajectories --output replay.jsonl[/bold]",
)
def replay(
    paths: Annotated[list[Path], typer.Argument(help="Trajectory files (.json, .json.gz) or folders of them.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="JSON Lines file: one line per replayed run.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")] = False,
) -> None:
    """Re-execute recorded tool calls on fresh lenient systems and compare with the recordings.

    Writes one JSON line per run (source, domain, record, run, tool_outputs, final_database,
    errors, ...) and prints, per domain, how many tool outputs and final databases match the
    recorded ones. Runs whose conversation belongs to another task are counted as misaligned.
    """
    from sopbench.replay import ReplaySummary, replay_paths
    from sopbench.traces import iter_trajectory_files

    _check_paths(paths)
    files = list(iter_trajectory_files(paths))
    summary = ReplaySummary()
    problems: list[str] = []
    with _progress(len(files), "replaying") as advance, output.open("wb") as sink:
        for result in replay_paths(paths, on_error=lambda e: problems.append(str(e)), on_file=advance):
            summary.add(result)
            sink.write(orjson.dumps(result.to_json(), option=orjson.OPT_NON_STR_KEYS) + b"\n")
    _report_problems(problems)
    rows = summary.rows()
    if as_json:
        sys.stdout.write(json.dumps({"files": len(files), "domains": rows}, indent=2) + "\n")
        return
    table = Table(title=f"replay of {len(files)} files")
    columns = ["domain", "runs", "misaligned_runs", "tool_outputs", "tool_outputs_matching",
               "tool_outputs_matching_pct", "final_databases_matching", "final_databases_matching_pct"]
    for column in columns:
        table.add_column(column.replace("_", " "), justify="left" if column == "domain" else "right")
    for row in rows:
        table.add_row(*(_cell(row[c]) for c in columns))
    console.print(table)
    console.print(f"wrote {output}")


ProtocolName = Annotated[str, typer.Option("--protocol", help="sound (default) or sopbench (the published evaluator).")]
QuirkOn = Annotated[list[str] | None, typer.Option("--quirk", help="Turn a named quirk on (repeatable).")]
QuirkOff = Annotated[list[str] | None, typer.Option("--no-quirk", help="Turn a named quirk off (repeatable).")]
BankCards = Annotated[
    Path | None,
    typer.Option(help="CSV (file,credit_cards_as_when_scored) choosing the bank card reading per file."),
]


def _protocol(name: str, enable: list[str] | None, disable: list[str] | None):
    from sopbench.scoring import protocol_by_name

    try:
        return protocol_by_name(name).with_quirks(enable=enable or [], disable=disable or [])
    except ValueError as exc:
        errors.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc


def _card_choice(csv_path: Path | None) -> Callable[[Path], str | None] | None:
    """Per-file bank card semantics from a CSV such as ../shared/sopbench/bank_scoring_semantics.csv."""
    if csv_path is None:
        return None
    import csv

    try:
        with csv_path.open(newline="") as handle:
            table = {row["file"]: row["credit_cards_as_when_scored"] for row in csv.DictReader(handle)}
    except (OSError, KeyError) as exc:
        errors.print(f"[red]cannot read {csv_path}:[/red] {exc} (columns: file,credit_cards_as_when_scored)")
        raise typer.Exit(2) from exc

    def choose(path: Path) -> str | None:
        name = path.name[:-3] if path.name.endswith(".gz") else path.name
        return table.get(name)

    return choose


@app.command(
    epilog="Example: [bold]sopbench evaluate ../shared/sopbench/trajectories --protocol sopbench "
    "--output verdicts.jsonl[/bold]",
)
def evaluate(
    paths: Annotated[list[Path], typer.Argument(help="Trajectory files (.json, .json.gz) or folders of them.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="JSON Lines file: one verdict per run.")],
    protocol: ProtocolName = "sound",
    quirk: QuirkOn = None,
    no_quirk: QuirkOff = None,
    require_justified_refusal: Annotated[
        bool, typer.Option(help="Also judge whether each correct refusal revealed a violated constraint.")
    ] = False,
    runs: Annotated[str, typer.Option(help="all runs of each record, or only the first (as published).")] = "all",
    bank_cards: BankCards = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")] = False,
) -> None:
    """Score recorded trajectories: one verdict per run, then a summary per domain.

    Each line of --output holds source, domain, record, run, protocol, the verdict (passed,
    database, permission, procedure and the seven published checks) and explanations. The summary
    gives runs, pass rate, the rates on tasks that must succeed and must be refused, their balanced
    mean, and failures by judgement. Records without a trajectory are counted, not dropped.
    """
    from sopbench.scoring import ScoringReport, score_paths, summarize
    from sopbench.traces import iter_trajectory_files

    _check_paths(paths)
    if runs not in ("all", "first"):
        errors.print("[red]--runs takes 'all' or 'first'[/red]")
        raise typer.Exit(2)
    chosen = _protocol(protocol, quirk, no_quirk)
    files = list(iter_trajectory_files(paths))
    report = ScoringReport()
    scores = []
    with _progress(len(files), "scoring") as advance, output.open("wb") as sink:
        stream = score_paths(
            paths, chosen, report=report, credit_cards=_card_choice(bank_cards), runs=runs,
            justify_refusal=require_justified_refusal, progress=lambda path, *_: advance(path),
        )
        for score in stream:
            scores.append(score)
            sink.write(orjson.dumps(score.to_json()) + b"\n")
    summary = summarize(scores)
    _report_problems(report.errors)
    if as_json:
        payload = {"protocol": str(chosen), "report": report.as_dict(), "domains": summary.as_dict()}
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return
    table = Table(title=f"{len(scores)} runs scored with protocol {chosen}")
    columns = ["domain", "runs", "pass rate", "must succeed", "must refuse", "balanced", "database",
               "permission", "procedure"]
    if require_justified_refusal:
        columns.append("justified refusals")
    for column in columns:
        table.add_column(column, justify="left" if column == "domain" else "right")
    for name, domain in summary.domains.items():
        failures = domain.failures
        row = [name, str(domain.runs), _pct(domain.pass_rate), _rate(domain.succeed_rate), _rate(domain.refuse_rate),
               _pct(domain.balanced), str(failures.get("database", 0)), str(failures.get("permission", 0)),
               str(failures.get("procedure", 0))]
        if require_justified_refusal:
            justified = domain.justified_refusal_rate
            row.append("-" if justified is None else _rate(justified))
        table.add_row(*row, style="bold" if name == "all" else None)
    console.print(table)
    console.print("failures by judgement count failed runs; a run can fail several judgements")
    if report.records_without_runs:
        console.print(f"{len(report.records_without_runs)} records have no trajectory (not scored)")
    console.print(f"wrote {output}")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"


def _rate(rate) -> str:
    return "-" if not rate.total else f"{100 * rate.passed / rate.total:.2f}% ({rate.passed}/{rate.total})"


@app.command(
    epilog="Example: [bold]sopbench leaderboard ../shared/sopbench/trajectories --protocol sopbench "
    "--format markdown[/bold]",
)
def leaderboard(
    paths: Annotated[list[Path], typer.Argument(help="Trajectory files or folders of <domain>/ subfolders.")],
    protocol: ProtocolName = "sound",
    quirk: QuirkOn = None,
    no_quirk: QuirkOff = None,
    output_format: Annotated[str, typer.Option("--format", help="markdown, csv or json.")] = "markdown",
    compare_protocols: Annotated[
        bool, typer.Option("--compare", help="Sound and compat side by side, and what each quirk flips.")
    ] = False,
    tasks_dir: Annotated[
        Path, typer.Option(help="Task files for the refuse-all row (else the tasks inside the records).")
    ] = DEFAULT_TASKS_DIR,
    bank_cards: BankCards = None,
    require_justified_refusal: Annotated[
        bool, typer.Option(help="Add a column: correct refusals that revealed a violated constraint.")
    ] = False,
) -> None:
    """The published leaderboard recomputed from trajectory files.

    One row per (model, mode, tool list, user) configuration, one column per domain and Overall
    (pooled over cases), each cell with the number of cases behind it (first run of each record),
    then the Overall pass rate split into tasks that must succeed and tasks that must be refused,
    and their balanced mean. A refuse-all baseline row is always included.
    """
    from sopbench.scoring import ScoringReport, compare, refuse_all_scores, score_paths
    from sopbench.scoring import leaderboard as build_leaderboard

    _check_paths(paths)
    if output_format not in ("markdown", "csv", "json"):
        errors.print("[red]--format takes markdown, csv or json[/red]")
        raise typer.Exit(2)
    chosen = _protocol(protocol, quirk, no_quirk)
    cards = _card_choice(bank_cards)
    report = ScoringReport()
    justify = require_justified_refusal
    scores = list(
        score_paths(paths, chosen, report=report, credit_cards=cards, runs="first", justify_refusal=justify)
    )
    _report_problems(report.errors)
    baseline = refuse_all_scores(_baseline_tasks(tasks_dir, paths), chosen, justify_refusal=justify)
    rows = build_leaderboard(scores, baseline=baseline)
    sys.stdout.write(render_leaderboard(rows, output_format, justified=justify))
    if compare_protocols:
        comparison = compare(paths, credit_cards=cards, first_run_only=True)
        if output_format == "json":
            sys.stdout.write(json.dumps(comparison.as_dict(), indent=2) + "\n")
        else:
            _print_comparison(comparison)


def _baseline_tasks(tasks_dir: Path, paths: list[Path]):
    from sopbench.tasks import iter_all_tasks
    from sopbench.traces import iter_records

    if tasks_dir.is_dir():
        return list(iter_all_tasks(tasks_dir))
    seen: dict[tuple[str, str, str], object] = {}
    for record in iter_records(paths, keep_going=True, on_error=lambda _e: None):
        key = (record.domain, record.task.goal, record.task.user_prompt)
        seen.setdefault(key, record.task)
    errors.print(f"[yellow]{tasks_dir} not found: the refuse-all row uses the {len(seen)} tasks inside the records[/yellow]")
    return list(seen.values())


def render_leaderboard(rows, output_format: str, *, justified: bool = False) -> str:
    """The leaderboard as markdown, CSV or JSON text (``justified``: with the justified-refusal column)."""
    from sopbench.domains import PUBLISHED_DOMAINS

    if output_format == "json":
        return json.dumps([row.as_dict() for row in rows], indent=2) + "\n"
    present = {d for row in rows for d in row.cells}
    domains = [d for d in PUBLISHED_DOMAINS if d in present] + sorted(present - set(PUBLISHED_DOMAINS))
    split = ["should succeed", "should refuse", "balanced"] + (["justified refusals"] if justified else [])
    header = ["model", "mode", "tool list", "user", *domains, "Overall", *split]
    csv_form = output_format == "csv"

    def cell(passed: int | None, cases: int | None) -> str:
        if not cases:
            return ""
        return f"{passed}/{cases}" if csv_form else f"{100 * passed / cases:.2f} ({cases})"

    def split_cells(row) -> list[str]:
        pooled = row.pooled
        if pooled is None:
            return [""] * len(split)
        values = [cell(*pooled.should_succeed), cell(*pooled.should_refuse)]
        values.append("" if pooled.balanced is None else f"{100 * pooled.balanced:.2f}")
        if justified:
            values.append(cell(*pooled.justified))
        return values

    lines = []
    for row in rows:
        values = [row.model, row.mode, row.tool_list, row.user or ("" if csv_form else "-")]
        values += [cell(row.cells[d].passed, row.cells[d].cases) if d in row.cells else "" for d in domains]
        values += [cell(row.overall.passed, row.overall.cases), *split_cells(row)]
        lines.append(values)
    if csv_form:
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(lines)
        return buffer.getvalue()
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(values) + " |" for values in lines]
    note = (
        "\n\nCells: pass rate % (cases). Overall is pooled over all cases of the row; should succeed and "
        "should refuse split it by the task's expected outcome, and balanced is their mean (50 for refusing "
        "everything)."
    )
    if justified:
        note += (
            " Justified refusals: correct refusals made once the agent had called the helpers that reveal a "
            "violated constraint (none, when the request itself shows it)."
        )
    return "\n".join(out) + note + "\n"


def _print_comparison(comparison) -> None:
    data = comparison.as_dict()
    table = Table(title=f"sound vs sopbench on {data['runs']} runs ({data['verdicts_that_differ']} verdicts differ)")
    for column in ("domain", "sound", "sopbench"):
        table.add_column(column, justify="left" if column == "domain" else "right")
    for domain, sound in data["sound"].items():
        compat = data["sopbench"].get(domain, {})
        table.add_row(domain, _pct(sound.get("pass_rate")), _pct(compat.get("pass_rate")))
    console.print(table)
    quirks = Table(title="verdicts each quirk flips")
    for column in ("quirk", "turned off from sopbench", "turned on from sound"):
        quirks.add_column(column, justify="left" if column == "quirk" else "right")
    for name, flips in data["quirk_flips"].items():
        quirks.add_row(name, str(flips["off_from_compat"]), str(flips["on_from_sound"]))
    console.print(quirks)



def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def _check_paths(paths: list[Path]) -> None:
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        errors.print(f"[red]no such file or folder:[/red] {', '.join(missing)}")
        raise typer.Exit(2)


def _report_problems(problems: list[str]) -> None:
    for problem in problems[:20]:
        errors.print(f"[yellow]skipped:[/yellow] {problem}")
    if len(problems) > 20:
        errors.print(f"[yellow]... and {len(problems) - 20} more problems[/yellow]")


@contextmanager
def _progress(total: int, what: str) -> Iterator[Callable[[Path], None]]:
    """A progress bar over files on stderr (quiet when stderr is not a terminal)."""
    with Progress(
        TextColumn(f"{what} {{task.fields[name]}}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=errors, transient=True, disable=not errors.is_terminal,
    ) as progress:
        task = progress.add_task(what, total=total, name="")
        seen = [0]

        def advance(path: Path) -> None:
            if seen[0]:
                progress.advance(task)
            seen[0] += 1
            progress.update(task, name=path.name[:48])

        yield advance


@app.command(
    epilog="Examples: [bold]sopbench generate --domain all --output tasks[/bold]   "
    "[bold]sopbench generate --domain bank --seed 7 --per-assignment 2 --compare ../shared/sopbench/tasks "
    "--output tasks[/bold]",
)
def generate(
    domain: Annotated[str, typer.Option(help="A domain name, or 'all' for the seven published domains.")],
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="Folder for <domain>_tasks.json and <domain>_coverage.json."),
    ],
    seed: Annotated[int, typer.Option(help="Seed: the same seed gives byte-identical files.")] = 0,
    goals: Annotated[str | None, typer.Option(help="Only these goals (comma-separated tool names).")] = None,
    per_assignment: Annotated[
        int, typer.Option(min=1, help="Distinct tasks made for each (variant, assignment).")
    ] = 1,
    compare: Annotated[
        Path | None,
        typer.Option(help="Published task file or folder to compare with, combination by combination."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the coverage reports as one JSON document.")
    ] = False,
) -> None:
    """Generate tasks without an LLM: every SOP variant and outcome, realised by search, verified by the oracle.

    For each goal of a domain: its SOP variants (the required part, then with each subset of the
    optional constraints) and each variant's outcome assignments (which constraints must hold or
    fail). Each assignment gets a database, user-known values and parameters that realise it, found
    by a seeded search and kept only when the strict oracle's reference path gives the expected
    outcome. Writes <domain>_tasks.json (the published layout) and <domain>_coverage.json. Exits 1
    when some combination could not be realised (each is listed with its reason).
    """
    from sopbench.domains import PUBLISHED_DOMAINS, domain_names, get_domain
    from sopbench.generation import generate as generate_tasks
    from sopbench.generation import goals as goals_of

    names = (
        list(PUBLISHED_DOMAINS) if domain == "all" else [d.strip() for d in domain.split(",") if d.strip()]
    )
    known = set(domain_names())
    unknown = [d for d in names if d not in known]
    if unknown or not names:
        errors.print(
            f"[red]unknown domain {', '.join(unknown) or domain!r}[/red]; known: all, {', '.join(sorted(known))}"
        )
        raise typer.Exit(2)
    wanted = [g.strip() for g in goals.split(",") if g.strip()] if goals else None
    if wanted is not None:
        offered = {g for d in names for g in goals_of(get_domain(d).catalogue)}
        missing = [g for g in wanted if g not in offered]
        if missing:
            errors.print(f"[red]unknown goal {', '.join(missing)}[/red] in {', '.join(names)}")
            raise typer.Exit(2)
        names = [d for d in names if set(wanted) & set(goals_of(get_domain(d).catalogue))]
    if compare is not None and not compare.exists():
        errors.print(f"[red]no such file or folder:[/red] {compare}")
        raise typer.Exit(2)
    if output.exists() and not output.is_dir():
        errors.print(f"[red]--output must be a folder:[/red] {output} is a file")
        raise typer.Exit(2)
    with _progress(len(names), "generating") as advance:
        started: list[str] = []

        def on_goal(name: str, goal: str) -> None:
            if name not in started:  # one step of the bar per domain
                started.append(name)
                advance(Path(name))

        try:
            done = generate_tasks(
                names,
                output,
                seed=seed,
                goals=wanted,
                per_assignment=per_assignment,
                compare_with=compare,
                progress=on_goal,
            )
        except KeyError as exc:  # a custom domain without a world database, say
            errors.print(f"[red]cannot generate:[/red] {exc.args[0] if exc.args else exc}")
            raise typer.Exit(2) from None
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
    if as_json:
        sys.stdout.write(json.dumps({"domains": reports}, indent=2) + "\n")
    else:
        _print_generation(reports, compared=compare is not None)
    if any(r["unrealisable"] for r in reports):
        raise typer.Exit(1)


def _print_generation(reports: list[dict], *, compared: bool) -> None:
    table = Table(title="generated tasks (all verified on the strict oracle)")
    columns = ["domain", "goals", "variants", "assignments", "realised", "tasks", "must succeed", "seconds"]
    if compared:
        columns += ["published combos", "ours", "both", "published only"]
    for column in columns:
        table.add_column(column, justify="left" if column == "domain" else "right")
    for r in reports:
        row = [
            r["domain"],
            r["goals"],
            r["variants"],
            r["assignments"],
            r["realised"],
            r["tasks"],
            r["must_succeed"],
            f"{r['seconds']:.1f}",
        ]
        if compared:
            c = r.get("comparison")
            row += (
                [
                    c["covered_by_published"],
                    c["covered_by_generated"],
                    c["covered_by_both"],
                    c["published_only"],
                ]
                if c
                else ["-"] * 4
            )
        table.add_row(*map(str, row))
    console.print(table)
    for r in reports:
        for u in r["unrealisable"][:10]:
            errors.print(
                f"[yellow]unrealisable[/yellow] {r['domain']} {u['goal']} variant {u['variant']} "
                f"(must {'succeed' if u['outcome'] else 'fail'}): {u['reason']}"
            )
        if len(r["unrealisable"]) > 10:
            errors.print(
                f"[yellow]... and {len(r['unrealisable']) - 10} more in {r['domain']}_coverage.json[/yellow]"
            )


def main() -> None:
    app()


if __name__ == "__main__":
    main()
