"""Sound against compat on the same runs, and what each quirk toggled alone changes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sopbench._io import StrPath
from sopbench.traces import (
    Record,
)

from ._api import RunScore, ScoringError, read_files, score_run
from ._protocol import QUIRKS, SOPBENCH, SOUND, Protocol
from ._summary import ALL_DOMAINS, DomainSummary


# ---- sound vs compat, and what each quirk does ---------------------------------------------------
@dataclass
class Comparison:
    """Pass rates under both protocols and, per quirk, how many verdicts it flips.

    ``off_from_compat[q]``: runs whose ``passed`` changes when ``q`` alone is switched off in the
    compat protocol; ``on_from_sound[q]``: when ``q`` alone is switched on in the sound protocol.
    ``field_flips_*`` count runs where any verdict field changes.
    """

    runs: int = 0
    sound: DomainSummary = field(default_factory=lambda: DomainSummary(ALL_DOMAINS))
    compat: DomainSummary = field(default_factory=lambda: DomainSummary(ALL_DOMAINS))
    sound_by_domain: dict[str, DomainSummary] = field(default_factory=dict)
    compat_by_domain: dict[str, DomainSummary] = field(default_factory=dict)
    protocol_flips: int = 0
    off_from_compat: dict[str, int] = field(default_factory=dict)
    on_from_sound: dict[str, int] = field(default_factory=dict)
    field_flips_off_from_compat: dict[str, int] = field(default_factory=dict)
    field_flips_on_from_sound: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def add(self, compared: ComparedRun | str) -> None:
        """Count one run compared, or one problem (its text)."""
        if isinstance(compared, str):
            self.errors.append(compared)
            return
        sound, compat = compared.sound, compared.compat
        self.runs += 1
        self.sound.add(sound)
        self.compat.add(compat)
        self.sound_by_domain.setdefault(sound.domain, DomainSummary(sound.domain)).add(sound)
        self.compat_by_domain.setdefault(compat.domain, DomainSummary(compat.domain)).add(compat)
        self.protocol_flips += sound.passed != compat.passed
        for q, (off, field_off, on, field_on) in compared.flips.items():
            self.off_from_compat[q] = self.off_from_compat.get(q, 0) + off
            self.field_flips_off_from_compat[q] = self.field_flips_off_from_compat.get(q, 0) + field_off
            self.on_from_sound[q] = self.on_from_sound.get(q, 0) + on
            self.field_flips_on_from_sound[q] = self.field_flips_on_from_sound.get(q, 0) + field_on

    def as_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "sound": {d: s.as_dict() for d, s in {**self.sound_by_domain, ALL_DOMAINS: self.sound}.items()},
            "sopbench": {
                d: s.as_dict() for d, s in {**self.compat_by_domain, ALL_DOMAINS: self.compat}.items()
            },
            "verdicts_that_differ": self.protocol_flips,
            "quirk_flips": {
                q: {
                    "off_from_compat": self.off_from_compat.get(q, 0),
                    "on_from_sound": self.on_from_sound.get(q, 0),
                    "any_field_off_from_compat": self.field_flips_off_from_compat.get(q, 0),
                    "any_field_on_from_sound": self.field_flips_on_from_sound.get(q, 0),
                }
                for q in QUIRKS
            },
            "errors": list(self.errors),
        }


@dataclass(frozen=True)
class ComparedRun:
    """One run scored under sound and compat, and what each quirk toggled alone flips: per quirk,
    (``passed`` changes off from compat, any field changes off from compat, ``passed`` changes on
    from sound, any field changes on from sound)."""

    sound: RunScore
    compat: RunScore
    flips: Mapping[str, tuple[bool, bool, bool, bool]]


def compare(
    paths: StrPath | Iterable[StrPath],
    *,
    quirks: Iterable[str] | None = None,
    credit_cards: Callable[[Path], str | None] | None = None,
    first_run_only: bool = False,
) -> Comparison:
    """Score every run under sound, compat, and each quirk toggled alone in both directions."""
    result = Comparison()
    for item in compared_runs(paths, quirks=quirks, credit_cards=credit_cards, first_run_only=first_run_only):
        result.add(item)
    return result


def compared_runs(
    paths: StrPath | Iterable[StrPath],
    *,
    quirks: Iterable[str] | None = None,
    credit_cards: Callable[[Path], str | None] | None = None,
    first_run_only: bool = False,
) -> Iterator[ComparedRun | str]:
    """What ``compare`` adds up, one file at a time and in order: each run compared, or the text of
    a problem (a record or file that cannot be read, a run that cannot be scored)."""
    names = list(quirks) if quirks is not None else list(QUIRKS)
    variants_off = {q: SOPBENCH.with_quirks(disable=[q]) for q in names}
    variants_on = {q: SOUND.with_quirks(enable=[q]) for q in names}
    problems: list[str] = []
    for _position, _path, records, fmt, cards in read_files(
        paths, lambda error: problems.append(str(error)), credit_cards
    ):
        yield from problems
        problems.clear()
        for record in records:
            for run in range(1 if first_run_only else len(record.runs)):
                try:
                    yield _compare_run(record, run, fmt, cards, variants_off, variants_on)
                except ScoringError as error:
                    yield str(error)
    yield from problems


def _compare_run(
    record: Record,
    run: int,
    fmt: str,
    cards: str | None,
    variants_off: Mapping[str, Protocol],
    variants_on: Mapping[str, Protocol],
) -> ComparedRun:
    def score(protocol: Protocol) -> RunScore:
        # The per-file card reading applies to the compat side only; the sound side reads lists.
        chosen = cards if protocol.has("credit_cards_as_shipped") else None
        return score_run(record, run, protocol, output_format=fmt, credit_cards=chosen)

    sound, compat = score(SOUND), score(SOPBENCH)
    off = {q: score(p) for q, p in variants_off.items()}
    on = {q: score(p) for q, p in variants_on.items()}
    flips = {
        q: (
            off[q].passed != compat.passed,
            off[q].verdict != compat.verdict,
            on[q].passed != sound.passed,
            on[q].verdict != sound.verdict,
        )
        for q in off
    }
    return ComparedRun(sound, compat, flips)
