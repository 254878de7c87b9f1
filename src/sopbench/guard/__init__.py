"""A runtime SOP guard any agent can use: before a service call runs, was its procedure followed?

>>> from sopbench.constraints import Rule, Single
>>> from sopbench.guard import Guard, ToolCall
>>> guard = Guard.from_rules([Rule("refund", Single.of("check_user", {"user": "user"}), ("user",))])
>>> guard.check(ToolCall("refund", {"user": "bob"}), [ToolCall("check_user", {"user": "alice"})]).allowed
False
>>> session = guard.session()
>>> session.record(ToolCall("check_user", {"user": "bob"}), True).succeeded
True
>>> session.check(ToolCall("refund", {"user": "bob"})).allowed
True

The judgement is the evaluator's own (``sopbench.evaluation.procedure_problem``); the guard reads
only the calls made so far and their outputs, never an oracle or hidden state. A ``GuardSession``
(one per conversation) keeps those calls indexed, so a check costs the same after a thousand calls
as after none.
"""

from sopbench.evaluation import ToolCall

from ._decision import Decision, ObservedFacts, Refused, observed_truth
from ._explain import Unmet
from ._file import read_sop_file, sop_from_json
from ._guard import Guard
from ._session import GuardSession
from ._wrap import execute_tool_calls, guard_tool

__all__ = [
    "Decision",
    "Guard",
    "GuardSession",
    "ObservedFacts",
    "Refused",
    "ToolCall",
    "Unmet",
    "execute_tool_calls",
    "guard_tool",
    "observed_truth",
    "read_sop_file",
    "sop_from_json",
]
