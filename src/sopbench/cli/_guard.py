"""``sopbench guard proxy``: the runtime guard as an MCP proxy in front of any MCP server."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated

import typer

from ._app import app
from ._contract import verb
from ._job import EXIT_PARTIAL, UserError, current_job, err_console
from ._options import published_tasks
from ._progress import default_task_set

if TYPE_CHECKING:
    from sopbench.guard import Guard
    from sopbench.tasks import Task

guard_app = typer.Typer(
    name="guard",
    help="The runtime guard outside the benchmark: `sopbench guard proxy` in front of any MCP server.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(guard_app)

SopOption = Annotated[
    Path | None,
    typer.Option(
        "--sop",
        metavar="FILE",
        show_default=False,
        help="An SOP file: the rules to enforce, as JSON (docs/guard.md).",
    ),
]
DomainOption = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        show_default=False,
        help="A domain's default SOPs (every action of it), or with --task one task's.",
    ),
]
TaskOption = Annotated[
    str | None,
    typer.Option(
        "--task",
        metavar="ID",
        show_default=False,
        help="A task id as run folders name it (bank/apply_credit_card[0], or apply_credit_card[0] with --domain).",
    ),
]
TasksOption = Annotated[
    Path | None,
    typer.Option(
        metavar="PATH",
        show_default=False,
        help="Where --task is looked up: a task file or a folder of <domain>_tasks.json[.gz] "
        "(default: the generated task set); published: the published tasks.",
        callback=published_tasks,
    ),
]
LogOption = Annotated[
    Path | None,
    typer.Option(
        "--log",
        metavar="FILE",
        show_default=False,
        help="Append the decision log (one JSON line per call) to FILE (default: standard error).",
    ),
]
Upstream = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="-- UPSTREAM_COMMAND...",
        show_default=False,
        help="The MCP server to guard: the command that starts it over stdio.",
    ),
]

_TASK_ID = re.compile(r"^(?:(?P<domain>[A-Za-z0-9_]+)/)?(?P<goal>[^\[\]/]+)\[(?P<index>\d+)\]$")


@verb(
    guard_app,
    name="proxy",
    context_settings={"allow_interspersed_args": False},
    epilog="Examples: sopbench guard proxy --sop sop.json -- python my_server.py ; "
    "sopbench guard proxy --domain bank --task bank/apply_credit_card[0] --log decisions.jsonl -- "
    "sopbench mcp serve --domain bank",
)
def proxy(
    upstream: Upstream = None,
    sop: SopOption = None,
    domain: DomainOption = None,
    task: TaskOption = None,
    tasks: TasksOption = None,
    log: LogOption = None,
) -> None:
    """Serve MCP on stdio in front of the server UPSTREAM_COMMAND starts, with the guard.

    Every message passes through both ways, except tools/call: a call whose SOP the calls before it
    verified goes to the server and its answer back; a refused one never reaches the server and is
    answered with the guard's explanation as a tool error (isError), which the agent can act on.
    Calls run one at a time in the order sent. Each call is one JSON line of the decision log
    (decision, explanation and unverified constraints, outcome, guard and upstream time). Ends when
    the client closes its side (exit 0) or the server exits (exit 1, every request still waiting
    answered with an error). Needs the optional extra: pip install 'sopbench[mcp]'.
    """
    job = current_job()
    command = list(upstream or [])
    if not command:
        raise UserError("no upstream command: give the MCP server's command after -- (see --help)")
    if log is not None:  # a log that would replace an input is refused first, with or without the extra
        job.output(log, "--log", stdout_ok=False)
    guard = _guard(sop, domain, task, tasks)
    try:
        from sopbench.guard_proxy import UpstreamFailed, run_proxy
    except ImportError as exc:
        raise UserError(str(exc)) from None
    sink: IO[bytes]
    if log is not None:
        try:
            sink = open(log, "ab")  # noqa: SIM115 - appended to line by line while the proxy runs
        except OSError as exc:
            raise UserError(f"--log {log}: cannot write ({exc.strerror or exc})") from None
        job.written.append(str(log))  # appended to as it goes: never left half-written
    else:
        sink = sys.stderr.buffer
    job.finish("the proxy was stopped")
    try:
        report = run_proxy(guard, command, sink)
    except UpstreamFailed as exc:
        raise UserError(str(exc)) from None
    finally:
        if log is not None:
            sink.close()
    counts = report.counts
    summary = (
        f"guard proxy: {counts['calls']} calls, {counts['allowed']} allowed, {counts['refused']} refused"
        + (f", {counts['invalid']} invalid" if counts["invalid"] else "")
        + (f", {counts['not_run']} not run" if counts["not_run"] else "")
        + (f"; decisions in {log}" if log is not None else "")
    )
    err_console().print(summary, markup=False)
    for problem in report.problems:
        job.problem(problem, "problem")
    if report.upstream_exited is not None:
        raise UserError(f"the upstream server exited mid-session ({report.upstream_exited})", EXIT_PARTIAL)


def _guard(sop: Path | None, domain: str | None, task: str | None, tasks: Path | None) -> Guard:
    """The guard the options name: an SOP file, a domain's catalogue, or one task's SOPs."""
    from sopbench.guard import Guard
    from sopbench.tasks import LoadError

    if (sop is None) == (domain is None and task is None):
        raise UserError("name the SOP: --sop FILE, or --domain NAME [--task ID] (not both)")
    if sop is not None:
        current_job().inputs([sop], "--sop")
        try:
            return Guard.from_file(sop)
        except LoadError as exc:
            raise UserError(f"--sop {exc.describe(full_path=True)}") from None
    if task is None:
        assert domain is not None
        return Guard.for_domain(_domain(domain))
    return Guard.for_task(_task(task, domain, tasks))


def _domain(name: str) -> str:
    from sopbench.domains import domain_names

    known = domain_names()
    if name not in known:
        raise UserError(f"--domain {name}: not a domain ({', '.join(known)})")
    return name


def _task(task_id: str, domain: str | None, tasks: Path | None) -> Task:
    from sopbench.tasks import LoadError, load_tasks, task_file, task_ids

    match = _TASK_ID.match(task_id.strip())
    if match is None:
        raise UserError(f"--task {task_id}: not a task id (DOMAIN/GOAL[I], or GOAL[I] with --domain)")
    named = match["domain"] or domain
    if named is None:
        raise UserError(f"--task {task_id}: which domain? (give DOMAIN/GOAL[I], or --domain)")
    if domain is not None and named != domain:
        raise UserError(f"--task {task_id} is not of --domain {domain}")
    _domain(named)
    job = current_job()
    source = tasks if tasks is not None else default_task_set(job)
    job.inputs([source], "--tasks")
    try:
        path = source if source.is_file() else task_file(source, named)
        found = load_tasks(path, domain=named)
    except LoadError as exc:
        raise UserError(f"--tasks {exc.describe(full_path=True)}") from None
    wanted = f"{named}/{match['goal']}[{match['index']}]"
    for one, name in zip(found, task_ids(found), strict=True):
        if name == wanted:
            return one
    raise UserError(f"--task {task_id}: no such task in {source} ({len(found)} tasks of {named})")
