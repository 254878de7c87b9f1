"""What a scored episode is: the core verdict, the seven published checks, the explanations."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sopbench.evaluation import Verdict
from sopbench.traces import PUBLISHED_CHECKS

# The ``verdict`` object of a ``sopbench evaluate`` line, in this order: the three judgements and
# their conjunction, then the published checks.
_JUDGEMENT_KEYS = ("passed", "database", "permission", "procedure")
VERDICT_KEYS = (
    *_JUDGEMENT_KEYS,
    "no_tool_call_error",
    "constraint_not_violated",
    "database_match",
    "action_successfully_called",
    "action_called_correctly",
    "dirgraph_satisfied",
    "success",
)
assert sorted(VERDICT_KEYS[len(_JUDGEMENT_KEYS) :]) == sorted(PUBLISHED_CHECKS)


@dataclass(frozen=True, slots=True)
class EpisodeScore:
    """The verdict on one episode under one protocol.

    ``verdict`` holds the three judgements (``procedure`` includes the published extra checks
    ``no_tool_call_error`` and ``constraint_not_violated``); ``checks`` the seven published checks
    by name (read-only); ``explanations`` one sentence per failed check, in the published check
    order; ``justified_refusal`` is None unless asked for on a task that must be refused.
    """

    verdict: Verdict
    checks: Mapping[str, bool]
    explanations: tuple[str, ...]
    justified_refusal: bool | None = None
    # Recording artefacts the verdict accounted for (``_artefacts.ARTEFACTS``): the database was
    # compared against the value the recording's environment issued.
    artefacts: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    def verdict_fields(self) -> dict[str, Any]:
        """Exactly the ``verdict`` object of a ``sopbench evaluate`` line (a new dict)."""
        verdict = self.verdict
        fields = {
            "passed": verdict.passed,
            "database": verdict.database.passed,
            "permission": verdict.permission.passed,
            "procedure": verdict.procedure.passed,
        }
        checks = self.checks
        for name in VERDICT_KEYS[len(_JUDGEMENT_KEYS) :]:
            fields[name] = checks[name]
        return fields
