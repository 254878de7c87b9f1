"""The search behind generation, for tools and tests that drive it one assignment at a time: the
world as the searches see it (``SearchSpace``), what one assignment asks of them (``search_targets``,
``candidate_values``, ``Problem``), the two searches (``backtrack``, ``descend``) over a ``State``,
and the ``Realiser`` that decides where they start and how much they spend.
``sopbench.generation.generate_domain`` does all of it.
"""

from ._backtrack import backtrack
from ._descent import descend
from ._problem import candidate_values, search_targets
from ._realise import Realiser
from ._space import SearchSpace
from ._state import Problem, State

__all__ = [
    "Problem",
    "Realiser",
    "SearchSpace",
    "State",
    "backtrack",
    "candidate_values",
    "descend",
    "search_targets",
]
