"""The ``sopbench`` Inspect task: one sample per sopbench task, played by the runner's loop, scored by
our evaluator (the same call ``sopbench run`` makes)."""

from __future__ import annotations

from math import comb
from pathlib import Path
from typing import Any, cast

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ModelOutput
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Score,
    ScoreReducer,
    Target,
    accuracy,
    grouped,
    mean_score,
    score_reducer,
    scorer,
    stderr,
    value_to_float,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from sopbench.agents import Usage, user_factory
from sopbench.constraints import dump
from sopbench.domains import MAX_CALLS, MAX_MESSAGES, NO_ACTION_READINGS, NoActionReading
from sopbench.runner import (
    Limits,
    RunConfig,
    RunConfigError,
    episode_seed,
    episode_setup,
    run_episode,
    score_finished_episode,
    score_metadata,
    select_tasks,
    verdict_column,
)
from sopbench.scoring import ScoringError
from sopbench.tasks import Task as SopTask

from ._log import SCORER_NAME
from ._sides import CURRENT_SETUP, InspectModelAgent, InspectModelUser, inspect_messages

STORE_KEY = "sopbench"  # how the episode ended, in the sample's store (shown in the log)
# The finished episodes awaiting their score, by sample uuid. The transcript and final database stay
# out of the sample's store: Inspect logs every store change, and a database per sample makes the
# log several times slower to write (the transcript is in the log as the sample's messages).
_FINISHED: dict[str, tuple[list[dict[str, Any]], Any]] = {}


class SopbenchTaskError(ValueError):
    """A task parameter that cannot be used (the message names it)."""


def load_samples(
    domain: str = "all", tasks: str = "generated", tool_list: str = "full", limit: int | None = None
) -> tuple[list[Sample], dict[str, SopTask]]:
    """The samples of the selection (id = our task id), and the sopbench tasks by id."""
    try:
        config = RunConfig(
            agent="inspect",
            domains=domain,
            tasks=None if tasks == "generated" else Path(tasks),
            output=Path("."),
            tool_list=tool_list,
            limit=limit,
        )
        selected = select_tasks(config)
    except (RunConfigError, ValueError) as exc:
        raise SopbenchTaskError(f"sopbench task: {exc}") from None
    samples = [
        Sample(
            id=task_id,
            input=sop_task.user_prompt,
            target="succeed" if sop_task.action_should_succeed else "refuse",
            metadata={
                "domain": sop_task.domain,
                "goal": sop_task.goal,
                "should_succeed": sop_task.action_should_succeed,
                "constraints": dump(sop_task.constraints_original),
                "task_index": sop_task.index if sop_task.index is not None else 0,
            },
        )
        for sop_task, task_id in selected
    ]
    return samples, {task_id: sop_task for sop_task, task_id in selected}


def no_action_reading(value: str) -> NoActionReading:
    """The ``no_action`` task parameter, checked (``-T no_action=wide``)."""
    if value not in NO_ACTION_READINGS:
        raise SopbenchTaskError(
            f"sopbench task: no_action must be one of {', '.join(NO_ACTION_READINGS)}, not {value!r}"
        )
    return cast("NoActionReading", value)


@task(name="sopbench")
def sopbench(
    domain: str = "all",
    tool_list: str = "full",
    tasks: str = "generated",
    seed: int = 0,
    user: str = "none",
    limit: int | None = None,
    max_turns: int = MAX_MESSAGES,
    max_actions: int = MAX_CALLS,
    no_action: str = "published",
) -> Task:
    """SOPBench: does the model follow each action's standard operating procedure?

    ``domain``: one domain, a comma list or ``all``; ``tasks``: a task file or folder, or
    ``generated`` (the default generated set); ``user``: ``none`` (the published loop's fixed
    replies) or ``llm`` (the model role ``user`` plays the customer); ``limit``: the first N tasks of
    each domain; ``no_action``: how a call's name is read as "no action", as ``sopbench run
    --no-action`` (``published`` or ``wide``). ``--epochs K`` plays each task K times; the
    ``pass_hat`` reducer gives pass^k."""
    no_action_reading(no_action)  # a bad value is named before the tasks are loaded
    samples, by_id = load_samples(domain, tasks, tool_list, limit)
    return Task(
        dataset=MemoryDataset(samples, name=f"sopbench-{domain}"),
        solver=sopbench_agent(
            by_id,
            tool_list=tool_list,
            seed=seed,
            user=user,
            limits=Limits(max_turns, max_actions),
            no_action=no_action,
        ),
        scorer=sopbench_scorer(by_id, tool_list=tool_list, user=user),
        epochs=Epochs(1, [mean_score(), pass_hat()]),
        metadata={
            "sopbench": {
                "domain": domain,
                "tool_list": tool_list,
                "tasks": tasks,
                "seed": seed,
                "user": user,
                "no_action": no_action,
            }
        },
    )


@solver
def sopbench_agent(
    tasks: dict[str, SopTask],
    *,
    tool_list: str = "full",
    seed: int = 0,
    user: str = "none",
    limits: Limits | None = None,
    no_action: str = "published",
) -> Solver:
    """Plays each sample's episode with the runner's loop: the evaluated model as the agent (native
    tool calling, our system prompt), ``user`` as the user; the episode is kept in the sample's store."""
    user_side = user_factory(user) if user != "llm" else InspectModelUser
    limits = limits or Limits()
    reading = no_action_reading(no_action)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task_id = str(state.sample_id)
        sop_task = tasks[task_id]
        run = state.epoch - 1
        setup = episode_setup(
            sop_task,
            task_id,
            tool_list,
            episode_seed(seed, task_id, run),
            run,
            offer_exit=not getattr(user_side, "holds_exit", False),
            no_action=reading,
        )
        agent = InspectModelAgent()
        token = CURRENT_SETUP.set(setup)
        try:
            result = await run_episode(setup, agent, user_side(), limits)
        finally:
            CURRENT_SETUP.reset(token)
        if result.status != "completed":
            # Not the model's behaviour (a provider error after Inspect's retries): Inspect records
            # the sample as an error, and --retry-on-error / eval-retry play it again.
            raise RuntimeError(f"sopbench episode {task_id}: {result.reason}")
        state.messages = [ChatMessageSystem(content=agent.system_prompt), *inspect_messages(result.messages)]
        if agent.last_output is not None:
            state.output = agent.last_output
        else:
            state.output = ModelOutput.from_content(str(state.model), "")
        _FINISHED[state.uuid] = (result.messages, result.final_database)
        state.store.set(
            STORE_KEY,
            {
                "end": result.end,
                "problems": result.problems,
                "model": agent.model,
                "usage": _usage(result.usage),
                "user_usage": _usage(result.user_usage),
                "latency_s": result.latency_s,
                "agent_steps": result.agent_steps,
            },
        )
        state.completed = True
        return state

    return solve


def _usage(usage: Usage) -> dict[str, int]:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}


@scorer(metrics=[accuracy(), stderr(), grouped(accuracy(), "domain", all=False, name_template="{group_name}")], name=SCORER_NAME)
def sopbench_scorer(tasks: dict[str, SopTask], *, tool_list: str = "full", user: str = "none"):
    """Our evaluator on the finished episode (``score_finished_episode``, as ``sopbench run`` scores):
    C when it passes under the sound protocol. The metadata holds the columns a run folder stores:
    the three judgements, the seven published checks and the explanations."""

    async def score(state: TaskState, target: Target) -> Score:
        task_id = str(state.sample_id)
        sop_task = tasks[task_id]
        episode = state.store.get(STORE_KEY)
        finished = _FINISHED.pop(state.uuid, None)
        if episode is None or finished is None:
            raise RuntimeError(
                f"sopbench sample {task_id} has no finished episode to score (score it in the eval that played it)"
            )
        messages, final_database = finished
        try:
            scores = score_finished_episode(sop_task, messages, final_database, tool_list=tool_list)
        except ScoringError as exc:
            raise RuntimeError(f"sopbench sample {task_id} cannot be scored: {exc}") from None
        verdict = verdict_column(scores)
        explanations = list(scores.sound.explanations)
        if scores.compat_failure is not None:
            explanations.append(f"published checks not available: {scores.compat_failure}")
        return Score(
            value=CORRECT if verdict["passed"] else INCORRECT,
            answer=episode["end"],
            explanation="; ".join(explanations) or "passed",
            metadata=score_metadata(
                task_id=task_id,
                domain=sop_task.domain,
                goal=sop_task.goal,
                task_index=sop_task.index if sop_task.index is not None else 0,
                should_succeed=int(sop_task.action_should_succeed),
                agent="inspect",
                model=episode["model"],
                tool_mode="fc",
                tool_list=tool_list,
                user=user,
                end_reason=episode["end"],
                verdict=verdict,
                compat=scores.compat_fields(),
                explanations=explanations,
                problems=episode["problems"],
                usage=episode["usage"],
                user_usage=episode["user_usage"],
                latency_s=episode["latency_s"],
            ),
        )

    return score


@score_reducer(name="pass_hat")
def pass_hat(k: int | None = None) -> ScoreReducer:
    """pass^k of a sample's epochs: the chance that k epochs drawn without replacement all pass,
    C(c, k) / C(n, k) for c passes in n epochs (k defaults to n: 1 when every epoch passed)."""
    to_float = value_to_float()

    def reduce(scores: list[Score]) -> Score:
        n = len(scores)
        c = sum(1 for s in scores if to_float(s.value) >= 1.0)
        size = n if k is None else k
        value = comb(c, size) / comb(n, size) if 0 < size <= n else float("nan")
        return Score(value=value, metadata={"epochs": n, "passed": c, "k": size})

    return reduce
