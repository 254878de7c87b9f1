"""The domain selection every verb takes (``--domain``, ``diagnose --tasks``): ``all``, or domain names
separated by commas; custom domains (the ``sopbench.domains`` entry point, ``register_domain`` in a
module given to ``--import``) are accepted wherever the published ones are."""

from __future__ import annotations

from collections.abc import Iterable

from ._registry import PUBLISHED_DOMAINS, domain_names

ALL_DOMAINS = "all"


class UnknownDomainSelection(ValueError):
    """A domain selection naming a domain that is not known (the message names it and the known ones)."""


def domain_selection(text: str | Iterable[str]) -> tuple[str, ...]:
    """The names of a selection as written: split at commas, blanks and repeats dropped, ``all`` kept
    as it is (what ``all`` means is up to the reader: the published domains, or every task file of a
    folder)."""
    parts = text.split(",") if isinstance(text, str) else text
    names: list[str] = []
    for part in parts:
        name = part.strip()
        if name and name not in names:
            names.append(name)
    return tuple(names)


def ordered_domains(names: Iterable[str]) -> list[str]:
    """``names`` once each in the order every table, run and selection uses: the published domains
    in their published order, then any other (custom) domain by name."""
    present = set(names)
    return [d for d in PUBLISHED_DOMAINS if d in present] + sorted(present - set(PUBLISHED_DOMAINS))


def known_domains() -> list[str]:
    """Every domain a selection may name: the published ones in their published order, then every
    other registered domain (entry points included), alphabetically."""
    return ordered_domains([*PUBLISHED_DOMAINS, *domain_names()])


def select_domains(text: str | Iterable[str], *, among: Iterable[str] | None = None) -> list[str]:
    """The domains a selection names: ``all`` is the published domains; otherwise each name must be
    one of ``among`` (default: ``known_domains()``). Raises ``UnknownDomainSelection`` naming the
    unknown ones and the known ones."""
    names = domain_selection(text)
    if names == (ALL_DOMAINS,):
        return list(PUBLISHED_DOMAINS)
    known = list(among) if among is not None else known_domains()
    if ALL_DOMAINS in names:
        raise UnknownDomainSelection(
            f"{ALL_DOMAINS} stands alone (it selects {', '.join(PUBLISHED_DOMAINS)})"
        )
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        what = f"unknown domain {', '.join(unknown)}" if unknown else "no domain given"
        raise UnknownDomainSelection(f"{what}; known: {ALL_DOMAINS}, {', '.join(known)}")
    return list(names)
