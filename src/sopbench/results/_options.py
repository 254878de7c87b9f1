"""How a use case scores what it reads: one frozen value, built once by its caller (the command
line from its options, a sweep, a test) and handed down whole, so that a setting such as the bank
card reading is named once and not passed through every layer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sopbench.cache import VerdictCache
from sopbench.scoring import RANK_BY, SOUND, Protocol
from sopbench.tasks import Task

from ._cards import CardChoice

__all__ = ["DEFAULT_MIN_CASES", "RUN_CHOICES", "Prices", "ScoringOptions"]

RUN_CHOICES = ("all", "first")
DEFAULT_MIN_CASES = 20

Prices = Mapping[str, tuple[float, float]]  # USD per million input and output tokens, per model


@dataclass(frozen=True, kw_only=True)
class ScoringOptions:
    """How runs are scored, counted, ranked and priced (a run folder's stored verdicts are read as
    they were scored: sound or sopbench).

    - ``protocol``: sound or sopbench, either with quirks toggled;
    - ``runs``: every run of each task (``"all"``: the mean pass rate over runs) or each task's
      first run (``"first"``, as the published tables counted);
    - ``credit_cards``: the bank card reading of each trajectory file (``read_card_choices``);
    - ``justify_refusal``: also judge whether each correct refusal revealed a violated constraint;
    - ``floor_tasks``: the tasks the floors (refuse-all, no-verify) are played on; None: the
      sources' own tasks (a run folder's manifest, the tasks inside trajectory files);
    - ``min_cases``: leaderboard rows with fewer cases are listed apart, not ranked;
    - ``rank_by``: ``"pass"`` (the Overall pass rate) or ``"balanced"`` (the mean of the
      must-succeed and must-refuse rates);
    - ``prices``: USD per million input/output tokens per model, for the cost of live runs;
    - ``cache``: the verdict cache to read and fill (``sopbench.cache.VerdictCache``): each
      trajectory file's verdicts and each task set's floors are computed once and read back while
      nothing that decides them changes. None (the library's default: a use case called from Python
      writes nothing unless asked): everything is computed; the command line gives
      ``VerdictCache.default()`` unless ``--no-cache``. The figures are the same either way.
    """

    protocol: Protocol = SOUND
    runs: str = "all"
    credit_cards: CardChoice | None = None
    justify_refusal: bool = False
    floor_tasks: tuple[Task, ...] | None = None
    min_cases: int = DEFAULT_MIN_CASES
    rank_by: str = "pass"
    prices: Prices | None = None
    cache: VerdictCache | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.runs not in RUN_CHOICES:
            raise ValueError(f"runs={self.runs!r}: expected {' or '.join(RUN_CHOICES)}")
        if self.rank_by not in RANK_BY:
            raise ValueError(f"rank_by={self.rank_by!r}: expected {' or '.join(RANK_BY)}")
        if self.min_cases < 0:
            raise ValueError(f"min_cases={self.min_cases}: expected 0 or more")

    @property
    def first_runs_only(self) -> bool:
        return self.runs == "first"

    @property
    def floor_tasks_source(self) -> str:
        """Where the floors' tasks come from, as the tables' captions say it."""
        return "the task files given" if self.floor_tasks is not None else "the sources' own tasks"
