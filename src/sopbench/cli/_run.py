"""``sopbench run``: an agent on tasks, one episode per task and run, scored, stored and resumable."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._app import app
from ._contract import verb
from ._job import EXIT_PARTIAL, Job, UserError, current_job, err_console, out_console
from ._next import next_steps
from ._options import AsJson, choice, price_table_of, what_is
from ._progress import EpisodeProgress, default_task_set
from ._run_options import (
    AgentOption,
    AgentOptionPairs,
    ApiKeyEnv,
    Baselines,
    BaseUrl,
    CacheModeOption,
    CacheOption,
    CompactTools,
    Concurrency,
    ConstraintFormat,
    DefaultSop,
    DomainOption,
    EndpointSlots,
    EnvMode,
    EpisodeTimeout,
    GuardOption,
    Limit,
    MaxActions,
    MaxRetries,
    MaxTokens,
    MaxTurns,
    ModelOption,
    NoAction,
    OutputOption,
    PluginOption,
    PricesOption,
    RequestTimeout,
    RunsOption,
    SeedOption,
    ShuffleTools,
    TasksOption,
    Temperature,
    ToolChoice,
    ToolListOption,
    ToolMode,
    Trajectories,
    UserApiKeyEnv,
    UserBaseUrl,
    UserMaxTokens,
    UserModel,
    UserOption,
    UserOptionPairs,
    UserRequestTimeout,
    UserScript,
    UserTemperature,
    Via,
    Wide,
    merged_options,
    options_message,
)

if TYPE_CHECKING:
    from sopbench.runner import RunReport, RunSpec


@verb(
    app,
    epilog="Examples: sopbench run --agent reference --domain all --tasks ../shared/sopbench/tasks "
    "--output runs/reference ; sopbench run --agent openai --base-url http://localhost:8000/v1 "
    "--model qwen2.5 --domain bank --limit 20 --output runs/qwen",
)
def run(
    agent: AgentOption,
    output: OutputOption,
    domain: DomainOption = "all",
    tasks: TasksOption = None,
    tool_list: ToolListOption = None,
    user: UserOption = None,
    limit: Limit = None,
    concurrency: Concurrency = None,
    runs: RunsOption = None,
    seed: SeedOption = None,
    max_turns: MaxTurns = None,
    max_actions: MaxActions = None,
    episode_timeout: EpisodeTimeout = None,
    base_url: BaseUrl = None,
    model: ModelOption = None,
    tool_mode: ToolMode = None,
    temperature: Temperature = None,
    max_tokens: MaxTokens = None,
    tool_choice: ToolChoice = None,
    compact_tools: CompactTools = False,
    api_key_env: ApiKeyEnv = None,
    request_timeout: RequestTimeout = None,
    max_retries: MaxRetries = None,
    endpoint_slots: EndpointSlots = None,
    trajectories: Trajectories = None,
    agent_option: AgentOptionPairs = None,
    user_base_url: UserBaseUrl = None,
    user_model: UserModel = None,
    user_api_key_env: UserApiKeyEnv = None,
    user_temperature: UserTemperature = None,
    user_max_tokens: UserMaxTokens = None,
    user_request_timeout: UserRequestTimeout = None,
    user_script: UserScript = None,
    user_option: UserOptionPairs = None,
    baselines: Baselines = True,
    prices: PricesOption = None,
    env_mode: EnvMode = None,
    shuffle_tools: ShuffleTools = None,
    constraint_format: ConstraintFormat = None,
    default_sop: DefaultSop = None,
    no_action: NoAction = None,
    cache: CacheOption = None,
    cache_mode: CacheModeOption = None,
    plugin: PluginOption = None,
    via: Via = "direct",
    guard: GuardOption = False,
    as_json: AsJson = False,
    wide: Wide = False,
) -> None:
    """Run an agent on tasks: one episode per task and run, scored, stored and resumable.

    Episodes follow the published loop (the task's user_prompt first; the user replies with the
    known values; the episode ends at exit_conversation, at 20 messages before a reply or after 10 calls). Each finished
    episode is stored in OUTPUT/results.sqlite at once; the same command on the same folder skips
    finished episodes and retries infra_error ones. Exits 1 when infra_error episodes remain or
    the model never replied in some episode (reported apart, not scored).
    """
    from sopbench.statistics import with_cost

    job = current_job()
    _import_plugins(plugin)
    if tasks is None:  # the generated set holds the published domains: check before building it
        _check_published_domains(domain)
    price_table = price_table_of(prices)
    _declare_paths(job, output, tasks, trajectories=trajectories, user_script=user_script, cache=cache)
    if cache_mode is not None:
        choice("--cache-mode", cache_mode, CACHE_MODES)
    people = "human" in (agent, user)  # a person plays a seat: one episode at a time, no time limit
    agent_options = merged_options("agent", _given(
        base_url=None if not base_url else base_url[0] if len(base_url) == 1 else list(base_url),
        model=model, tool_mode=tool_mode, temperature=_temperature(temperature),
        max_tokens=_max_tokens(max_tokens), tool_choice=tool_choice,
        compact_tools=True if compact_tools else None, api_key_env=api_key_env,
        request_timeout=request_timeout, max_retries=max_retries, endpoint_slots=endpoint_slots,
        trajectories=None if trajectories is None else str(trajectories),
    ), agent_option)  # fmt: skip
    user_options = merged_options("user", _given(
        base_url=user_base_url, model=user_model, api_key_env=user_api_key_env,
        temperature=_temperature(user_temperature, "--user-temperature"),
        max_tokens=_max_tokens(user_max_tokens, "--user-max-tokens"), request_timeout=user_request_timeout,
        script=None if user_script is None else str(user_script),
    ), user_option)  # fmt: skip
    spec = run_spec(
        domains=domain, agent=agent, agent_options=agent_options, user_options=user_options, tasks=tasks,
        output=output, limit=limit, baselines=baselines, **_given(user=user, tool_list=tool_list,
        concurrency=1 if people else concurrency, runs=runs, seed=seed, max_turns=max_turns,
        max_actions=max_actions, episode_timeout=SEND_NONE if people else episode_timeout, env_mode=env_mode,
        shuffle_tools=shuffle_tools, constraint_format=constraint_format, default_sop=default_sop,
        no_action=no_action, via=None if via == "direct" else via, guard=guard or None, cache=cache,
        cache_mode=cache_mode),
    )  # fmt: skip
    report = _play(
        job, spec, show_progress=not people, player=_player(spec)
    )  # no bar under a person's prompts
    if report.usage is not None and price_table is not None:
        report.usage = with_cost(report.usage, model, price_table)
    _show_run(job, report, model or agent, as_json, wide=wide)


def _import_plugins(modules: list[str] | None) -> None:
    from sopbench.runner.frontend import import_plugins

    try:
        import_plugins(modules or ())
    except ImportError as exc:
        raise UserError(f"--import: {exc}") from None


def _check_published_domains(domain: str) -> None:
    from sopbench.domains import PUBLISHED_DOMAINS, select_domains

    try:
        select_domains(domain, among=PUBLISHED_DOMAINS)
    except ValueError as exc:
        raise UserError(f"--domain: {exc}") from None


def _declare_paths(
    job: Job,
    output: Path,
    tasks: Path | None,
    *,
    trajectories: Path | None,
    user_script: Path | None,
    cache: Path | None = None,
) -> None:
    """The run's inputs, and its folder: a run creates it (parents included); its store is an input
    no output may replace, and so is its cache (read and written by the run itself)."""
    from sopbench.runner.store import store_files

    if cache is not None:
        job.inputs([cache], "--cache", must_exist=False)
    if tasks is not None:
        job.inputs([tasks], "--tasks", contents=True)
    for option, path in (("--trajectories", trajectories), ("--user-script", user_script)):
        if path is not None:
            job.inputs([path], option)
    if output.exists() and not output.is_dir():
        raise UserError(f"--output {output}: is {what_is(output)}; name a folder (it holds results.sqlite)")
    job.output_folder(output, new_folders=True)
    job.inputs(store_files(output), "the run's store", must_exist=False)


def run_spec(**settings: Any) -> RunSpec:
    """The ``RunSpec`` of these settings, or a ``UserError`` naming the first wrong one as ``sopbench
    run`` spells it."""
    from sopbench.agents import OptionsError
    from sopbench.runner import RunSpec

    try:
        return RunSpec(**settings)
    except OptionsError as exc:
        raise UserError(options_message(exc)) from None
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise UserError(_first_error(exc)) from None


def _player(spec: RunSpec) -> Any:
    """The episode player of ``--via``: None (in process) or the MCP client of ``sopbench.mcp`` (which
    starts ``sopbench guard proxy`` before each episode's server when the spec has ``guard``)."""
    if spec.via == "direct":
        return None
    import sopbench.mcp

    if spec.agent == "human" or spec.user == "human":
        raise UserError("--via mcp: a human seat plays in this terminal; use --via direct")
    if not sopbench.mcp.available():
        raise UserError("--via mcp needs the mcp extra: pip install 'sopbench[mcp]'")
    return sopbench.mcp.mcp_player()


def _play(job: Job, config: RunSpec, *, show_progress: bool, player: Any = None) -> RunReport:
    """Every episode of ``config``, with the progress on stderr; the generated task set is built
    first (with its own progress bar) when no --tasks is given, once every option is checked."""
    from sopbench.runner import RunSpecError, StoreError
    from sopbench.runner import run as run_agents
    from sopbench.runner.frontend import NoTaskToPlay

    try:
        if config.tasks is None:
            default_task_set(job)  # built now; the run plays it (tasks None)
        with EpisodeProgress(job, show=show_progress) as progress:
            return run_agents(config, progress=progress.update, player=player)
    except NoTaskToPlay as exc:  # no run folder was made
        raise UserError(f"{exc}; no run folder was made", EXIT_PARTIAL, kind="nothing to do") from None
    except (RunSpecError, StoreError) as exc:
        raise UserError(str(exc)) from None


def _show_run(job: Job, report: RunReport, agent: str, as_json: bool, *, wide: bool = False) -> None:
    """The summary (one JSON document, or the task set and the tables), then what went wrong.
    ``agent``: what the tables call the agent's row (its model when one was named)."""
    from sopbench.report import run_tables

    job.finish(f"{report.completed} of {report.episodes} episodes stored in {report.output}")
    for damaged in report.damaged:
        job.problem(damaged)
    if as_json:
        sys.stdout.write(json.dumps(report.as_dict(), indent=2) + "\n")
    else:
        if report.task_set is not None:
            out_console().print(report.task_set.describe(), markup=False)
        for table in run_tables(report, agent, wide=wide):
            table.print(out_console())
        for line in next_steps(report.output):
            out_console().print(line, markup=False, soft_wrap=True)
    for reason in report.infra_reasons:
        job.problem(reason, kind="infra_error")
    _show_cache(job, report, as_json)
    for end, count in report.no_reply.items():
        job.problem(
            f"{count} episodes ended at the first request: {end} (the model never replied; not scored)",
            kind="no_reply",
        )
    if report.timed_out_requests:
        err_console().print(
            f"{report.timed_out_requests} requests got no reply within --request-timeout and were abandoned "
            "(each sent again while --max-retries allowed; the server may have kept working on them: "
            "consider a lower --max-tokens)",
            markup=False,
        )
    if report.queue_s:
        err_console().print(
            f"model requests waited {report.queue_s:.1f} s for an endpoint slot (--endpoint-slots) and were "
            f"answered in {report.model_s:.1f} s",
            markup=False,
        )
    if report.infra_errors:
        err_console().print(
            f"{report.infra_errors} episodes ended in infra_error (not scored): run the same command to retry them",
            markup=False,
        )
    elif report.episodes == 0:
        job.nothing_to_do("no task matches --domain / --limit")


CACHE_MODES = ("read-write", "replay", "off")  # sopbench.agents.openai.CACHE_MODES (not imported: slow)

SEND_NONE = object()  # an option given as 'default' / 'none': passed to the agent as None


def _show_cache(job: Job, report: RunReport, as_json: bool) -> None:
    """What the cache did (one line on stderr) and what went wrong with it (one line each)."""
    cache = report.cache
    if cache is None:
        return
    for problem in cache.problems:
        job.problem(problem, kind="cache")
    for note in cache.notes:
        err_console().print(note, markup=False)
    if not as_json:
        err_console().print(
            f"cache {cache.path} ({cache.mode}): {cache.hits} replies from the cache "
            f"({cache.hit_prompt_tokens} + {cache.hit_completion_tokens} tokens not paid again), "
            f"{cache.misses} not in it, {cache.recorded} recorded",
            markup=False,
        )


def _temperature(text: str | None, option: str = "--temperature") -> object:
    if text is None:
        return None
    if text == "default":  # passed as "not set": the model's own default applies
        return SEND_NONE
    try:
        return float(text)
    except ValueError:
        raise UserError(f"{option} {text}: give a number or 'default'") from None


def _max_tokens(text: str | None, option: str = "--max-tokens") -> object:
    if text is None:
        return None
    if text.strip().lower() == "none":  # passed: send no limit
        return SEND_NONE
    try:
        value = int(text)
    except ValueError:
        raise UserError(f"{option} {text}: give a positive whole number or 'none'") from None
    if value <= 0:
        raise UserError(f"{option} {text}: give a positive whole number or 'none'")
    return value


def _given(**options: object) -> dict[str, object]:
    """The options the user set (an agent's constructor gets only those; ``SEND_NONE`` ones as None)."""
    return {key: None if value is SEND_NONE else value for key, value in options.items() if value is not None}


def _first_error(exc: Exception) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        loc = [str(part) for part in error["loc"]]
        where = ".".join(loc[1:] if loc[:1] == ["environment"] else loc) or "settings"
        return f"--{where.replace('_', '-')}: {error['msg']}"
    return str(exc)
