"""The ``sopbench`` Inspect task: one sample per sopbench task, played by the runner's loop, scored by
our evaluator (the same call ``sopbench run`` makes)."""

from __future__ import annotations

from math import comb
from pathlib import Path
from typing import Any

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

from sopbench.agents import OptionsError, Usage, user_factory
from sopbench.constraints import dump
from sopbench.runner import Limits, RunSpec, RunSpecError
from sopbench.runner.episode import (
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
from ._sides import CURRENT_SETUP, INSPECT_LLM_USER, InspectModelAgent, inspect_messages

STORE_KEY = "sopbench"  # how the episode ended, in the sample's store (shown in the log)
# The finished episodes awaiting their score, by sample uuid. The transcript and final database stay
# out of the sample's store: Inspect logs every store change, and a database per sample makes the
# log several times slower to write (the transcript is in the log as the sample's messages).
_FINISHED: dict[str, tuple[list[dict[str, Any]], Any]] = {}


class SopbenchTaskError(ValueError):
    """A task parameter that cannot be used (the message names it)."""


def run_spec(
    domain: str = "all",
    tasks: str = "generated",
    tool_list: str | None = None,
    seed: int | None = None,
    user: str = "none",
    limit: int | None = None,
    max_turns: int | None = None,
    max_actions: int | None = None,
    no_action: str | None = None,
) -> RunSpec:
    """The task parameters as a ``RunSpec`` (the evaluated model as agent ``inspect``; user ``llm`` is
    the Inspect model role ``user``): a parameter not given takes the run's default, and a wrong one
    is a ``SopbenchTaskError`` naming it."""
    given = {
        "tool_list": tool_list, "seed": seed, "limit": limit, "max_turns": max_turns,
        "max_actions": max_actions, "no_action": no_action,
    }  # fmt: skip
    try:
        return RunSpec(
            agent="inspect",
            user=INSPECT_LLM_USER if user == "llm" else user,
            domains=domain,
            tasks=None if tasks == "generated" else Path(tasks),
            output=Path("."),
            **{k: v for k, v in given.items() if v is not None},
        )
    except OptionsError as exc:
        raise SopbenchTaskError(f"sopbench task: {exc}") from None
    except ValueError as exc:  # pydantic's ValidationError
        raise SopbenchTaskError(f"sopbench task: {_first_error(exc)}") from None


def _first_error(exc: ValueError) -> str:
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return str(exc)
    error = exc.errors()[0]
    return f"{error['loc'][-1] if error['loc'] else 'parameters'}: {error['msg']}"


def samples_of(spec: RunSpec) -> tuple[list[Sample], dict[str, SopTask]]:
    """The samples of the spec's selection (id = our task id), and the sopbench tasks by id."""
    try:
        selected = select_tasks(spec)
    except (RunSpecError, ValueError) as exc:
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


def load_samples(
    domain: str = "all", tasks: str = "generated", tool_list: str | None = None, limit: int | None = None
) -> tuple[list[Sample], dict[str, SopTask]]:
    """The samples of a selection (as the task's parameters name it), and the sopbench tasks by id."""
    return samples_of(run_spec(domain, tasks, tool_list, limit=limit))


@task(name="sopbench")
def sopbench(
    domain: str = "all",
    tool_list: str | None = None,
    tasks: str = "generated",
    seed: int | None = None,
    user: str = "none",
    limit: int | None = None,
    max_turns: int | None = None,
    max_actions: int | None = None,
    no_action: str | None = None,
) -> Task:
    """SOPBench: does the model follow each action's standard operating procedure?

    ``domain``: one domain, a comma list or ``all``; ``tasks``: a task file or folder, or
    ``generated`` (the default generated set); ``user``: ``none`` (the published loop's fixed
    replies) or ``llm`` (the model role ``user`` plays the customer); ``limit``: the first N tasks of
    each domain; ``tool_list``, ``seed``, ``max_turns``, ``max_actions`` and ``no_action`` as
    ``sopbench run`` takes them (not given: its defaults). ``--epochs K`` plays each task K times;
    the ``pass_hat`` reducer gives pass^k."""
    spec = run_spec(domain, tasks, tool_list, seed, user, limit, max_turns, max_actions, no_action)
    samples, by_id = samples_of(spec)
    return Task(
        dataset=MemoryDataset(samples, name=f"sopbench-{domain}"),
        solver=sopbench_agent(by_id, spec),
        scorer=sopbench_scorer(by_id, spec),
        epochs=Epochs(1, [mean_score(), pass_hat()]),
        metadata={
            "sopbench": {
                "domain": domain,
                "tool_list": spec.tool_list,
                "tasks": tasks,
                "seed": spec.seed,
                "user": user,
                "no_action": spec.environment.no_action,
            }
        },
    )


@solver
def sopbench_agent(tasks: dict[str, SopTask], spec: RunSpec | None = None) -> Solver:
    """Plays each sample's episode with the runner's loop: the evaluated model as the agent (native
    tool calling, our system prompt), the spec's user as the user (default: ``run_spec()``'s); the
    episode is kept in the sample's store."""
    spec = spec or run_spec()
    user_side = user_factory(spec.user)
    limits = Limits(spec.max_turns, spec.max_actions)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task_id = str(state.sample_id)
        sop_task = tasks[task_id]
        run = state.epoch - 1
        setup = episode_setup(
            sop_task,
            task_id,
            spec.tool_list,
            episode_seed(spec.seed, task_id, run),
            run,
            offer_exit=not getattr(user_side, "holds_exit", False),
            environment=spec.environment,
        )
        agent = InspectModelAgent()
        token = CURRENT_SETUP.set(setup)
        try:
            result = await run_episode(setup, agent, user_side(**spec.user_options.arguments()), limits)
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


@scorer(
    metrics=[accuracy(), stderr(), grouped(accuracy(), "domain", all=False, name_template="{group_name}")],
    name=SCORER_NAME,
)
def sopbench_scorer(tasks: dict[str, SopTask], spec: RunSpec | None = None):
    """Our evaluator on the finished episode (``score_finished_episode``, as ``sopbench run`` scores):
    C when it passes under the sound protocol. The metadata holds the columns a run folder stores:
    the three judgements, the seven published checks and the explanations."""

    spec = spec or run_spec()
    tool_list = spec.tool_list
    user = "llm" if spec.user == INSPECT_LLM_USER else spec.user

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
            scores = score_finished_episode(
                sop_task, messages, final_database, tool_list=tool_list, ablations=spec.ablations()
            )
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
