"""One episode, played and scored, and its stored row read back as a score."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, NamedTuple

from sopbench.agents import Agent, Shown, Usage, agent_factory, user_factory
from sopbench.agents.openai import CacheSession, ChatEndpoint
from sopbench.scoring import RunScore, ScoringError
from sopbench.statistics import Configuration
from sopbench.statistics import Usage as StatUsage

from ._bounded import play_episode
from ._episode import EpisodeResult, Limits
from ._plan import Episode
from ._row import EpisodeRow, made_well_formed_action, read_verdict, stored_verdict
from ._scoring import EpisodeScores, score_finished_episode
from ._setup import episode_setup
from ._spec import RunSpec


# ---- one episode, played and scored -------------------------------------------------------------------
async def play(
    config: RunSpec, episode: Episode, cache: CacheSession | None = None
) -> tuple[EpisodeResult, Agent | None]:
    """Play one episode with a fresh agent and user; a timeout becomes an ``infra_error``.

    The agent is returned for its ``model`` and ``tool_mode`` (None when it could not be created).
    ``cache``: the recorded replies of this episode (``--cache``), given to every model endpoint of
    the agent and the user.
    """
    offer_exit = not getattr(user_factory(config.user), "holds_exit", False)
    setup = episode_setup(
        episode.task,
        episode.task_id,
        config.tool_list,
        episode.seed,
        episode.run,
        offer_exit=offer_exit,
        environment=config.environment,
    )
    try:
        agent = agent_factory(config.agent)(**config.agent_options.arguments())
        user = user_factory(config.user)(**config.user_options.arguments())
    except Exception as exc:  # noqa: BLE001 - a constructor failure is an infrastructure problem
        result = EpisodeResult(
            status="infra_error", end="infra_error", reason=f"cannot create: {type(exc).__name__}: {exc}"
        )
        return result, None
    if cache is not None:
        for seat in (agent, user):
            endpoint = getattr(seat, "endpoint", None)
            if isinstance(endpoint, ChatEndpoint):
                endpoint.cache = cache.side("agent" if seat is agent else "user", endpoint.scrubber)
    limits = Limits(config.max_turns, config.max_actions)
    result = await play_episode(setup, agent, user, limits, config.episode_timeout)
    return result, agent


class PlayedEpisode(NamedTuple):
    """A finished episode as a remote worker sends it back to the one writer: its store row and what
    its agent was shown (None: the agent could not be created)."""

    row: EpisodeRow
    shown: Shown | None
    cache: CacheSession | None = None  # what the episode recorded, for the driver to write


async def play_row(
    config: RunSpec, episode: Episode, attempts: int, cache: CacheSession | None = None
) -> PlayedEpisode:
    """Play one episode and return its store row with what the agent was shown (and, with a
    ``cache``, what it recorded)."""
    result, agent = await play(config, episode, cache)
    row = episode_row(config, episode, result, agent, attempts)
    return PlayedEpisode(row, agent.shown() if agent is not None else None, cache)


# Plays one episode somewhere (here, or on a cluster) and returns its row; the runner alone stores it
# (and writes what its ``cache`` session recorded).
EpisodePlayer = Callable[[RunSpec, Episode, int, CacheSession | None], Awaitable[PlayedEpisode]]


def verdict_column(score: EpisodeScores) -> dict[str, Any]:
    """The sound verdict of a scored episode as it is stored: its fields and the kind and depth of each
    constraint a failed procedure left unverified (the runner's ``verdict`` column, and the Inspect
    scorer's, so that both sources read back alike)."""
    unverified = score.sound.episode.verdict.procedure.unverified if score.sound.episode else ()
    return stored_verdict(score.sound.verdict, unverified)


def episode_row(
    config: RunSpec, episode: Episode, result: EpisodeResult, agent: Agent | None, attempts: int
) -> EpisodeRow:
    """The stored row of a finished episode, scored when it completed."""
    task = episode.task
    verdict = compat = None
    explanations: list[str] = []
    status, end, reason = result.status, result.end, result.reason
    if status == "completed":
        try:
            score = score_finished_episode(
                task,
                result.messages,
                result.final_database,
                tool_list=config.tool_list,
                ablations=config.ablations(),
                refused=[c.refused for c in result.calls],
            )
        except ScoringError as exc:
            status, end, reason = "infra_error", "infra_error", f"cannot be scored: {exc}"
        else:
            verdict, compat = verdict_column(score), score.compat_fields()
            explanations = list(score.sound.explanations)
            if score.compat_failure is not None:
                explanations.append(f"published checks not available: {score.compat_failure}")
    calls = [
        {
            "id": c.id,
            "name": c.name,
            "arguments_text": c.arguments_text,
            "arguments": c.arguments,
            "output": c.output,
            "problem": c.problem,
            **({"refused": True} if c.refused else {}),
        }
        for c in result.calls
    ]
    return EpisodeRow(
        task_id=episode.task_id,
        run=episode.run,
        domain=task.domain,
        goal=task.goal,
        task_index=task.index if task.index is not None else 0,
        seed=episode.seed,
        agent=config.agent,
        model=getattr(agent, "model", None),
        tool_mode=getattr(agent, "tool_mode", None),
        tool_list=config.tool_list,
        user=config.user,
        status=status,
        end_reason=end,
        reason=reason,
        should_succeed=int(task.action_should_succeed),
        passed=None if verdict is None else int(verdict["passed"]),
        verdict=verdict,
        compat=compat,
        explanations=explanations,
        messages=result.messages,
        tool_calls=calls,
        final_database=result.final_database if status == "completed" else None,
        problems=result.problems,
        raw_replies=result.raw_replies,
        malformed_calls=sum(c.problem is not None for c in result.calls),
        usage=_usage(result.usage)
        | (
            {
                "requests": result.requests,
                "timed_out_requests": result.timed_out_requests,
                "queue_s": round(result.queue_s, 3),
                "model_s": round(result.model_s, 3),
            }
            if result.requests
            else {}
        )
        | _cached(result.cache),
        user_usage=_usage(result.user_usage)
        | (
            {"queue_s": round(result.user_queue_s, 3), "model_s": round(result.user_model_s, 3)}
            if result.user_model_s
            else {}
        )
        | _cached(result.user_cache),
        agent_steps=result.agent_steps,
        latency_s=result.latency_s,
        attempts=attempts,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _usage(usage: Usage) -> dict[str, Any]:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}


def _cached(hits: tuple[int, Usage]) -> dict[str, Any]:
    """The replies a side got from the cache and the tokens their recording cost (included in the
    side's tokens, which are the replies' whatever their source): none when there were no hits."""
    count, usage = hits
    if not count:
        return {}
    return {
        "cache_hits": count,
        "cached_prompt_tokens": usage.prompt_tokens,
        "cached_completion_tokens": usage.completion_tokens,
    }


def row_score(
    row: EpisodeRow, protocol: str = "sound", source: str | None = None, *, calls_kept: bool = True
) -> RunScore:
    """A stored completed episode as a score the scoring summaries take.

    ``protocol``: ``sound`` reads the ``verdict`` column, ``sopbench`` the ``compat`` one (the
    stored explanations are the sound verdict's, kept only with it). ``source``: where the row was
    read (default: the agent's name). ``calls_kept``: False for a row read back from an Inspect
    score, which keeps no calls (whether a pass was by default is then not known).
    """
    if protocol not in ("sound", "sopbench"):
        raise ValueError(f"a run folder stores sound and sopbench verdicts only, not {protocol}")
    usage, user_usage = row.usage or {}, row.user_usage or {}
    verdict, unverified = read_verdict(row.verdict if protocol == "sound" else row.compat)
    return RunScore(
        source=row.agent if source is None else source,
        domain=row.domain,
        record=row.task_index,
        run=row.run,
        protocol=protocol,
        verdict=verdict,
        explanations=tuple(row.explanations) if protocol == "sound" else (),
        justified_refusal=None,
        should_succeed=bool(row.should_succeed),
        goal=row.goal,
        task_id=row.task_id,
        configuration=Configuration(row.agent, row.model, row.tool_mode, row.tool_list, row.user),
        usage=StatUsage(
            agent_prompt_tokens=usage.get("prompt_tokens") or 0,
            agent_completion_tokens=usage.get("completion_tokens") or 0,
            user_prompt_tokens=user_usage.get("prompt_tokens") or 0,
            user_completion_tokens=user_usage.get("completion_tokens") or 0,
            latency_s=row.latency_s,
        ),
        unverified=unverified,
        by_default=bool(verdict["passed"]) and not made_well_formed_action(row) if calls_kept else None,
    )
