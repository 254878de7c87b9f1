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


@app.command(
    epilog="Example: [bold]sopbench diagnose --seed 42[/bold]",
)
def diagnose(
    seed: Annotated[int, typer.Option(help="Seed of the constructed traces (deterministic per seed).")] = 42,
    per_kind: Annotated[int, typer.Option(min=1, help="Traces built for each kind of behaviour.")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON instead of a table.")] = False,
) -> None:
    """Self-check the evaluator on constructed traces whose verdicts are known in advance.

    Exits non-zero if any trace gets an unexpected verdict.
    """
    from sopbench.evaluation import DiagnosticFailure, diagnostic

    try:
        result = diagnostic(seed, per_kind=per_kind)
    except DiagnosticFailure as exc:
        errors.print(f"[red]diagnostic failed:[/red] {exc}")
        raise typer.Exit(1) from exc
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return
    table = Table(title=f"diagnostic, seed {seed} (traces {result['digest']})")
    for column in ("kind", "fixtures", "accepted", "rejected"):
        table.add_column(column, justify="left" if column == "kind" else "right")
    for kind, counts in result["kinds"].items():
        table.add_row(kind, str(counts["fixtures"]), str(counts["accepted"]), str(counts["rejected"]))
    table.add_row("total", str(result["fixtures"]), str(result["accepted"]), str(result["rejected"]), style="bold")
    console.print(table)
    console.print("[green]every verdict is the expected one[/green]")


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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
