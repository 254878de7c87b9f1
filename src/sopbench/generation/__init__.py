"""Task generation without an LLM: every SOP variant and outcome, realised by search, verified.

>>> from sopbench.generation import generate_domain
>>> result = generate_domain("bank", seed=0)  # doctest: +SKIP
>>> result.report.realised, result.report.assignments  # doctest: +SKIP

``default_tasks_dir()`` builds (once, into the user's cache) the generated task set of all seven
domains, so benchmarks can run without the published data.

The search that realises an assignment is in a public submodule, ``sopbench.generation.search``, for
tools and tests that drive it one assignment at a time.
"""

from ._compare import DIFFICULTY_MEASURES, Comparison, canonical, compare, difficulty, nesting_depth
from ._coverage import DomainReport, DomainTasks, Unrealised
from ._enumerate import Assignment, Variant, domain_variants, goals, outcome_cases
from ._files import (
    DEFAULT_SEED,
    Generated,
    default_task_file,
    default_tasks_dir,
    default_tasks_ready,
    generate,
    published_file,
)
from ._generate import HIDDEN_PREREQUISITE_KEY, HIDDEN_REFUSAL, generate_domain
from ._select import select_goals
from ._world import world_database

__all__ = [
    "DEFAULT_SEED",
    "DIFFICULTY_MEASURES",
    "HIDDEN_PREREQUISITE_KEY",
    "HIDDEN_REFUSAL",
    "Assignment",
    "Comparison",
    "DomainReport",
    "DomainTasks",
    "Generated",
    "Unrealised",
    "Variant",
    "canonical",
    "compare",
    "default_task_file",
    "difficulty",
    "default_tasks_dir",
    "default_tasks_ready",
    "domain_variants",
    "generate",
    "generate_domain",
    "goals",
    "nesting_depth",
    "outcome_cases",
    "published_file",
    "select_goals",
    "world_database",
]
