"""A runtime SOP guard any agent can use: before a service call runs, was its procedure followed?

>>> from sopbench.constraints import Rule, Single
>>> from sopbench.guard import Guard, ToolCall
>>> guard = Guard.from_rules([Rule("refund", Single.of("check_user", {"user": "user"}), ("user",))])
>>> guard.check(ToolCall("refund", {"user": "bob"}), [ToolCall("check_user", {"user": "alice"})]).allowed
False
>>> guard.check(ToolCall("refund", {"user": "bob"}), [ToolCall("check_user", {"user": "bob"})]).allowed
True

The judgement is the evaluator's own (``sopbench.evaluation.procedure_problem``); the guard reads
only the calls made so far and their outputs, never an oracle or hidden state.
"""

from sopbench.evaluation import ToolCall

from ._guard import Decision, Guard, ObservedFacts, Unmet, observed_truth
from ._wrap import Refused, execute_tool_calls, guard_tool

__all__ = [
    "Decision",
    "Guard",
    "ObservedFacts",
    "Refused",
    "ToolCall",
    "Unmet",
    "execute_tool_calls",
    "guard_tool",
    "observed_truth",
]
