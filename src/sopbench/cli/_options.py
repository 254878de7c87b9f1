"""Option types shared by several verbs, and the checks that turn an option into a value (each
failure a ``UserError`` naming the option)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sopbench.tasks import LoadError

from ._job import UserError, current_job

if TYPE_CHECKING:
    from sopbench.results import CardChoice
    from sopbench.scoring import Protocol

DEFAULT_TASKS_DIR = Path("../shared/sopbench/tasks")
RUN_CHOICES = ("all", "first")


def published_or(value: Path | None, kind: str) -> Path | None:
    """``published`` (when no such file or folder is here) as the cached ``kind`` folder."""
    if value is None or str(value) != "published" or value.exists():
        return value
    from sopbench.published import PublishedMissing, published_path

    try:
        return published_path(kind)
    except PublishedMissing as exc:
        raise typer.BadParameter(str(exc)) from None


def published_tasks(value: Path | None) -> Path | None:
    """The typer callback of ``--tasks``: ``published`` names the cached task files."""
    return published_or(value, "tasks")


def published_sources(values: list[Path] | None) -> list[Path] | None:
    """The typer callback of source arguments: ``published`` names the cached trajectories."""
    return None if values is None else [published_or(v, "trajectories") or v for v in values]


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
        help="Run folders of sopbench run (results.sqlite), trajectory files (.json, .json.gz) or folders of "
        "them; published: the trajectories `sopbench data fetch` keeps.",
        show_default=False,
        callback=published_sources,
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
NoCache = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Score everything again, without reading or writing the verdict cache (sopbench cache info).",
    ),
]
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


# ---- shared option handling ----------------------------------------------------------------------
def chosen_protocol(name: str, enable: list[str] | None, disable: list[str] | None) -> Protocol:
    from sopbench.scoring import protocol_by_name

    try:
        chosen = protocol_by_name(name)
    except ValueError as exc:
        raise UserError(f"--protocol {name}: {exc}") from None
    try:
        return chosen.with_quirks(enable=enable or [], disable=disable or [])
    except ValueError as exc:
        raise UserError(f"--quirk/--no-quirk: {exc} (list them with: sopbench quirks)") from None


def card_choice(csv_path: Path | None) -> CardChoice | None:
    """The per-file bank card reading from --bank-cards (checked whole before any output is touched)."""
    if csv_path is None:
        return None
    from sopbench.results import read_card_choices

    current_job().inputs([csv_path], "--bank-cards")
    try:
        return read_card_choices(csv_path)
    except LoadError as exc:
        raise UserError(f"--bank-cards {csv_path}: {exc.message}") from None


def breakdowns_of(by: list[str] | None) -> list[str]:
    from sopbench.statistics import BREAKDOWNS

    chosen = []
    for item in by or ():
        for name in (part.strip() for part in item.split(",")):
            if name not in BREAKDOWNS:
                raise UserError(f"--by {name}: choose {', '.join(BREAKDOWNS)}")
            if name not in chosen:
                chosen.append(name)
    return chosen


def price_table_of(path: Path | None) -> dict[str, tuple[float, float]] | None:
    """The --prices table (checked whole before any output is touched)."""
    if path is None:
        return None
    from sopbench.results import read_prices

    current_job().inputs([path], "--prices")
    try:
        return read_prices(path)
    except ValueError as exc:
        raise UserError(f"--prices {path}: {exc}") from None


def what_is(path: Path) -> str:
    return "a file" if path.is_file() else "not a folder"


def choice(option: str, value: str, choices: Sequence[str]) -> str:
    """``value`` when it is one of ``choices``; else a ``UserError`` listing them."""
    if value not in choices:
        raise UserError(f"{option} {value}: choose {', '.join(choices[:-1])} or {choices[-1]}")
    return value


# --rank-by of leaderboard and report (checked against rank_choices())
RankBy = Annotated[
    str,
    typer.Option(
        metavar="pass|balanced",
        help="Rank by the Overall pass rate, or by the balanced score (mean of the must-succeed and "
        "must-refuse rates).",
    ),
]


def rank_choices() -> tuple[str, ...]:
    """What --rank-by takes (the leaderboard's orders)."""
    from sopbench.scoring import RANK_BY

    return RANK_BY
