"""``sopbench generate``: tasks without an LLM, every SOP variant and outcome."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._contract import verb
from ._job import Job, UserError, current_job, out_console
from ._progress import generation_progress

DomainOption = Annotated[str, typer.Option(metavar="NAME", help="A domain, comma-separated domains, or all.")]
OutputFolder = Annotated[
    Path,
    typer.Option(
        "--output", "-o", metavar="DIR", help="Folder for <domain>_tasks.json and <domain>_coverage.json."
    ),
]
Seed = Annotated[int, typer.Option(metavar="S", help="The same seed gives byte-identical files.")]
Goals = Annotated[
    str | None, typer.Option(metavar="NAMES", show_default=False, help="Only these goals (comma-separated).")
]
PerAssignment = Annotated[
    int, typer.Option(min=1, metavar="K", help="Distinct tasks made for each (variant, assignment).")
]
CompareWith = Annotated[
    Path | None,
    typer.Option(
        metavar="PATH",
        show_default=False,
        help="A published task file or folder to compare with, combination by combination.",
    ),
]
HiddenPrerequisites = Annotated[
    bool,
    typer.Option(
        "--include-hidden-prerequisites",
        help="Also make the combinations excluded by design (refused only for a hidden prerequisite), "
        "marked refused_only_for_hidden_prerequisite in the task file: no honest agent can pass them.",
    ),
]
CoverageJson = Annotated[
    bool, typer.Option("--json", help="Print the coverage reports as one JSON document.")
]


@verb(
    app,
    epilog="Examples: sopbench generate --domain all --output tasks ; sopbench generate --domain bank "
    "--seed 7 --per-assignment 2 --compare ../shared/sopbench/tasks --output tasks",
)
def generate(
    domain: DomainOption,
    output: OutputFolder,
    seed: Seed = 0,
    goals: Goals = None,
    per_assignment: PerAssignment = 1,
    compare: CompareWith = None,
    include_hidden_prerequisites: HiddenPrerequisites = False,
    as_json: CoverageJson = False,
) -> None:
    """Generate tasks without an LLM: every SOP variant and outcome, realised by search, verified by the oracle.

    For each goal of a domain: its SOP variants (the required part, then with each subset of the
    optional constraints) and each variant's outcome assignments (which constraints must hold or
    fail). Each assignment gets a database, user-known values and parameters that realise it, found
    by a seeded search and kept only when the strict oracle's reference path gives the expected
    outcome. Writes <domain>_tasks.json (the published layout) and <domain>_coverage.json. A
    combination that would be refused only for a hidden prerequisite (no agent could refuse it for a
    reason it can check) is excluded by design and reported as such. Exits 0 when every other
    combination was realised, 1 when one that should have been was not (each is named, with its reason).
    """
    from sopbench.domains import select_domains
    from sopbench.generation import generate as generate_tasks
    from sopbench.report import summarise_generation
    from sopbench.tasks import LoadError

    job = current_job()
    try:
        names = select_domains(domain)
    except ValueError as exc:
        raise UserError(f"--domain: {exc}") from None
    names, wanted = _with_goals(names, goals)
    _declare_paths(job, compare, output, names)
    with generation_progress(job, len(names)) as on_goal:
        try:
            done = generate_tasks(
                names,
                output,
                seed=seed,
                goals=wanted,
                per_assignment=per_assignment,
                compare_with=compare,
                progress=on_goal,
                include_hidden_prerequisites=include_hidden_prerequisites,
            )
        except KeyError as exc:  # a custom domain without a world database, say
            raise UserError(f"--domain: cannot generate: {exc.args[0] if exc.args else exc}") from None
        except LoadError as exc:  # a --compare file that cannot be read
            raise UserError(f"--compare {compare}: {exc}") from None
    summary = summarise_generation(done, compared=compare is not None)
    for line in summary.unrealisable:
        job.problem(line, kind="unrealisable")
    job.finish(f"{summary.tasks} tasks written to {output}")
    if as_json:
        sys.stdout.write(json.dumps(summary.as_dict(), indent=2) + "\n")
        return
    summary.table().print(out_console())
    for note in summary.notes():
        out_console().print(note, markup=False)
    out_console().print(f"wrote {output}", markup=False)


def _with_goals(domains: list[str], goals: str | None) -> tuple[list[str], list[str] | None]:
    """The domains offering the goals of --goals (all of them without it), and those goals."""
    from sopbench.generation import select_goals

    if not goals:
        return domains, None
    wanted = [g.strip() for g in goals.split(",") if g.strip()]
    try:
        return select_goals(domains, wanted), wanted
    except ValueError as exc:
        raise UserError(f"--goals: {exc}") from None


def _declare_paths(job: Job, compare: Path | None, output: Path, names: list[str]) -> None:
    """The --compare files (a folder with two forms of one domain's file is refused now, before any
    file is written) and the files generation writes: none may be an input, --problems, or each
    other; and none may land beside the other form of a domain's task file (``bank_tasks.json.gz``),
    which a run would then have to choose between (every reader refuses such a folder)."""
    from sopbench.tasks import LoadError, domain_task_files

    if compare is not None:
        job.inputs([compare], "--compare", contents=True)
        try:
            if compare.is_dir():
                domain_task_files(compare)
        except LoadError as exc:
            raise UserError(f"--compare {compare}: {exc}") from None
    job.output_folder(output)
    for name in names:
        job.output(output / f"{name}_tasks.json", new_folders=True)
        job.output(output / f"{name}_coverage.json", new_folders=True)
        other = output / f"{name}_tasks.json.gz"
        if other.exists() or other.is_symlink():
            raise UserError(
                f"--output {output}: holds {other.name}; {name}_tasks.json beside it would be a second task "
                f"file for {name}: remove {other.name} or choose another folder"
            )
