"""The per-file bank card reading (``--bank-cards``): which files were scored with cards as a list
and which as a dict, e.g. ``../shared/sopbench/bank_scoring_semantics.csv``."""

from __future__ import annotations

import csv
from collections.abc import Callable
from os import PathLike
from pathlib import Path

from sopbench.tasks import LoadError

CARD_READINGS = ("list", "dict")
CARD_COLUMNS = ("file", "credit_cards_as_when_scored")

CardChoice = Callable[[Path], str | None]


def read_card_choices(path: str | PathLike[str]) -> CardChoice:
    """Read the CSV (columns ``file,credit_cards_as_when_scored``; values ``list`` or ``dict``) and
    return ``choose(trajectory_path)`` -> the reading for that file, or None when it is not listed.

    Raises ``LoadError`` naming the file and line of the first bad row.
    """
    path = Path(path)
    table: dict[str, str] = {}
    try:
        with path.open(newline="") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in CARD_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise LoadError(
                    f"missing column(s) {', '.join(missing)} (expected {','.join(CARD_COLUMNS)})", file=path
                )
            for row in reader:
                name, reading = row["file"], (row["credit_cards_as_when_scored"] or "").strip()
                if reading not in CARD_READINGS:
                    raise LoadError(
                        f"line {reader.line_num}: {reading!r} for {name} is not a card reading "
                        f"(expected {' or '.join(CARD_READINGS)})",
                        file=path,
                    )
                table[_bare_name(name)] = reading
    except OSError as exc:
        raise LoadError(f"cannot read file ({exc.strerror or exc})", file=path) from None
    except (csv.Error, UnicodeDecodeError) as exc:
        raise LoadError(f"not a CSV file ({exc})", file=path) from None

    def choose(trajectory: Path) -> str | None:
        return table.get(_bare_name(trajectory.name))

    return choose


def _bare_name(name: str) -> str:
    return name[:-3] if name.endswith(".gz") else name
