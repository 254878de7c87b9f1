"""``sopbench generate``: tasks without an LLM, every SOP variant and outcome."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._contract import verb
from ._job import Job, UserError, current_job, out_console


@verb(
    app,
    epilog="Examples: sopbench generate --domain all --output tasks ; sopbench generate --domain bank "
    "--seed 7 --per-assignment 2 --compare ../shared/sopbench/tasks --output tasks",
)
def generate(
    domain: Annotated[str, typer.Option(metavar="NAME", help="A domain, comma-separated domains, or all.")],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", metavar="DIR", help="Folder for <domain>_tasks.json and <domain>_coverage.json."
        ),
    ],
    seed: Annotated[int, typer.Option(metavar="S", help="The same seed gives byte-identical files.")] = 0,
    goals: Annotated[
        str | None,
        typer.Option(metavar="NAMES", show_default=False, help="Only these goals (comma-separated)."),
    ] = None,
    per_assignment: Annotated[
        int, typer.Option(min=1, metavar="K", help="Distinct tasks made for each (variant, assignment).")
    ] = 1,
    compare: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH",
            show_default=False,
            help="A published task file or folder to compare with, combination by combination.",
        ),
    ] = None,
    include_hidden_prerequisites: Annotated[
        bool,
        typer.Option(
            "--include-hidden-prerequisites",
            help="Also make the combinations excluded by design (refused only for a hidden prerequisite), "
            "marked refused_only_for_hidden_prerequisite in the task file: no honest agent can pass them.",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the coverage reports as one JSON document.")
    ] = False,
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
    from sopbench.domains import PUBLISHED_DOMAINS, domain_names, get_domain
    from sopbench.generation import generate as generate_tasks
    from sopbench.generation import goals as goals_of
    from sopbench.report import generation_table

    job = current_job()
    names = (
        list(PUBLISHED_DOMAINS) if domain == "all" else [d.strip() for d in domain.split(",") if d.strip()]
    )
    known = set(domain_names())
    unknown = [d for d in names if d not in known]
    if unknown or not names:
        raise UserError(
            f"--domain: unknown domain {', '.join(unknown) or domain!r}; known: all, {', '.join(sorted(known))}"
        )
    wanted = [g.strip() for g in goals.split(",") if g.strip()] if goals else None
    if wanted is not None:
        offered = {g for d in names for g in goals_of(get_domain(d).catalogue)}
        missing = [g for g in wanted if g not in offered]
        if missing:
            raise UserError(f"--goals: unknown goal {', '.join(missing)} in {', '.join(names)}")
        names = [d for d in names if set(wanted) & set(goals_of(get_domain(d).catalogue))]
    if compare is not None:
        job.inputs([compare], "--compare")
        if compare.is_dir():
            job.inputs(sorted(compare.iterdir()), "--compare", must_exist=False)
    job.output_folder(output)
    for name in names:  # the files it writes: none may be an input, --problems, or each other
        job.output(output / f"{name}_tasks.json", new_folders=True)
        job.output(output / f"{name}_coverage.json", new_folders=True)
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
    reports = []
    for item in done:
        report = item.result.report.as_dict()
        report.pop("combinations")
        if item.comparison is not None:
            comparison = item.comparison.as_dict()
            comparison.pop("rows")
            report["comparison"] = comparison
        report["tasks_file"] = str(item.tasks_file)
        reports.append(report)
        for u in report["unrealisable"]:
            job.problem(
                f"{report['domain']} {u['goal']} variant {u['variant']} "
                f"(must {'succeed' if u['outcome'] else 'fail'}): {u['reason']}",
                kind="unrealisable",
            )
    excluded = [(r["domain"], u) for r in reports for u in r["excluded"]]
    notes = [
        f"excluded by design: {d} {u['goal']} variant {u['variant']} (must "
        f"{'succeed' if u['outcome'] else 'fail'}): refused only for a hidden prerequisite"
        for d, u in excluded
    ]
    job.finish(f"{sum(r['tasks'] for r in reports)} tasks written to {output}")
    if as_json:
        sys.stdout.write(json.dumps({"domains": reports}, indent=2) + "\n")
    else:
        generation_table(reports, compared=compare is not None).print(out_console())
        for note in notes:
            out_console().print(note, markup=False)
        made = sum(r["hidden_prerequisite_tasks"] for r in reports)
        if made:
            out_console().print(
                f"{made} tasks refused only for a hidden prerequisite were made on request (marked)", markup=False
            )
        out_console().print(f"wrote {output}", markup=False)


@contextmanager
def generation_progress(job: Job, domains: int) -> Iterator[Callable[[str, str], None]]:
    """The ``progress(domain, goal)`` callback of generation, as one bar step per finished domain."""
    started: list[str] = []
    with job.progress(domains, "generated", unit="domains") as advance:

        def on_goal(domain: str, goal: str) -> None:
            if domain not in started:
                if started:
                    advance(started[-1])
                started.append(domain)

        yield on_goal
        if started:
            advance(started[-1])
