"""The trace evaluator: three judgements (database, permission, procedure) and their conjunction.

Domain-agnostic: it needs a trace, an SOP catalogue (``sopbench.constraints.Sop``) and an oracle.
"""

from ._diagnostic import DiagnosticFailure, diagnostic
from ._evaluate import evaluate_trace, judge_database, judge_permission, judge_procedure, state_diff
from ._model import Judgement, Oracle, StaticOracle, ToolCall, Trace, Verdict

__all__ = [
    "DiagnosticFailure",
    "Judgement",
    "Oracle",
    "StaticOracle",
    "ToolCall",
    "Trace",
    "Verdict",
    "diagnostic",
    "evaluate_trace",
    "judge_database",
    "judge_permission",
    "judge_procedure",
    "state_diff",
]
