"""The ``sopbench`` command line. Each verb parses options and calls one library function."""

from __future__ import annotations

import json
import sys

import typer
from rich.console import Console
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
    seed: int = typer.Option(42, help="Seed of the constructed traces (results are deterministic per seed)."),
    per_kind: int = typer.Option(5, min=1, help="Traces built for each kind of behaviour."),
    as_json: bool = typer.Option(False, "--json", help="Print the counts as JSON instead of a table."),
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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
