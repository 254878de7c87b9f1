"""The trace evaluator: three judgements (database, permission, procedure) and their conjunction.

Domain-agnostic: it needs a trace, an SOP catalogue (``sopbench.constraints.Sop``) and an oracle.
"""

from ._diagnostic import DiagnosticFailure, diagnostic
from ._evaluate import (
    DatabaseEquality,
    canonical_json,
    compare_databases,
    evaluate_trace,
    judge_database,
    judge_permission,
    state_diff,
)
from ._index import CallIndex, CallLookup, CallScan
from ._kept import KeptTexts, value_key
from ._model import (
    PASSED,
    UNCLASSIFIED,
    Judgement,
    Oracle,
    StaticOracle,
    ToolCall,
    Trace,
    UnverifiedConstraint,
    Verdict,
)
from ._procedure import judge_procedure, procedure_problem
from ._review import next_call_problem, next_call_review
from ._template import text_template

__all__ = [
    "PASSED",
    "UNCLASSIFIED",
    "CallIndex",
    "CallLookup",
    "CallScan",
    "DatabaseEquality",
    "DiagnosticFailure",
    "Judgement",
    "KeptTexts",
    "Oracle",
    "StaticOracle",
    "ToolCall",
    "Trace",
    "UnverifiedConstraint",
    "Verdict",
    "canonical_json",
    "compare_databases",
    "diagnostic",
    "evaluate_trace",
    "judge_database",
    "judge_permission",
    "judge_procedure",
    "next_call_problem",
    "next_call_review",
    "procedure_problem",
    "state_diff",
    "text_template",
    "value_key",
]
