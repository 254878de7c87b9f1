"""Reading the sources: each unit (a run folder, an Inspect log, a trajectory file) into episodes,
scored under the chosen protocol, each added once by its address (a growing source is read again
and only what is new is added; an infra_error episode since played again takes its place)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from sopbench.cache import VerdictCache
from sopbench.inspect_eval import InspectLogError, inspect_log_episodes, is_inspect_log
from sopbench.runner import StoreError, read_run
from sopbench.scoring import (
    Protocol,
    RunScore,
    ScoringError,
    ScoringReport,
    file_configuration,
    load_records,
    score_run,
)
from sopbench.tasks import task_ids
from sopbench.traces import Record, detect_output_format

from ._address import episode_address, run_folder_digest, source_digest
from ._facts import EpisodeFacts, Prices, episode_facts
from ._sources import (
    INFRA_ERROR,
    JUDGEMENTS,
    Episode,
    LoadedSources,
    SourceError,
    configuration_name,
    failing_constraint_kinds,
    is_run_folder,
)

__all__ = ["load_sources", "load_unit"]


def load_sources(
    units: Iterable[Path],
    protocol: Protocol,
    advance: Callable[[str], None] | None = None,
    *,
    prices: Prices | None = None,
    cache: VerdictCache | None = None,
) -> LoadedSources:
    """Read and score every episode of ``units`` (see ``source_files``) under ``protocol``;
    ``prices`` (USD per million input and output tokens, by model) gives each live episode its cost;
    with ``cache``, trajectory files' verdicts are read from it (``load_unit``)."""
    loaded = LoadedSources(prices=prices)
    for unit in units:
        load_unit(unit, protocol, loaded, cache=cache)
        if advance is not None:
            advance(unit.name)
    return loaded


def load_unit(
    unit: Path, protocol: Protocol, loaded: LoadedSources, *, cache: VerdictCache | None = None
) -> None:
    """Add the episodes of one unit that ``loaded`` does not know yet (by address): the viewer reads
    a growing run folder again this way. ``SourceError`` for a run folder that cannot be read. With
    ``cache``, a trajectory file's verdicts come from the verdict cache when it holds them: its
    records are then read only when an episode's page is asked for (``Episode.full_score``)."""
    if is_run_folder(unit):
        _load_run_folder(unit, protocol, loaded)
    elif is_inspect_log(unit):
        _load_inspect_log(unit, protocol, loaded)
    elif cache is not None:
        _load_cached_file(unit, protocol, loaded, cache)
    else:
        _load_trajectory_file(unit, protocol, loaded)
    loaded.files += 1


def _add(loaded: LoadedSources, episode: Episode) -> None:
    """Add ``episode`` (made with ``_next_id``) unless its address is known; an infra_error episode
    since played again takes the place, and the number, of the one read before."""
    before = loaded.known.get(episode.address)
    if before is not None:
        if not before.judged and episode.judged:
            now = replace(episode, id=before.id)
            loaded.known[episode.address] = now
            loaded.replaced.append(now)
        return
    loaded.known[episode.address] = episode
    loaded.episodes.append(episode)


def _next_id(loaded: LoadedSources) -> int:
    return loaded.first_id + len(loaded.episodes)


def _load_trajectory_file(path: Path, protocol: Protocol, loaded: LoadedSources) -> None:
    records = load_records(path, lambda error: loaded.problems.append(str(error)))
    if not records:
        return
    identity = _file_identity(path, loaded)
    if identity is None:
        return
    fmt = detect_output_format(records)
    for record, task_id in zip(records, task_ids(record.task for record in records), strict=True):
        for run in range(len(record.runs)):
            try:
                score = score_run(record, run, protocol, output_format=fmt, task_id=task_id)
            except ScoringError as error:
                loaded.problems.append(str(error))
                if error.whole_record:
                    break
                continue
            _add_file_episode(loaded, path, identity, score)


def _load_cached_file(path: Path, protocol: Protocol, loaded: LoadedSources, cache: VerdictCache) -> None:
    """``_load_trajectory_file`` through the verdict cache: the same episodes and problems."""
    read = cache.score_file(path, protocol, ScoringReport())
    loaded.problems += read.problems
    if not read.scores:
        return
    identity = _file_identity(path, loaded)
    if identity is None:
        return
    for score in read.scores:
        _add_file_episode(loaded, path, identity, score, scored_with=protocol)


def _file_identity(path: Path, loaded: LoadedSources) -> tuple[str, str] | None:
    """A trajectory file's digest and configuration name; None, with the problem told, when the
    file cannot be read."""
    try:
        digest = source_digest(path)
    except OSError as exc:
        loaded.problems.append(f"{path}: cannot be read ({exc.strerror or exc})")
        return None
    return digest, configuration_name(file_configuration(str(path)))


def _add_file_episode(
    loaded: LoadedSources,
    path: Path,
    identity: tuple[str, str],
    score: RunScore,
    *,
    scored_with: Protocol | None = None,
) -> None:
    """One scored run of a trajectory file as an episode (``scored_with``: the protocol to score it
    again by when its page needs the full score, for a score read from the cache)."""
    digest, configuration = identity
    _add(
        loaded,
        Episode(
            _next_id(loaded),
            str(path),
            configuration,
            score.run,
            score,
            failing_constraint_kinds(score),
            task_id=score.task_id,
            digest=digest,
            stable_address=episode_address(digest, score.domain, score.task_id, score.run),
            scored_with=scored_with,
        ),
    )


def _not_judged(
    source: str, domain: str, goal: str, task_id: str, run: int, should_succeed: bool, reason: str
) -> RunScore:
    """The placeholder score of an episode that was never judged (no judgement failed: none was made)."""
    verdict = {"passed": False, **dict.fromkeys(JUDGEMENTS, True)}
    return RunScore(
        source,
        domain,
        0,
        run,
        "",
        verdict,
        (f"infra_error: {reason}",),
        None,
        should_succeed,
        goal,
        task_id=task_id,
    )


def _load_run_folder(folder: Path, protocol: Protocol, loaded: LoadedSources) -> None:
    try:
        stored = read_run(folder, on_damaged=loaded.problems.append)
        digest = run_folder_digest(folder, stored)
    except StoreError as error:
        raise SourceError(str(error)) from None
    for episode in stored.episodes:
        row = episode.row
        facts = episode_facts(
            status=row.status,
            end_reason=row.end_reason,
            reason=row.reason,
            usage=row.usage or {},
            user_usage=row.user_usage or {},
            latency_s=row.latency_s,
            attempts=row.attempts or 1,
            problems=tuple(row.problems or ()),
            model=row.model,
            prices=loaded.prices,
        )
        where = f"{folder}: {row.task_id} run {row.run}"
        if row.status != "completed":
            should = episode.record.task.action_should_succeed if episode.record is not None else True
            score = _not_judged(str(folder), row.domain, row.goal, row.task_id, 0, should, row.reason or "")
        else:
            assert episode.record is not None  # a completed episode always has its transcript
            try:
                score = score_run(episode.record, 0, protocol, task_id=row.task_id)
            except ScoringError as error:
                loaded.problems.append(f"{where}: {error.message}")
                continue
        record, shown = episode.record, (episode.system_prompt, episode.tools)
        _add_kept(
            loaded,
            folder,
            episode.configuration,
            score,
            record,
            shown,
            row.task_id,
            digest,
            row.run,
            facts,
        )


def _load_inspect_log(path: Path, protocol: Protocol, loaded: LoadedSources) -> None:
    try:
        digest = source_digest(path)
        episodes = list(inspect_log_episodes(path, _stored_protocol(protocol), loaded.problems.append))
    except InspectLogError as error:
        loaded.problems.append(str(error))
        return
    except ValueError as error:
        raise SourceError(f"{path}: {error}") from None
    for item in episodes:
        meta = item.facts
        model = meta.get("model") or None
        facts = episode_facts(
            status="completed" if item.error is None else INFRA_ERROR,
            end_reason=meta.get("end_reason"),
            reason=item.error,
            usage=meta.get("usage") if isinstance(meta.get("usage"), dict) else None,
            user_usage=meta.get("user_usage") if isinstance(meta.get("user_usage"), dict) else None,
            latency_s=meta.get("latency_s"),
            attempts=None,
            problems=problems if isinstance(problems := meta.get("problems"), list) else [],
            model=model,
            prices=loaded.prices,
        )
        score = item.score
        if score is None:
            score = _not_judged(
                path.as_posix(),
                item.domain,
                item.goal,
                item.task_id,
                item.run,
                item.should_succeed,
                item.error or "no score",
            )
        configuration = (
            configuration_name(score.config) if item.score is not None else f"{model or 'inspect'} · fc"
        )
        shown = (item.system_prompt, None)
        _add_kept(
            loaded, path, configuration, score, item.record, shown, item.task_id, digest, item.run, facts
        )


def _add_kept(
    loaded: LoadedSources,
    source: Path,
    configuration: str,
    score: RunScore,
    record: Record | None,
    shown: tuple[str | None, tuple[dict[str, Any], ...] | None],
    task_id: str,
    digest: str,
    run: int,
    facts: EpisodeFacts,
) -> None:
    """An episode whose record was read with it (a run folder's, an Inspect log's): kept, one run."""
    kinds = failing_constraint_kinds(score) if facts.status != INFRA_ERROR else frozenset()
    address = episode_address(digest, score.domain, task_id, run)
    prompt, tools = shown
    episode = Episode(
        _next_id(loaded),
        str(source),
        configuration,
        0,
        score,
        kinds,
        record,
        prompt,
        tools,
        task_id=task_id,
        digest=digest,
        task_run=run,
        facts=facts,
        in_file=False,
        stable_address=address,
    )
    _add(loaded, episode)


def _stored_protocol(protocol: Protocol) -> str:
    """``sound`` or ``sopbench``: the two verdicts an Inspect log keeps (``ValueError`` for others)."""
    from sopbench.scoring import SOPBENCH, SOUND

    if protocol.quirks == SOUND.quirks:
        return "sound"
    if protocol.quirks == SOPBENCH.quirks:
        return "sopbench"
    raise ValueError(f"an Inspect log keeps the sound and sopbench verdicts only, not {protocol}")
