"""The contract every ``sopbench`` verb keeps: safe outputs, honest exit codes, one-line errors.

A verb is a function decorated with ``@verb(app)``. The decorator registers it as a command, gives it
``--problems FILE``, and runs it inside a ``Job``:

- the verb declares its inputs (``job.inputs``) and outputs (``job.output``) before it writes
  anything; every check (missing input, output that is an input, missing or read-only folder, a
  directory as output) fails with a ``UserError``: one line on stderr, exit 2;
- it writes each output with ``job.write(target)``: a temporary file beside the target, renamed into
  place only when complete (``-`` is standard output);
- it records what it skipped with ``job.problem`` and what it found nothing to do with
  ``job.nothing_to_do``; the terminal shows the first 20 problems and the count, ``--problems`` gets
  them all;
- ``job.progress`` draws a progress bar on stderr when stderr is a terminal, and keeps ``job.done``
  (what was finished) up to date for the message after Ctrl-C.

Exit codes: 0 every input was read and used; 1 finished, but inputs were skipped or there was nothing
to do (or an unexpected error); 2 usage error (a bad option, or an input or output path that cannot
be used); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM), handled as Ctrl-C is. ``--debug`` (a global option) shows tracebacks.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core
from rich.console import Console

from ._job import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_TERMINATED,
    PROBLEMS_SHOWN,
    Job,
    UserError,
    err_console,
    job_context,
)

_debug: ContextVar[bool] = ContextVar("sopbench_debug", default=False)


def set_debug(on: bool) -> None:
    """``--debug``: show the traceback of every error."""
    _debug.set(on)


ProblemsOption = Annotated[
    Path | None,
    typer.Option(
        "--problems",
        metavar="FILE",
        help="Write every problem (skipped file, record or run) to FILE, one per line.",
        show_default=False,
    ),
]


class _Command(typer.core.TyperCommand):
    """A command whose help names arguments by their metavar alone (typer adds ``<list[Path]>``)."""

    def get_help(self, ctx: Any) -> str:
        return _ARGUMENT_TYPE.sub(lambda m: m[1] + " " * (len(m[0]) - len(m[1])), super().get_help(ctx))


_ARGUMENT_TYPE = re.compile(r"^(  [A-Z][A-Z_.]*) <[^>\n]+>", re.MULTILINE)


def verb(app: typer.Typer, **command_options: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register ``function`` as a command of ``app`` that keeps the contract (see the module doc).

    The function gets ``--problems FILE`` added; it reaches its ``Job`` with ``current_job()``.
    """

    def register(function: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(function, eval_str=True)
        parameters = [*signature.parameters.values()]
        parameters.append(
            inspect.Parameter(
                "problems_file", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ProblemsOption
            )
        )

        @functools.wraps(function)
        def command(*args: Any, problems_file: Path | None = None, **kwargs: Any) -> None:
            job = Job(command_options.get("name") or function.__name__)
            code = run_job(job, lambda: function(*args, **kwargs), problems_file)
            if code:
                raise typer.Exit(code)

        command.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        app.command(cls=_Command, **command_options)(command)
        return command

    return register


def run_job(job: Job, body: Callable[[], None], problems_file: Path | None = None) -> int:
    """Run ``body`` as ``job`` and return its exit code, printing errors and problems on stderr."""
    errors = err_console()
    token = job_context.set(job)
    with _terminate_as_interrupt():
        return _run_body(job, body, problems_file, errors, token)


class Terminated(KeyboardInterrupt):
    """SIGTERM: handled as Ctrl-C is (outputs left whole or untouched, one line), exit 143."""

    exit_code = EXIT_TERMINATED


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """While a verb runs: the first Ctrl-C raises ``KeyboardInterrupt`` and the first SIGTERM
    ``Terminated``; once the verb is stopping, further signals are ignored (a second Ctrl-C is as
    clean as the first). The previous handlers come back when the verb ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopping = [False]

    def on_signal(signum: int, frame: object) -> None:
        if stopping[0]:
            return
        stopping[0] = True
        raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    for signum in previous:
        signal.signal(signum, on_signal)
    try:
        yield
    finally:
        interrupted = stopping[0] or signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        for signum, handler in previous.items():
            # The console script ends right after an interrupted verb: a late second signal must
            # not turn its exit into a traceback or a kill.
            signal.signal(signum, signal.SIG_IGN if interrupted and _process_ends_after_verb else handler)


_process_ends_after_verb = False


def process_ends_after_verb() -> None:
    """Called by the console script: after an interrupted verb, signals stay ignored until exit."""
    global _process_ends_after_verb
    _process_ends_after_verb = True


def verb_ends_the_process() -> bool:
    """Whether the console script runs the verb (the process ends with it), not a caller in process."""
    return _process_ends_after_verb


def _ignore_further_interrupts() -> None:
    """The verb is stopping (a signal a runner handled itself, say): it only reports and exits now."""
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(signum) not in (signal.SIG_DFL, signal.default_int_handler):
                signal.signal(signum, signal.SIG_IGN)


def _run_body(
    job: Job, body: Callable[[], None], problems_file: Path | None, errors: Console, token: Any
) -> int:
    try:
        problems_target = job.output(problems_file, "--problems", stdout_ok=False) if problems_file else None
        body()
        show_problems(errors, job.problems, problems_file)
        if problems_target is not None:
            job.write_text(problems_target, "".join(f"{p}\n" for p in job.problems))
        if job.nothing is not None:
            errors.print(f"nothing to do: {job.nothing}", markup=False)
            return EXIT_PARTIAL
        return EXIT_PARTIAL if job.problems else EXIT_OK
    except UserError as exc:
        _show_traceback(errors)
        errors.print(f"{exc.kind}: {exc}", markup=False)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        _ignore_further_interrupts()
        _show_traceback(errors)
        written = f"; written: {', '.join(job.written)}" if job.written else ""
        pending = job.unwritten()
        untouched = (
            f"; not written: {', '.join(pending)} (an existing file is left as it was)" if pending else ""
        )
        how = (
            "terminated" if getattr(exc, "exit_code", EXIT_INTERRUPTED) != EXIT_INTERRUPTED else "interrupted"
        )
        errors.print(f"{how}: {job.done}{written}{untouched}", markup=False)
        return getattr(exc, "exit_code", EXIT_INTERRUPTED)
    except BrokenPipeError:
        # The reader of our standard output went away (`| head`): not an error of ours to report.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PARTIAL
    except typer.Exit:
        raise
    except Exception as exc:  # noqa: BLE001 - a bug: one line, the traceback with --debug
        _show_traceback(errors)
        errors.print(
            f"error: unexpected {type(exc).__name__}: {exc} (this is a bug; rerun with --debug for the traceback)",
            markup=False,
        )
        return EXIT_PARTIAL
    finally:
        job_context.reset(token)


def _show_traceback(errors: Console) -> None:
    if _debug.get():
        errors.print(traceback.format_exc(), markup=False, end="")


def show_problems(errors: Console, problems: list[str], problems_file: Path | None) -> None:
    for problem in problems[:PROBLEMS_SHOWN]:
        errors.print(problem, markup=False)
    if len(problems) > PROBLEMS_SHOWN:
        where = f"all of them in {problems_file}" if problems_file else "see them all with --problems FILE"
        errors.print(f"... {len(problems)} problems in all ({where})", markup=False)
    elif problems:
        errors.print(
            f"{len(problems)} problem(s)" + (f", listed in {problems_file}" if problems_file else ""),
            markup=False,
        )
