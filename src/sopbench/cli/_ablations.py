"""The options of ``run`` that set the simulated environment: the published ablations, the guard and
how a call's name is read as "no action" (each part of a run's identity; see the README's Ablations)."""

from __future__ import annotations

from typing import Annotated

import typer

EnvMode = Annotated[
    str,
    typer.Option(
        metavar="MODE",
        help="prompt (constraints listed; lenient system), program (the environment enforces them; no "
        "listing, no internal_* tools) or guard (listed, and unverified service calls are not executed).",
    ),
]
ShuffleTools = Annotated[bool, typer.Option(help="Shuffle the offered tools (seeded per episode).")]
ConstraintFormat = Annotated[
    str, typer.Option(metavar="FORMAT", help="How constraints are listed: structured or old (numbered).")
]
DefaultSop = Annotated[
    str, typer.Option(metavar="OPTION", help="The SOP of the non-goal actions: full or required.")
]
NoAction = Annotated[
    str | None,
    typer.Option(
        metavar="READING",
        show_default=False,
        help="Which tool names make a reply a reply without calls, for every agent: published (the "
        "simulator's: none or n/a, in any case; the default) or wide (also na, null and an empty name, "
        "spaces around them ignored). A setting of the run: a folder resumes only with the same one.",
    ),
]
