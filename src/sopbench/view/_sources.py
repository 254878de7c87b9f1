"""Sources of episodes, mixed freely: what ``sopbench evaluate`` reads. Run folders of ``sopbench
run`` (and every run folder below a folder, as a sweep writes them), Inspect logs of the ``sopbench``
task (``.eval``, ``.json``), and trajectory files (published, or ``sopbench export --format sopbench``).

Every episode becomes an ``Episode``: its record and run (what was said and called), its verdict under
the chosen protocol, how it went (``EpisodeFacts``), its stable address, and the few facts the list
filters on, computed once when the source is read. ``infra_error`` episodes are kept, with what they
have (their transcript up to the failure, never scored).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from sopbench.inspect_eval import InspectLogError, inspect_log_episodes, is_inspect_log
from sopbench.runner import STORE_NAME, StoreError, read_run_folder
from sopbench.scoring import Protocol, RunScore, ScoringError, file_configuration, load_records, score_run
from sopbench.statistics import Configuration
from sopbench.traces import Record, detect_output_format, iter_trajectory_files

from ._address import episode_address, run_folder_digest, source_digest
from ._facts import EpisodeFacts, Prices, episode_facts

__all__ = [
    "JUDGEMENTS",
    "Episode",
    "LoadedSources",
    "SourceError",
    "configuration_name",
    "failing_constraint_kinds",
    "load_sources",
    "load_unit",
    "source_files",
]

# The three judgements, in the order the verdict gives them.
JUDGEMENTS = ("database", "permission", "procedure")
INFRA_ERROR = "infra_error"


class SourceError(Exception):
    """A source that cannot be read at all (not a run folder, no trajectory file, a damaged store)."""


@dataclass(frozen=True, slots=True, eq=False)
class Episode:
    """One run of one task, scored, with what the list filters on.

    A run from a trajectory file keeps only where it is: its record is read again when its page is
    asked for (the conversations and final databases of the 14,567 published runs would take
    most of a gigabyte if all were kept).
    """

    id: int  # position in the loaded list: this viewer's own number (``address`` is the stable one)
    source: str  # the trajectory file, run folder or Inspect log it came from
    configuration: str  # model, tool mode, tool list, user
    run: int  # the run's index in ``record.runs``
    score: RunScore  # an infra_error episode's is a placeholder: never judged (``judged``)
    kinds: frozenset[str]  # the kinds of the constraints that failed its procedure (failing_constraint_kinds)
    stored: Record | None = None  # the record itself, for runs not read from a trajectory file
    # What a run folder's model was shown beyond the conversation (a published file keeps only the
    # prompt, in its record): the system prompt and the tool schemas, shared with the episodes that got them.
    system_prompt: str | None = None
    tools: tuple[dict[str, Any], ...] | None = None
    task_id: str = ""  # "<domain>/<goal>[<i>]"
    digest: str = ""  # the source's digest (``source_digest``)
    task_run: int | None = None  # the run of the task, from 0 (None: ``run``)
    facts: EpisodeFacts | None = None  # how it went; None: the source keeps none of it
    in_file: bool = True  # the record is read again from ``source`` (a trajectory file) when needed

    @property
    def record(self) -> Record:
        if self.stored is not None:
            return self.stored
        if not self.in_file:
            raise LookupError(f"{self.source}: {self.task_id} run {self.number} kept no transcript")
        return _file_records(self.source)[self.score.record]

    @property
    def has_record(self) -> bool:
        return self.stored is not None or self.in_file

    @property
    def number(self) -> int:
        """The run of the task (from 0) as the source numbers it."""
        return self.run if self.task_run is None else self.task_run

    @property
    def address(self) -> str:
        """The stable path of this episode in every viewer (``episode_address``)."""
        return episode_address(self.digest, self.domain, self.task_id, self.number)

    @property
    def source_name(self) -> str:
        """The file or folder name of the source (the page shows the full path on hover)."""
        return Path(self.source).name

    @property
    def domain(self) -> str:
        return self.score.domain

    @property
    def goal(self) -> str:
        return self.score.goal

    @property
    def judged(self) -> bool:
        """False for an infra_error episode: it was never scored."""
        return self.facts is None or self.facts.status != INFRA_ERROR

    @property
    def outcome(self) -> str:
        return INFRA_ERROR if not self.judged else "passed" if self.passed else "failed"

    @property
    def passed(self) -> bool:
        return self.score.passed

    @property
    def failing(self) -> tuple[str, ...]:
        """The judgements that failed (database, permission, procedure)."""
        verdict = self.score.verdict
        return tuple(name for name in JUDGEMENTS if not verdict[name])


@lru_cache(maxsize=8)
def _file_records(path: str) -> dict[int, Record]:
    """The records of one trajectory file by their index in it (the last few files read are kept)."""
    return {record.index: record for record in load_records(path, lambda error: None)}


@dataclass
class LoadedSources:
    episodes: list[Episode] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # runs or files that could not be used, one line each
    files: int = 0  # trajectory files, run folders and logs read
    first_id: int = 0  # the id of the first episode (a later reading continues the numbering)
    known: dict[str, Episode] = field(default_factory=dict)  # by address: read before, or now
    replaced: list[Episode] = field(default_factory=list)  # infra_error episodes since completed
    prices: Prices | None = None


def failing_constraint_kinds(score: RunScore) -> frozenset[str]:
    """The kinds of the constraints that failed the run's procedure (``Outcome.findings``: Single,
    negation, And, Or, Chain, Gate, or unclassified), as the report's breakdown counts them."""
    return frozenset(finding.kind for finding in score.outcome().findings)


def configuration_name(configuration: Configuration) -> str:
    """The configuration as the list names it (its ``configuration`` filter): model (or agent),
    tool mode, tool list, user (when there is one)."""
    parts = [configuration.model or configuration.agent]
    if configuration.tool_mode:
        parts.append(configuration.tool_mode)
    if configuration.tool_list:
        parts.append(f"tools {configuration.tool_list}")
    if configuration.user and configuration.user != "none":
        parts.append(f"user {configuration.user}")
    return " · ".join(parts)


def is_run_folder(path: Path) -> bool:
    return path.is_dir() and (path / STORE_NAME).is_file()


def source_files(sources: Iterable[Path], *, allow_empty: bool = False) -> list[Path]:
    """Each source as the unit it is read in: run folders (a folder's own, or every one below it),
    Inspect logs, and the trajectory files outside run folders. A source with none of them is a
    ``SourceError`` (with ``allow_empty``, a folder that has none yet is accepted: a sweep about to
    write it)."""
    units: list[Path] = []
    for source in sources:
        if is_run_folder(source) or is_inspect_log(source):
            units.append(source)
            continue
        found: list[Path] = []
        if source.is_dir():
            folders = sorted(store.parent for store in source.rglob(STORE_NAME) if store.is_file())
            logs = sorted(log for log in source.rglob("*.eval") if is_inspect_log(log))
            roots = [folder.resolve() for folder in folders]
            files = [
                file
                for file in iter_trajectory_files(source)
                if not any(file.resolve().is_relative_to(root) for root in roots)
            ]
            found = [*folders, *logs, *files]
        elif source.is_file():
            found = [source]
        if not found and not (allow_empty and source.is_dir()):
            raise SourceError(
                f"{source}: neither a run folder ({STORE_NAME}), an Inspect log nor trajectory files"
            )
        units.extend(found)
    return list(dict.fromkeys(units))


def load_sources(
    units: Iterable[Path],
    protocol: Protocol,
    advance: Callable[[str], None] | None = None,
    *,
    prices: Prices | None = None,
) -> LoadedSources:
    """Read and score every episode of ``units`` (see ``source_files``) under ``protocol``;
    ``prices`` (USD per million input and output tokens, by model) gives each live episode its cost."""
    loaded = LoadedSources(prices=prices)
    for unit in units:
        load_unit(unit, protocol, loaded)
        if advance is not None:
            advance(unit.name)
    return loaded


def load_unit(unit: Path, protocol: Protocol, loaded: LoadedSources) -> None:
    """Add the episodes of one unit that ``loaded`` does not know yet (by address): the viewer reads
    a growing run folder again this way. ``SourceError`` for a run folder that cannot be read."""
    if is_run_folder(unit):
        _load_run_folder(unit, protocol, loaded)
    elif is_inspect_log(unit):
        _load_inspect_log(unit, protocol, loaded)
    else:
        _load_trajectory_file(unit, protocol, loaded)
    loaded.files += 1


def _add(loaded: LoadedSources, episode: Episode) -> None:
    before = loaded.known.get(episode.address)
    if before is not None:
        if not before.judged and episode.judged:  # an infra_error episode played again
            now = _with_id(episode, before.id)
            loaded.known[episode.address] = now
            loaded.replaced.append(now)
        return
    episode = _with_id(episode, loaded.first_id + len(loaded.episodes))
    loaded.known[episode.address] = episode
    loaded.episodes.append(episode)


def _with_id(episode: Episode, number: int) -> Episode:
    from dataclasses import replace

    return replace(episode, id=number)


def _load_trajectory_file(path: Path, protocol: Protocol, loaded: LoadedSources) -> None:
    records = load_records(path, lambda error: loaded.problems.append(str(error)))
    if not records:
        return
    try:
        digest = source_digest(path)
    except OSError as exc:
        loaded.problems.append(f"{path}: cannot be read ({exc.strerror or exc})")
        return
    configuration = configuration_name(file_configuration(str(path)))
    fmt = detect_output_format(records)
    positions: dict[str, int] = {}
    for record in records:
        position = positions.get(record.task.goal, 0)
        positions[record.task.goal] = position + 1
        task_id = f"{record.domain}/{record.task.goal}[{position}]"  # as the runner names tasks
        for run in range(len(record.runs)):
            try:
                score = score_run(record, run, protocol, output_format=fmt, task_id=task_id)
            except ScoringError as error:
                loaded.problems.append(str(error))
                if error.whole_record:
                    break
                continue
            kinds = failing_constraint_kinds(score)
            _add(
                loaded,
                Episode(0, str(path), configuration, run, score, kinds, task_id=task_id, digest=digest),
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
        stored = read_run_folder(folder, on_damaged=loaded.problems.append)
        digest = run_folder_digest(folder, stored.manifest)
    except StoreError as error:
        raise SourceError(str(error)) from None
    for episode in stored.episodes:
        facts = episode_facts(
            status=episode.status,
            end_reason=episode.end_reason,
            reason=episode.reason,
            usage=episode.usage,
            user_usage=episode.user_usage,
            latency_s=episode.latency_s,
            attempts=episode.attempts,
            problems=episode.problems,
            model=episode.model,
            prices=loaded.prices,
        )
        where = f"{folder}: {episode.task_id} run {episode.run}"
        if episode.status != "completed":
            should = episode.record.task.action_should_succeed if episode.record is not None else True
            score = _not_judged(
                str(folder), episode.domain, episode.goal, episode.task_id, 0, should, episode.reason or ""
            )
        else:
            assert episode.record is not None  # a completed episode always has its transcript
            try:
                score = score_run(episode.record, 0, protocol, task_id=episode.task_id)
            except ScoringError as error:
                loaded.problems.append(f"{where}: {error.message}")
                continue
        _add(
            loaded,
            Episode(
                0,
                str(folder),
                episode.configuration,
                0,
                score,
                failing_constraint_kinds(score),
                episode.record,
                episode.system_prompt,
                episode.tools,
                task_id=episode.task_id,
                digest=digest,
                task_run=episode.run,
                facts=facts,
                in_file=False,
            ),
        )


def _load_inspect_log(path: Path, protocol: Protocol, loaded: LoadedSources) -> None:
    from ._address import source_digest as digest_of

    try:
        digest = digest_of(path)
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
            problems=meta.get("problems") if isinstance(meta.get("problems"), list) else (),
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
        _add(
            loaded,
            Episode(
                0,
                str(path),
                configuration,
                0,
                score,
                failing_constraint_kinds(score) if item.score is not None else frozenset(),
                item.record,
                item.system_prompt,
                task_id=item.task_id,
                digest=digest,
                task_run=item.run,
                facts=facts,
                in_file=False,
            ),
        )


def _stored_protocol(protocol: Protocol) -> str:
    """``sound`` or ``sopbench``: the two verdicts an Inspect log keeps (``ValueError`` for others)."""
    from sopbench.scoring import SOPBENCH, SOUND

    if protocol.quirks == SOUND.quirks:
        return "sound"
    if protocol.quirks == SOPBENCH.quirks:
        return "sopbench"
    raise ValueError(f"an Inspect log keeps the sound and sopbench verdicts only, not {protocol}")
