"""The episode list's filters and pages, over an index built once when the sources are loaded.

Each filter is one facet of an episode (domain, goal, configuration, outcome, failing judgement,
constraint kind). The index keeps, per facet value, the episode ids that have it, as a bit set (a
Python integer), so a filter change is a few big-integer ANDs and a page is read off the result
(a few milliseconds on the 14,567 published runs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ._sources import JUDGEMENTS, Episode

__all__ = ["FACETS", "EpisodeIndex", "Filters", "Page"]

# facet name -> what the list calls it
FACETS = {
    "domain": "domain",
    "goal": "goal",
    "configuration": "configuration",
    "outcome": "outcome",
    "judgement": "failing judgement",
    "kind": "failing constraint kind",
}
OUTCOMES = ("passed", "failed")


def _facet_values(episode: Episode) -> dict[str, tuple[str, ...]]:
    return {
        "domain": (episode.domain,),
        "goal": (episode.goal,),
        "configuration": (episode.configuration,),
        "outcome": ("passed" if episode.passed else "failed",),
        "judgement": episode.failing,
        "kind": tuple(sorted(episode.kinds)),
    }


@dataclass(frozen=True)
class Filters:
    """The chosen value of each facet (None: any)."""

    values: Mapping[str, str]

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> Filters:
        return cls({name: query[name] for name in FACETS if query.get(name)})

    def without(self, name: str) -> Filters:
        return Filters({k: v for k, v in self.values.items() if k != name})


@dataclass(frozen=True)
class Page:
    episodes: list[Episode]
    total: int  # episodes matching the filters
    passed: int  # of them, how many passed
    number: int  # 1-based page number
    pages: int
    size: int


class EpisodeIndex:
    """Every loaded episode and, per facet value, the set of episodes that have it."""

    def __init__(self, episodes: Sequence[Episode]) -> None:
        self.episodes = list(episodes)
        self._sets: dict[str, dict[str, int]] = {name: {} for name in FACETS}
        for episode in self.episodes:
            bit = 1 << episode.id
            for name, values in _facet_values(episode).items():
                sets = self._sets[name]
                for value in values:
                    sets[value] = sets.get(value, 0) | bit
        self._all = (1 << len(self.episodes)) - 1
        self._passed = self._sets["outcome"].get("passed", 0)

    def options(self, name: str) -> list[str]:
        """The values a facet takes, in a stable order."""
        values = self._sets[name]
        if name == "outcome":
            return [v for v in OUTCOMES if v in values]
        if name == "judgement":
            return [v for v in JUDGEMENTS if v in values]
        return sorted(values)

    def matching(self, filters: Filters) -> int:
        """The bit set of episodes matching every chosen facet value (an unknown value matches none)."""
        found = self._all
        for name, value in filters.values.items():
            found &= self._sets.get(name, {}).get(value, 0)
        return found

    def counts(self, name: str, filters: Filters) -> dict[str, int]:
        """How many episodes each value of facet ``name`` would give, with the other filters kept."""
        others = self.matching(filters.without(name))
        return {value: (others & found).bit_count() for value, found in self._sets[name].items()}

    def page(self, filters: Filters, number: int = 1, size: int = 50) -> Page:
        found = self.matching(filters)
        total = found.bit_count()
        pages = max(1, -(-total // size))
        number = min(max(1, number), pages)
        skip = (number - 1) * size
        chosen: list[Episode] = []
        episodes = self.episodes
        index = 0
        while found and len(chosen) < size:
            low = found & -found  # the lowest set bit: the next matching episode
            if index >= skip:
                chosen.append(episodes[low.bit_length() - 1])
            index += 1
            found ^= low
        return Page(chosen, total, (self.matching(filters) & self._passed).bit_count(), number, pages, size)

    def get(self, episode_id: int) -> Episode | None:
        return self.episodes[episode_id] if 0 <= episode_id < len(self.episodes) else None
