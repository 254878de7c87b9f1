"""Task generation without an LLM: every SOP variant and outcome, realised by search, verified.

>>> from sopbench.generation import generate_domain
>>> result = generate_domain("bank", seed=0)  # doctest: +SKIP
>>> result.report.realised, result.report.assignments  # doctest: +SKIP
"""

from ._enumerate import Assignment, Variant, domain_variants, goals, outcome_cases
from ._generate import DomainReport, DomainTasks, Unrealised, generate_domain, world_database

__all__ = [
    "Assignment",
    "DomainReport",
    "DomainTasks",
    "Unrealised",
    "Variant",
    "domain_variants",
    "generate_domain",
    "goals",
    "outcome_cases",
    "world_database",
]
