"""One task under two configurations, side by side, with the first point where they diverge.

The runs of the task in configuration A and in B are paired by run number (run 0 with run 0...).
Two runs diverge at their first differing action: the n-th tool call (its name and its arguments,
compared as decoded JSON so that spacing and key order do not count) is not the same, or one run
calls a tool where the other has stopped. What the agents said in words is not compared: two models
never word a reply alike, and what an SOP judges is what they did.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._episode import EpisodeView, episode_view
from ._index import EpisodeIndex, Filters
from ._sources import Episode

__all__ = ["Divergence", "RunPair", "divergence", "side_by_side"]


@dataclass(frozen=True)
class Divergence:
    """Where two runs first act differently: the message of each (None: that run has no such call)."""

    step_a: int | None
    step_b: int | None
    action: int  # which action, from 1
    text: str  # what differs, in words


@dataclass
class RunPair:
    number: int  # the run of the task, from 0
    a: EpisodeView | None
    b: EpisodeView | None
    divergence: Divergence | None  # None: the same actions (or a side is missing)


def _actions(episode: Episode) -> list[tuple[int, str, Any]]:
    """Each tool call of the run: (message index, tool name, decoded arguments or raw text)."""
    found = []
    for index, message in enumerate(episode.record.runs[episode.run].messages):
        for call in message.tool_calls:
            arguments: Any = call.arguments if call.arguments is not None else call.arguments_text
            found.append((index, call.name, arguments))
    return found


def _shown(name: str, arguments: Any) -> str:
    text = (
        arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True, ensure_ascii=False)
    )
    return f"{name}({text})"


def divergence(a: Episode, b: Episode) -> Divergence | None:
    """The first action where the two runs differ, or None when they made the same calls."""
    first, second = _actions(a), _actions(b)
    for number in range(max(len(first), len(second))):
        one = first[number] if number < len(first) else None
        two = second[number] if number < len(second) else None
        if one is not None and two is not None and one[1:] == two[1:]:
            continue
        if one is None and two is not None:
            text = f"A made no call {number + 1}; B called {_shown(two[1], two[2])}"
        elif two is None and one is not None:
            text = f"A called {_shown(one[1], one[2])}; B made no call {number + 1}"
        else:
            assert one is not None and two is not None
            text = f"A called {_shown(one[1], one[2])}; B called {_shown(two[1], two[2])}"
        return Divergence(one[0] if one else None, two[0] if two else None, number + 1, text)
    return None


def side_by_side(index: EpisodeIndex, a: str, b: str, task: str) -> list[RunPair]:
    """Every run of ``task`` in configurations ``a`` and ``b``, paired by run number."""

    def runs(configuration: str) -> dict[int, Episode]:
        found = index.page(Filters({"configuration": configuration, "task": task}), 1, 10_000).episodes
        return {e.number: e for e in found if e.has_record}

    left, right = runs(a), runs(b)
    pairs = []
    for number in sorted(set(left) | set(right)):
        one, two = left.get(number), right.get(number)
        views: Sequence[EpisodeView | None] = [None if e is None else episode_view(e) for e in (one, two)]
        found = divergence(one, two) if one is not None and two is not None else None
        if found is not None:
            for view, step in ((views[0], found.step_a), (views[1], found.step_b)):
                if view is not None and step is not None and 0 <= step < len(view.messages):
                    view.messages[step].diverges = True
        pairs.append(RunPair(number, views[0], views[1], found))
    return pairs
