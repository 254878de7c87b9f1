"""``sopbench mcp serve``: a domain's episodes as an MCP server, one episode per session (docs/mcp.md)."""

from __future__ import annotations

import socket
from typing import Annotated, Any

import typer

from ._app import app
from ._contract import verb
from ._job import EXIT_PARTIAL, UserError, current_job, err_console
from ._run_options import (
    ConstraintFormat,
    DefaultSop,
    EnvMode,
    EpisodeTimeout,
    MaxActions,
    MaxTurns,
    NoAction,
    OutputOption,
    PluginOption,
    SeedOption,
    ShuffleTools,
    TasksOption,
    ToolListOption,
    UserApiKeyEnv,
    UserBaseUrl,
    UserModel,
    UserOption,
    UserOptionPairs,
    UserScript,
    merged_options,
)

mcp_app = typer.Typer(
    name="mcp",
    help="Benchmark any MCP client: `sopbench mcp serve` (one episode per session).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(mcp_app)

TaskId = Annotated[
    str | None,
    typer.Option(
        "--task", metavar="ID", show_default=False, help='Serve this task ("<domain>/<goal>[<i>]").'
    ),
]
AllTasks = Annotated[
    bool, typer.Option("--all", help="Serve every task of the domain, one per session, in order (resumes).")
]
RunIndex = Annotated[
    int | None,
    typer.Option(
        "--run", metavar="N", min=0, show_default=False, help="With --task: serve its run N (0-based)."
    ),
]
Transport = Annotated[
    str,
    typer.Option(
        metavar="stdio|http", help="stdio: one session on stdin/stdout; http: sessions on 127.0.0.1."
    ),
]
Port = Annotated[
    int, typer.Option(metavar="P", min=0, max=65535, help="--transport http: port on 127.0.0.1.")
]
Domain = Annotated[str, typer.Option(metavar="NAME", help="The domain whose tasks are served.")]
Runs = Annotated[
    int, typer.Option(min=1, max=1000, metavar="K", help="Runs per task (sessions play them in order).")
]


@verb(
    mcp_app,
    name="serve",
    epilog="Examples: sopbench mcp serve --domain bank --all --output runs/my-agent ; sopbench mcp serve "
    "--domain bank --all --transport http --port 8765 --output runs/my-agent",
)
def mcp_serve(
    output: OutputOption,
    domain: Domain,
    task: TaskId = None,
    all_tasks: AllTasks = False,
    run: RunIndex = None,
    runs: Runs = 1,
    tasks: TasksOption = None,
    seed: SeedOption = None,
    transport: Transport = "stdio",
    port: Port = 8765,
    user: UserOption = None,
    user_base_url: UserBaseUrl = None,
    user_model: UserModel = None,
    user_api_key_env: UserApiKeyEnv = None,
    user_script: UserScript = None,
    user_option: UserOptionPairs = None,
    tool_list: ToolListOption = None,
    max_turns: MaxTurns = None,
    max_actions: MaxActions = None,
    episode_timeout: EpisodeTimeout = None,
    env_mode: EnvMode = None,
    shuffle_tools: ShuffleTools = None,
    constraint_format: ConstraintFormat = None,
    default_sop: DefaultSop = None,
    no_action: NoAction = None,
    plugin: PluginOption = None,
) -> None:
    """Serve a domain's episodes to MCP clients: one MCP session is one episode, stored in OUTPUT.

    The session's tools are those `sopbench run` offers (same names, schemas and descriptions) plus
    ask_user, the agent's way to talk to the simulated user (its result is the user's reply); the
    SOP instructions and the user's opening message are the server's instructions and the prompt
    `task`. The episode ends at exit_conversation, at the published limits or when the session
    closes; it is then scored and stored in OUTPUT/results.sqlite under run's manifest, lock and
    resume rules (a dropped session is an infra_error, served again to a later session). stdio
    serves one session; http serves sessions on 127.0.0.1 until Ctrl-C.
    """
    from ._run import _check_published_domains, _declare_paths, _given, _import_plugins, run_spec

    job = current_job()
    if transport not in ("stdio", "http"):
        raise UserError(f"--transport {transport}: give stdio or http")
    if (task is None) == (not all_tasks):
        raise UserError("give --task ID or --all (one of them)")
    if run is not None and task is None:
        raise UserError("--run N goes with --task ID")
    if tasks is not None and str(tasks) == "generated":
        tasks = None
    _declare_paths(job, output, tasks, trajectories=None, user_script=user_script)
    import sopbench.mcp as served

    if not served.available():
        raise UserError("sopbench mcp serve needs the mcp extra: pip install 'sopbench[mcp]'")
    _import_plugins(plugin)
    if tasks is None:
        _check_published_domains(domain)
    if "," in domain or domain == "all":
        raise UserError(f"--domain {domain}: give one domain (one server per domain)")
    user_options = merged_options("user", _given(
        base_url=user_base_url, model=user_model, api_key_env=user_api_key_env,
        script=None if user_script is None else str(user_script),
    ), user_option)  # fmt: skip
    spec = run_spec(
        domains=domain, agent=served.AGENT_NAME, user_options=user_options, tasks=tasks, output=output,
        runs=runs if run is None else max(runs, run + 1), baselines=False,
        **_given(user=user, tool_list=tool_list, seed=seed, max_turns=max_turns, max_actions=max_actions,
                 episode_timeout=episode_timeout, env_mode=env_mode, shuffle_tools=shuffle_tools,
                 constraint_format=constraint_format, default_sop=default_sop, no_action=no_action),
    )  # fmt: skip
    sock = _bind(port) if transport == "http" else None
    try:
        _serve(job, spec, task, run, transport, sock)
    finally:
        if sock is not None:
            sock.close()


def _bind(port: int) -> socket.socket:
    """The HTTP server's socket on 127.0.0.1, bound before anything else (a port in use is one line)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise UserError(f"--port {port}: cannot listen on 127.0.0.1:{port} ({exc.strerror or exc})") from None
    sock.listen(128)
    return sock


def _serve(job: Any, spec: Any, task: str | None, run: int | None, transport: str, sock: Any) -> None:
    from contextlib import ExitStack

    from sopbench.mcp import EpisodeServer, run_server
    from sopbench.runner import RunSpecError, StoreError
    from sopbench.runner.episode import select_tasks
    from sopbench.runner.frontend import open_run_folder

    from ._progress import default_task_set

    if spec.tasks is None:
        default_task_set(job)  # built now (its progress on stderr); the server plays it
    try:
        selected = select_tasks(spec)
        if task is not None:
            selected = [(t, i) for t, i in selected if i == task]
            if not selected:
                raise UserError(
                    f"--task {task}: no such task in the {spec.domains[0]} tasks of {spec.tasks_path}"
                )
        with ExitStack() as stack:
            folder = open_run_folder(stack, spec, selected)
            episodes = [e for e in folder.episodes if run is None or e.run == run]
            server = EpisodeServer(spec, folder, episodes)
            if not server.left():
                job.nothing_to_do(f"every episode is stored in {spec.output}")
                return
            where = (
                "stdin/stdout" if transport == "stdio" else f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
            )
            err_console().print(
                f"sopbench mcp: serving {len(server.left())} episodes of {spec.domains[0]} on {where} "
                f"(one per session) into {spec.output}",
                markup=False,
                soft_wrap=True,
            )
            job.finish(f"episodes stored in {spec.output}")
            try:
                run_server(server, transport, sock)
            finally:
                job.finish(f"{server.report.line()}; stored in {spec.output}")
                err_console().print(f"sopbench mcp: {server.report.line()}", markup=False, soft_wrap=True)
    except (RunSpecError, StoreError) as exc:
        raise UserError(str(exc)) from None
    if server.report.late_requests:
        job.problem(
            f"{server.report.late_requests} requests came after their episode ended (refused)", kind="late"
        )
    if any(end == "infra_error" for end in server.report.stored):
        raise UserError(
            f"{server.report.stored['infra_error']} episodes ended in infra_error (a dropped session, a timeout); "
            "serve again to play them",
            EXIT_PARTIAL,
            kind="infra_error",
        )
