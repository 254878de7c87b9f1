"""The episode list's filters and pages, over an index built when the sources are loaded (and grown
as a live source adds episodes).

Each facet is one property of an episode (domain, goal, configuration, outcome, failing judgement,
constraint kind, task). The index keeps, per facet value, the episode ids that have it, as a bit set
(a Python integer), so a filter change is a few big-integer ANDs and a page is read off the result
(a few milliseconds on the 14,567 published runs). The free-text search (``q``) looks for every
word of the query in an episode's task id, goal, configuration (its model) and explanations; its
texts are gathered on the first search.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ._sources import INFRA_ERROR, JUDGEMENTS, Episode

__all__ = ["FACETS", "FILTERS", "EpisodeIndex", "Filters", "Page"]

# facet name -> what the list calls it (each is a menu on the list)
FACETS = {
    "domain": "domain",
    "goal": "goal",
    "configuration": "configuration",
    "outcome": "outcome",
    "judgement": "failing judgement",
    "kind": "failing constraint kind",
}
# every query parameter that narrows the list: the facets, the task id (exact) and the search
FILTERS = (*FACETS, "task", "q")
OUTCOMES = ("passed", "failed", INFRA_ERROR)


def _facet_values(episode: Episode) -> dict[str, tuple[str, ...]]:
    return {
        "domain": (episode.domain,),
        "goal": (episode.goal,),
        "configuration": (episode.configuration,),
        "outcome": (episode.outcome,),
        "judgement": episode.failing if episode.judged else (),
        "kind": tuple(sorted(episode.kinds)),
        "task": (episode.task_id,),
    }


def _search_text(episode: Episode) -> str:
    return "\n".join(
        (episode.task_id, episode.goal, episode.configuration, *episode.score.explanations)
    ).casefold()


@dataclass(frozen=True)
class Filters:
    """The chosen value of each filter (absent: any)."""

    values: Mapping[str, str]

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> Filters:
        return cls({name: query[name].strip() for name in FILTERS if query.get(name, "").strip()})

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
    infra_errors: int = 0  # of them, how many ended in infra_error (never judged)


class EpisodeIndex:
    """Every loaded episode and, per facet value, the set of episodes that have it."""

    def __init__(self, episodes: Sequence[Episode]) -> None:
        self.episodes: list[Episode] = []
        self.by_address: dict[str, Episode] = {}
        self._sets: dict[str, dict[str, int]] = {name: {} for name in (*FACETS, "task")}
        self._texts: list[str] | None = None
        self._search: tuple[str, int] | None = None  # the last search and its bit set
        self.add(episodes)

    def add(self, episodes: Sequence[Episode]) -> None:
        """Index new episodes (their ids continue the numbering: id == position)."""
        for episode in episodes:
            if episode.id != len(self.episodes):
                raise ValueError(f"episode {episode.id} added at position {len(self.episodes)}")
            self.episodes.append(episode)
            self._index(episode, add=True)
            if self._texts is not None:
                self._texts.append(_search_text(episode))
        self._search = None

    def replace(self, episode: Episode) -> None:
        """Put ``episode`` in the place of the one with its id (an infra_error episode played again)."""
        old = self.episodes[episode.id]
        self._index(old, add=False)
        self.by_address.pop(old.address, None)
        self.episodes[episode.id] = episode
        self._index(episode, add=True)
        if self._texts is not None:
            self._texts[episode.id] = _search_text(episode)
        self._search = None

    def _index(self, episode: Episode, *, add: bool) -> None:
        bit = 1 << episode.id
        for name, values in _facet_values(episode).items():
            sets = self._sets[name]
            for value in values:
                sets[value] = (sets.get(value, 0) | bit) if add else (sets.get(value, 0) & ~bit)
        if add:
            self.by_address[episode.address] = episode

    @property
    def _all(self) -> int:
        return (1 << len(self.episodes)) - 1

    def options(self, name: str) -> list[str]:
        """The values a facet takes, in a stable order."""
        values = [v for v, found in self._sets[name].items() if found]
        if name == "outcome":
            return [v for v in OUTCOMES if v in values]
        if name == "judgement":
            return [v for v in JUDGEMENTS if v in values]
        return sorted(values)

    def _searched(self, query: str) -> int:
        if self._search is not None and self._search[0] == query:
            return self._search[1]
        if self._texts is None:
            self._texts = [_search_text(e) for e in self.episodes]
        words = query.casefold().split()
        found = 0
        for position, text in enumerate(self._texts):
            if all(word in text for word in words):
                found |= 1 << position
        self._search = (query, found)
        return found

    def matching(self, filters: Filters) -> int:
        """The bit set of episodes matching every chosen filter (an unknown value matches none)."""
        found = self._all
        for name, value in filters.values.items():
            found &= self._searched(value) if name == "q" else self._sets.get(name, {}).get(value, 0)
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
        rest = found
        while rest and len(chosen) < size:
            low = rest & -rest  # the lowest set bit: the next matching episode
            if index >= skip:
                chosen.append(episodes[low.bit_length() - 1])
            index += 1
            rest ^= low
        outcome = self._sets["outcome"]
        return Page(
            chosen,
            total,
            (found & outcome.get("passed", 0)).bit_count(),
            number,
            pages,
            size,
            (found & outcome.get(INFRA_ERROR, 0)).bit_count(),
        )

    def neighbours(
        self, episode: Episode, filters: Filters
    ) -> tuple[Episode | None, Episode | None, int, int]:
        """The previous and next episodes matching ``filters`` around ``episode``, its position among
        them (from 1; 0 when it does not match) and how many match."""
        found = self.matching(filters)
        before = found & ((1 << episode.id) - 1)
        after = found >> (episode.id + 1)
        previous = self.episodes[before.bit_length() - 1] if before else None
        following = self.episodes[episode.id + (after & -after).bit_length()] if after else None
        position = before.bit_count() + 1 if found >> episode.id & 1 else 0
        return previous, following, position, found.bit_count()

    def get(self, episode_id: int) -> Episode | None:
        return self.episodes[episode_id] if 0 <= episode_id < len(self.episodes) else None
