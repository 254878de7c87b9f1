"""``sopbench run``: an agent on tasks, one episode per task and run, scored, stored and resumable."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ._ablations import ConstraintFormat, DefaultSop, EnvMode, NoAction, ShuffleTools
from ._app import app
from ._contract import verb
from ._job import EXIT_PARTIAL, Job, UserError, current_job, err_console, out_console
from ._next import next_steps
from ._options import AsJson, price_table_of, published_tasks, what_is
from ._progress import EpisodeProgress, default_task_set

if TYPE_CHECKING:
    from sopbench.runner import RunConfig, RunReport


AgentOption = Annotated[
    str,
    typer.Option(
        metavar="NAME", help="reference, refuse-all, no-verify, replay, openai, human (you play it), ..."
    ),
]
OutputOption = Annotated[
    Path,
    typer.Option(
        "--output", "-o", metavar="DIR", help="Run folder (results.sqlite); the same folder resumes."
    ),
]
DomainOption = Annotated[str, typer.Option(metavar="NAME", help="A domain, comma-separated domains, or all.")]
TasksOption = Annotated[
    Path | None,
    typer.Option(
        metavar="PATH",
        show_default=False,
        help="A task file or a folder of <domain>_tasks.json[.gz] (default: the generated task set); "
        "published: the published tasks `sopbench data fetch` keeps.",
        callback=published_tasks,
    ),
]
ToolListOption = Annotated[
    str, typer.Option(metavar="NAME", help="full (every tool an agent may call) or oracle.")
]
UserOption = Annotated[
    str,
    typer.Option(
        metavar="NAME", help="none (the published fixed replies), scripted, llm, human (you play it), ..."
    ),
]
Limit = Annotated[int | None, typer.Option(min=1, metavar="N", help="Only the first N tasks of each domain.")]
Concurrency = Annotated[int, typer.Option(min=1, metavar="N", help="Episodes played at once.")]
RunsOption = Annotated[int, typer.Option(min=1, metavar="K", help="Runs per task (at most 1,000).")]
SeedOption = Annotated[int, typer.Option(metavar="S", help="Run seed, 0 to 2**63-1 (each episode derives its own).")]
# No default here: a limit not given is the published one (``sopbench.domains.MAX_MESSAGES`` /
# ``MAX_CALLS``, the run configuration's defaults), written once; the CLI never imports the domains
# just to show it.
MaxTurns = Annotated[
    int | None,
    typer.Option(
        min=1,
        metavar="N",
        show_default=False,
        help="Message limit, checked before each reply as published (20): no reply is asked for once "
        "the transcript holds N messages; the answers to the last reply's calls may take it past N.",
    ),
]
MaxActions = Annotated[
    int | None,
    typer.Option(min=1, metavar="N", show_default=False, help="Executed calls per episode (published: 10)."),
]
EpisodeTimeout = Annotated[
    float, typer.Option(min=0.001, metavar="SECONDS", help="After this an episode is an infra_error.")
]
BaseUrl = Annotated[
    list[str] | None,
    typer.Option(
        metavar="URL",
        show_default=False,
        help="Agent: OpenAI-compatible endpoint; repeat it for replicas of one model (requests go "
        "to the least busy one; a failing one is left out for a while).",
    ),
]
ModelOption = Annotated[str | None, typer.Option(metavar="NAME", help="Agent: model name.")]
ToolMode = Annotated[str | None, typer.Option(metavar="MODE", help="Agent: fc, react or act-only.")]
Temperature = Annotated[
    str | None,
    typer.Option(
        metavar="T",
        show_default=False,
        help="Agent: sampling temperature (published: 0), or 'default' to send none (o-series models).",
    ),
]
MaxTokens = Annotated[
    str | None,
    typer.Option(
        metavar="N",
        show_default="512",
        help="Agent: completion token limit per reply (published: 512), or 'none' to send no limit.",
    ),
]
ToolChoice = Annotated[
    str | None,
    typer.Option(
        metavar="CHOICE",
        show_default="auto",
        help="Agent (fc): tool_choice sent with the tools: auto, required or none.",
    ),
]
CompactTools = Annotated[
    bool,
    typer.Option(
        "--compact-tools",
        help="Agent (react, act-only): the tool list as compact JSON (small-context models).",
    ),
]
ApiKeyEnv = Annotated[str | None, typer.Option(metavar="VAR", help="Agent: variable holding the API key.")]
RequestTimeout = Annotated[float | None, typer.Option(metavar="SECONDS", help="Agent: per request.")]
MaxRetries = Annotated[int | None, typer.Option(metavar="N", help="Agent: retries per request.")]
EndpointSlots = Annotated[
    int | None,
    typer.Option(
        min=1,
        metavar="N",
        show_default=False,
        help="Agent: requests in flight at once per endpoint URL (default: no cap; 1 for serve-local). A "
        "request waits for a slot before its --request-timeout starts; the wait is reported as queue time.",
    ),
]
Trajectories = Annotated[
    Path | None, typer.Option(metavar="FILE", help="Agent (replay): a published trajectory file.")
]
UserBaseUrl = Annotated[str | None, typer.Option(metavar="URL", help="User: OpenAI-compatible endpoint.")]
UserModel = Annotated[str | None, typer.Option(metavar="NAME", help="User: model name.")]
UserApiKeyEnv = Annotated[str | None, typer.Option(metavar="VAR", help="User: variable holding the API key.")]
UserTemperature = Annotated[
    str | None, typer.Option(metavar="T", show_default="1.0", help="User (llm): like --temperature.")
]
UserMaxTokens = Annotated[
    str | None, typer.Option(metavar="N", show_default="128", help="User (llm): like --max-tokens.")
]
UserRequestTimeout = Annotated[
    float | None, typer.Option(metavar="SECONDS", show_default="300", help="User (llm): per request.")
]
UserScript = Annotated[
    Path | None, typer.Option(metavar="FILE", help="User (scripted): a JSON file of replies.")
]
Baselines = Annotated[bool, typer.Option(help="Show refuse-all and no-verify on the same tasks.")]
PricesOption = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        show_default=False,
        help="TOML or JSON: USD per million input/output tokens per model; adds the agent's cost_usd.",
    ),
]
Wide = Annotated[bool, typer.Option("--wide", help="Tables with every count and interval (over 100 columns).")]
PluginOption = Annotated[
    list[str] | None,
    typer.Option(
        "--import",
        metavar="MODULE",
        show_default=False,
        help="Import a module that registers agents or users (repeatable).",
    ),
]


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
    tool_list: ToolListOption = "full",
    user: UserOption = "none",
    limit: Limit = None,
    concurrency: Concurrency = 8,
    runs: RunsOption = 1,
    seed: SeedOption = 0,
    max_turns: MaxTurns = None,
    max_actions: MaxActions = None,
    episode_timeout: EpisodeTimeout = 600.0,
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
    user_base_url: UserBaseUrl = None,
    user_model: UserModel = None,
    user_api_key_env: UserApiKeyEnv = None,
    user_temperature: UserTemperature = None,
    user_max_tokens: UserMaxTokens = None,
    user_request_timeout: UserRequestTimeout = None,
    user_script: UserScript = None,
    baselines: Baselines = True,
    prices: PricesOption = None,
    env_mode: EnvMode = "prompt",
    shuffle_tools: ShuffleTools = False,
    constraint_format: ConstraintFormat = "structured",
    default_sop: DefaultSop = "full",
    no_action: NoAction = None,
    plugin: PluginOption = None,
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
    from sopbench.runner import import_plugins
    from sopbench.statistics import with_cost

    job = current_job()
    try:
        import_plugins(plugin or ())
    except ImportError as exc:
        raise UserError(f"--import: {exc}") from None
    if tasks is None:  # the generated set holds the published domains: check before building it
        _check_published_domains(domain)
    price_table = price_table_of(prices)
    _declare_paths(job, output, tasks, trajectories=trajectories, user_script=user_script)
    people = "human" in (agent, user)  # a person plays a seat: one episode at a time, no time limit
    agent_options = _given(
        base_url=None if not base_url else base_url[0] if len(base_url) == 1 else list(base_url),
        model=model, tool_mode=tool_mode, temperature=_temperature(temperature),
        max_tokens=_max_tokens(max_tokens), tool_choice=tool_choice,
        compact_tools=True if compact_tools else None, api_key_env=api_key_env,
        request_timeout=request_timeout, max_retries=max_retries, endpoint_slots=endpoint_slots,
        trajectories=None if trajectories is None else str(trajectories),
    )
    user_options = _given(
        base_url=user_base_url, model=user_model, api_key_env=user_api_key_env,
        temperature=_temperature(user_temperature, "--user-temperature"),
        max_tokens=_max_tokens(user_max_tokens, "--user-max-tokens"), request_timeout=user_request_timeout,
        script=None if user_script is None else str(user_script),
    )
    config = _run_config(
        domains=domain, agent=agent, agent_options=agent_options, user=user, user_options=user_options,
        tasks=tasks, output=output, tool_list=tool_list, limit=limit,
        concurrency=1 if people else concurrency, runs=runs, seed=seed, **_given(max_turns=max_turns,
        max_actions=max_actions, no_action=no_action), episode_timeout=None if people else episode_timeout, baselines=baselines,
        env_mode=env_mode, shuffle_tools=shuffle_tools, constraint_format=constraint_format,
        default_sop=default_sop,
    )
    report = _play(job, config, show_progress=not people)  # no bar under a person's prompts
    if report.usage is not None and price_table is not None:
        report.usage = with_cost(report.usage, model, price_table)
    _show_run(job, report, model or agent, as_json, wide=wide)


def _check_published_domains(domain: str) -> None:
    from sopbench.domains import PUBLISHED_DOMAINS, select_domains

    try:
        select_domains(domain, among=PUBLISHED_DOMAINS)
    except ValueError as exc:
        raise UserError(f"--domain: {exc}") from None


def _declare_paths(
    job: Job, output: Path, tasks: Path | None, *, trajectories: Path | None, user_script: Path | None
) -> None:
    """The run's inputs, and its folder: a run creates it (parents included); its store is an input
    no output may replace."""
    from sopbench.runner import store_files

    if tasks is not None:
        job.inputs([tasks], "--tasks", contents=True)
    for option, path in (("--trajectories", trajectories), ("--user-script", user_script)):
        if path is not None:
            job.inputs([path], option)
    if output.exists() and not output.is_dir():
        raise UserError(f"--output {output}: is {what_is(output)}; name a folder (it holds results.sqlite)")
    job.output_folder(output, new_folders=True)
    job.inputs(store_files(output), "the run's store", must_exist=False)


def _run_config(**settings: Any) -> RunConfig:
    from sopbench.runner import RunConfig

    try:
        return RunConfig(**settings)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise UserError(_first_error(exc)) from None


def _play(job: Job, config: RunConfig, *, show_progress: bool) -> RunReport:
    """Every episode of ``config``, with the progress on stderr; the generated task set is built
    first (with its own progress bar) when no --tasks is given, once every option is checked."""
    from sopbench.runner import NoTaskToPlay, RunConfigError, StoreError
    from sopbench.runner import run as run_agents

    try:
        if config.tasks is None:
            config.check_options()
            default_task_set(job)  # built now; the run plays it (tasks None)
        with EpisodeProgress(job, show=show_progress) as progress:
            return run_agents(config, progress=progress.update)
    except NoTaskToPlay as exc:  # no run folder was made
        raise UserError(f"{exc}; no run folder was made", EXIT_PARTIAL, kind="nothing to do") from None
    except (RunConfigError, StoreError) as exc:
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


SEND_NONE = object()  # an option given as 'default' / 'none': passed to the agent as None


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
        where = ".".join(str(part) for part in error["loc"]) or "settings"
        return f"--{where.replace('_', '-')}: {error['msg']}"
    return str(exc)
