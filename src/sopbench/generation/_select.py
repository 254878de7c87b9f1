"""Which goals a generation makes (``sopbench generate --goals``)."""

from __future__ import annotations

from collections.abc import Iterable

from sopbench.domains import get_domain

from ._enumerate import goals as goals_of


def select_goals(domains: Iterable[str], goals: Iterable[str]) -> list[str]:
    """The domains among ``domains`` that offer at least one of ``goals``; raises ``ValueError``
    naming the goals none of them offers."""
    names = list(domains)
    offered = {name: set(goals_of(get_domain(name).catalogue)) for name in names}
    wanted = list(goals)
    missing = [goal for goal in wanted if not any(goal in goals for goals in offered.values())]
    if missing:
        raise ValueError(f"unknown goal {', '.join(missing)} in {', '.join(names)}")
    return [name for name in names if offered[name] & set(wanted)]
