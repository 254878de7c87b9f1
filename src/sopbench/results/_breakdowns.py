"""The breakdowns of a set of runs: by goal, by the judgement that failed, by what failed the
procedure (``sopbench.statistics.breakdown``), each a plain document the renderers lay out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sopbench.statistics import Outcome, breakdown

__all__ = ["BREAKDOWN_ORDER", "breakdowns"]

BREAKDOWN_ORDER = ("goal", "judgement", "constraint")  # in every JSON document and the HTML report


def breakdowns(outcomes: Sequence[Outcome], names: Sequence[str]) -> dict[str, Any]:
    """Each breakdown of ``names`` (``sopbench.statistics.BREAKDOWNS``), in that order, over
    ``outcomes``: ``{name: document}``."""
    return {name: breakdown(outcomes, name) for name in names}
