"""sopbench inside Inspect AI (the optional extra ``pip install 'sopbench[inspect]'``).

``inspect eval sopbench/sopbench -T domain=bank --model openai/gpt-4o`` plays each sopbench task as
one sample: the evaluated model is the agent (native tool calling, our system prompt) in the runner's
published loop, and our evaluator scores the episode. ``inspect_log_scores`` reads such a log back as
the verdict rows ``sopbench evaluate``, ``leaderboard`` and ``compare`` take; ``inspect_log_episodes``
reads it with each sample's transcript (what ``sopbench view`` shows).

Only this package imports ``inspect_ai``: the log helpers below load without it; the task, solver,
scorer, reducer and models load on first use (``ImportError`` naming the extra when it is absent).
"""

from __future__ import annotations

from sopbench._extras import lazy_names

from ._log import LOG_SUFFIXES, SCORER_NAME, InspectLogError, inspect_log_scores, is_inspect_log
from ._log_episodes import InspectEpisode, inspect_log_digest, inspect_log_episodes, inspect_log_running

_LAZY = {
    "sopbench": "_task",
    "sopbench_agent": "_task",
    "sopbench_scorer": "_task",
    "pass_hat": "_task",
    "load_samples": "_task",
    "run_spec": "_task",
    "samples_of": "_task",
    "SopbenchTaskError": "_task",
    "InspectModelAgent": "_sides",
    "InspectModelUser": "_sides",
    "current_setup": "_sides",
    "tool_info": "_sides",
    "inspect_messages": "_sides",
    "chat_messages": "_sides",
    "ReferenceModel": "_reference_model",
    "reference_model": "_reference_model",
}


__getattr__ = lazy_names(__name__, _LAZY, "inspect", ("inspect_ai",))


__all__ = [
    "LOG_SUFFIXES",
    "SCORER_NAME",
    "InspectEpisode",
    "InspectLogError",
    "inspect_log_digest",
    "inspect_log_episodes",
    "inspect_log_running",
    "inspect_log_scores",
    "is_inspect_log",
    *_LAZY,
]
