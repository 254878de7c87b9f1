"""What the episode page shows, as plain data: the conversation, the verdict, the first failing
step with its explanation, the constraint states at the goal call and the database difference.

Nothing here is markup: every text is carried as text and escaped by the templates.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from markupsafe import Markup

from sopbench.scoring import GoalStates, goal_constraint_states

from ._facts import EpisodeFacts, ProblemView, problem_steps
from ._graph import STATE_LABELS, constraint_graph_svg, constraint_state_name
from ._sources import JUDGEMENTS, Episode

__all__ = ["EpisodeView", "MessageView", "episode_view", "first_failing_step"]

_STEP = re.compile(r"\bat step (\d+)")
_DATABASE_PREFIX = "the final database differs from the oracle's: "


@dataclass
class ToolCallView:
    name: str
    arguments: str  # the text the assistant wrote


@dataclass
class MessageView:
    index: int  # the message's position in the run: the "step" explanations name
    role: str  # user, assistant or tool
    content: str
    tool_calls: list[ToolCallView] = field(default_factory=list)
    tool_name: str | None = None
    failing: bool = False  # the first failing step (the tool output, and the call that asked for it)
    explanations: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # stored problems at this step
    diverges: bool = False  # side by side: the first action where the other run acts differently


@dataclass
class ConstraintView:
    text: str
    state: str  # verified, unverified, false, false-verified, unknown
    label: str


@dataclass
class EpisodeView:
    episode: Episode
    messages: list[MessageView]
    failing_step: int | None
    failing_explanations: list[str]
    other_explanations: list[str]
    judgements: list[tuple[str, bool]]
    database_diff: list[str]
    goal_step: int | None
    constraints: list[ConstraintView]
    graph: Markup
    states_error: str | None
    system_prompt: str | None = None  # what the agent was shown before the conversation
    tools: str | None = None  # the tool schemas it was offered, as indented JSON
    tool_count: int = 0
    facts: EpisodeFacts | None = None  # how it went (None: the source keeps none of it)
    problems: list[ProblemView] = field(default_factory=list)  # every stored problem, at its step
    database_kept: bool = True  # False: the source kept the verdict, not the final database


def first_failing_step(explanations: tuple[str, ...] | list[str]) -> tuple[int | None, list[str]]:
    """The earliest step an explanation names, and the explanations that name it."""
    steps: dict[int, list[str]] = {}
    for text in explanations:
        match = _STEP.search(text)
        if match:
            steps.setdefault(int(match[1]), []).append(text)
    if not steps:
        return None, []
    first = min(steps)
    return first, steps[first]


def episode_view(episode: Episode, *, shown: bool = False) -> EpisodeView:
    """The page's data; ``shown``: with what the agent was shown (the viewer's page: a report that
    embeds many episodes leaves the prompts, several kilobytes each, out). An episode that kept no
    transcript (an infra_error before its first message) shows its facts alone."""
    if not episode.has_record:
        return _without_transcript(episode)
    run = episode.record.runs[episode.run]
    explanations = list(episode.score.explanations)
    step, at_step = first_failing_step(explanations)
    messages = []
    for index, message in enumerate(run.messages):
        role = "tool" if message.is_tool else "user" if message.is_user else "assistant"
        messages.append(
            MessageView(
                index,
                role,
                message.content or "",
                [ToolCallView(call.name, call.arguments_text) for call in message.tool_calls],
                message.tool_name,
            )
        )
    if step is not None and 0 <= step < len(messages):
        messages[step].failing = True
        messages[step].explanations = at_step
        caller = step
        while caller > 0 and messages[caller].role == "tool":
            caller -= 1
        messages[caller].failing = True
    facts = episode.facts
    problems = problem_steps(facts.problems, run.messages) if facts is not None else []
    for problem in problems:
        if problem.step is not None:
            messages[problem.step].problems.append(problem.text)
    whole = episode.full_score
    database = whole.episode.verdict.database if whole.episode is not None else None
    diff: list[str] = []
    if database is not None:
        for text in database.explanations:
            diff.extend(text.removeprefix(_DATABASE_PREFIX).split("; "))
    states: GoalStates | None = None
    states_error = None
    try:
        states = goal_constraint_states(episode.record, episode.run)
    except Exception as exc:  # noqa: BLE001 - the page still shows the conversation and the verdict
        states_error = f"the constraint states cannot be computed ({type(exc).__name__}: {exc})"
    leaves = list(states.states) if states is not None else []
    constraints = [
        ConstraintView(s.text, constraint_state_name(s), STATE_LABELS[constraint_state_name(s)])
        for s in leaves
    ]
    task = episode.record.task
    return EpisodeView(
        episode=episode,
        messages=messages,
        failing_step=step if step is not None and 0 <= step < len(messages) else None,
        failing_explanations=at_step,
        other_explanations=[text for text in explanations if text not in at_step],
        judgements=[(name, bool(episode.score.verdict[name])) for name in JUDGEMENTS]
        if episode.judged
        else [],
        database_diff=diff,
        goal_step=None if states is None else states.goal_step,
        constraints=constraints,
        graph=constraint_graph_svg(task.goal, task.constraints_original, leaves),
        states_error=states_error,
        system_prompt=(episode.system_prompt or run.prompt or None) if shown else None,
        tools=json.dumps(list(episode.tools), indent=2, ensure_ascii=False)
        if shown and episode.tools
        else None,
        tool_count=len(episode.tools or ()) if shown else 0,
        facts=facts,
        problems=problems,
        database_kept=episode.judged and whole.episode is not None,
    )


def _without_transcript(episode: Episode) -> EpisodeView:
    facts = episode.facts
    return EpisodeView(
        episode=episode,
        messages=[],
        failing_step=None,
        failing_explanations=[],
        other_explanations=list(episode.score.explanations),
        judgements=[],
        database_diff=[],
        goal_step=None,
        constraints=[],
        graph=Markup(""),
        states_error="no transcript was kept: the episode failed before its first message",
        facts=facts,
        problems=[ProblemView(text, None) for text in (facts.problems if facts else ())],
        database_kept=False,
    )
