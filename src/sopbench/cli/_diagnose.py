"""``sopbench diagnose``: the evaluator's self-check on traces whose verdicts are known in advance."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._contract import verb
from ._job import UserError, current_job, out_console
from ._options import DEFAULT_TASKS_DIR, published_tasks
from ._sources import read_tasks

SeedOption = Annotated[int, typer.Option(metavar="N", help="Seed of the constructed traces.")]
PerKind = Annotated[int, typer.Option(metavar="N", min=1, help="Traces of each kind (built-in SOP).")]
TasksOption = Annotated[
    str | None,
    typer.Option(
        metavar="DOMAINS",
        show_default=False,
        help="Also build traces over published tasks: all, or domains separated by commas.",
    ),
]
TasksDir = Annotated[
    Path,
    typer.Option(
        metavar="DIR",
        help="Folder of <domain>_tasks.json[.gz] files (published: those `sopbench data fetch` keeps).",
        callback=published_tasks,
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the counts as one JSON document.")]


@verb(
    app,
    epilog="Examples: sopbench diagnose --seed 42;  "
    "sopbench diagnose --seed 42 --tasks all --tasks-dir ../shared/sopbench/tasks",
)
def diagnose(
    seed: SeedOption = 42,
    per_kind: PerKind = 5,
    tasks: TasksOption = None,
    tasks_dir: TasksDir = DEFAULT_TASKS_DIR,
    as_json: AsJson = False,
) -> None:
    """Self-check the evaluator on constructed traces whose verdicts are known in advance.

    Without --tasks: ten kinds of traces over a small built-in SOP. With --tasks: for every
    published task, a reference trace (must pass) and its mutants (skipped helper, swapped steps,
    wrong user, forbidden execution, refusal, claimed success, extra reads), scored with the sound
    protocol. Exits 1 on any unexpected verdict, or when the task files hold no task.
    """
    from sopbench.domains import select_domains
    from sopbench.evaluation import DiagnosticFailure
    from sopbench.report import load_domain_tasks, run_diagnosis

    job = current_job()
    task_list = None
    if tasks:
        try:
            domains = select_domains(tasks)
        except ValueError as exc:
            raise UserError(f"--tasks {tasks}: {exc}") from None
        job.inputs([tasks_dir], "--tasks-dir", contents=True)
        task_list = read_tasks("--tasks-dir", tasks_dir, lambda: load_domain_tasks(tasks_dir, domains))
        if not task_list:
            job.nothing_to_do(f"the task files in {tasks_dir} for {', '.join(domains)} hold no task")
            return
    try:
        with job.progress(len(task_list or ()), "diagnosed", unit="tasks") as advance:
            result = run_diagnosis(seed, per_kind=per_kind, tasks=task_list, progress=advance)
    except DiagnosticFailure as exc:
        raise UserError(f"diagnostic failed: {exc}", exit_code=1) from exc
    console = out_console()
    if as_json:
        sys.stdout.write(json.dumps(result.as_dict(), indent=2) + "\n")
    else:
        for table in result.tables():
            table.print(console)
        for note in result.notes():
            console.print(note, markup=False)
    for surprise in result.surprises:
        job.problem(surprise, kind="unexpected verdict")
    if not result.surprises and not as_json:
        console.print("every verdict is the expected one", markup=False)
