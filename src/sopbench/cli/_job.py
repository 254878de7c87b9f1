"""One run of one verb (``Job``): the inputs and outputs it declares, checked before anything is
written; outputs written whole or not at all; the problems it met; what it has finished so far.
``sopbench.cli._contract`` runs every verb as a job (see its module doc for the whole contract)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sopbench._io import atomic_file
from sopbench._outputs import OutputRefused, path_kind, protected_by, refuse_inputs, refuse_output, same_file

EXIT_OK = 0
EXIT_PARTIAL = 1  # finished, but inputs were skipped or there was nothing to do
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT)
EXIT_TERMINATED = 143  # SIGTERM
PROBLEMS_SHOWN = 20
STDOUT = "-"


class UserError(Exception):
    """A mistake the user can fix: printed as one line ``<kind>: <message>`` (no traceback), exit
    ``exit_code``; ``kind="nothing to do"`` (exit 1) when the inputs hold nothing to work on."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE, *, kind: str = "error") -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.kind = kind


def out_console() -> Console:
    """Standard output. Lines are never hard-wrapped (a pipe or file gets them whole)."""
    return Console(soft_wrap=True, highlight=False)


def err_console() -> Console:
    """Standard error, for messages and progress; lines are never hard-wrapped."""
    return Console(stderr=True, soft_wrap=True, highlight=False)


job_context: ContextVar[Job | None] = ContextVar("sopbench_job", default=None)


def current_job() -> Job:
    job = job_context.get()
    if job is None:
        raise RuntimeError("no sopbench verb is running")
    return job


@dataclass(frozen=True)
class OutputTarget:
    """A checked output: a file path, or standard output (``path is None``)."""

    path: Path | None
    option: str

    @property
    def is_stdout(self) -> bool:
        return self.path is None

    def __str__(self) -> str:
        return "standard output" if self.path is None else str(self.path)


@dataclass
class Job:
    """One run of one verb: its inputs, outputs, problems, and what it has finished so far."""

    name: str
    problems: list[str] = field(default_factory=list)
    done: str = "nothing was finished"
    nothing: str | None = None  # why there was nothing to do
    written: list[str] = field(default_factory=list)
    _inputs: list[tuple[Path, str]] = field(default_factory=list)
    _outputs: list[OutputTarget] = field(default_factory=list)
    _folders: list[tuple[Path, str]] = field(default_factory=list)

    # -- declaring inputs and outputs (before anything is written) --------------------------------
    def inputs(
        self,
        paths: Iterable[Path],
        option: str = "argument",
        *,
        must_exist: bool = True,
        contents: bool = False,
    ) -> None:
        """Declare files or folders the verb reads; each must exist (``must_exist=False`` for files
        listed from folders, which the reader reports itself). No output may be one of them, nor the
        store of a run folder among them (``protected_by``); ``contents``: nor any file directly inside
        a folder among them (a folder of task files). Declare the files a verb finds deeper inside
        input folders too, so that none of them can be overwritten."""
        for path in paths:
            path = Path(path)
            if must_exist and not path.exists():
                raise UserError(f"{option} {path}: no such file or folder")
            if path.exists() and not os.access(path, os.R_OK):
                raise UserError(f"{option} {path}: not readable (check its permissions)")
            declared = [(path, option), *((p, "the run's store") for p in protected_by(path)[1:])]
            if contents and path.is_dir():
                declared += [(p, option) for p in sorted(path.iterdir()) if not p.is_dir()]
            self._inputs += declared
            for target in self._outputs:
                self._refuse(target, declared, inputs_only=True)
            for folder, folder_option in self._folders:
                if path.is_dir() and same_file(folder, path):
                    raise UserError(
                        f"{folder_option} {folder} is also an input folder ({option}); writing into it "
                        "could destroy the input: choose another output folder"
                    )

    def output(
        self,
        path: Path | str | None,
        option: str = "--output",
        *,
        stdout_ok: bool = True,
        new_folders: bool = False,
    ) -> OutputTarget:
        """Check an output path now, before any output is touched; ``-`` (or None) is standard output."""
        if path is None:
            target = OutputTarget(None, option)
        elif str(path) == STDOUT:
            if not stdout_ok:
                raise UserError(f"{option} -: this output cannot go to standard output; name a file")
            target = OutputTarget(None, option)
        else:
            target = OutputTarget(Path(path), option)
            self._check_writable(target, new_folders)
            self._refuse(target, self._inputs)
        for other in self._outputs:
            if other.path is None and target.path is None:
                raise UserError(
                    f"{other.option} and {option} both write to standard output; name a file for one"
                )
            if other.path is not None and target.path is not None and same_file(other.path, target.path):
                raise UserError(f"{other.option} and {option} name the same file {target.path}")
        self._outputs.append(target)
        return target

    def output_folder(self, path: Path, option: str = "--output", *, new_folders: bool = False) -> Path:
        """Check a folder the verb writes files into (created when missing; its parent must exist
        unless ``new_folders``): not a file, a device or a pipe, and not a folder that is also an
        input. Declare each file written inside it with ``output(..., new_folders=True)`` too."""
        path = Path(path)
        if path.exists() and not path.is_dir():
            raise UserError(f"{option} {path}: is {path_kind(path)}; name a folder")
        if not path.exists() and not path.parent.is_dir() and not new_folders:
            raise UserError(f"{option} {path}: folder {path.parent} does not exist (create it first)")
        if path.exists() and not os.access(path, os.W_OK | os.X_OK):
            raise UserError(f"{option} {path}: folder is not writable (choose another place)")
        for input_path, input_option in self._inputs:
            if input_path.is_dir() and same_file(path, input_path):
                raise UserError(
                    f"{option} {path} is also an input folder ({input_option}); writing into it could "
                    "destroy the input: choose another output folder"
                )
        self._folders.append((path, option))
        return path

    @staticmethod
    def _check_writable(target: OutputTarget, new_folders: bool = False) -> None:
        path, option = target.path, target.option
        assert path is not None
        if path.is_dir():
            raise UserError(f"{option} {path}: is a folder; name a file inside it")
        folder = path.parent
        if new_folders:  # folders the verb creates: the nearest existing one must take them
            while not folder.exists() and folder != folder.parent:
                folder = folder.parent
        if not folder.exists():
            raise UserError(f"{option} {path}: folder {folder} does not exist (create it first)")
        if not folder.is_dir():
            raise UserError(f"{option} {path}: {folder} is not a folder")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise UserError(f"{option} {path}: folder {folder} is not writable (choose another place)")
        if path.exists() and not os.access(path, os.W_OK):
            raise UserError(f"{option} {path}: the file is read-only (choose another name)")

    @staticmethod
    def _refuse(target: OutputTarget, inputs: list[tuple[Path, str]], *, inputs_only: bool = False) -> None:
        """The output guard (``refuse_output``, or only its check against ``inputs``), as one line
        naming the option."""
        if target.path is None:
            return
        try:
            (refuse_inputs if inputs_only else refuse_output)(target.path, inputs)
        except OutputRefused as exc:
            raise UserError(f"{target.option} {exc}") from None

    # -- writing ----------------------------------------------------------------------------------
    @contextmanager
    def write(self, target: OutputTarget) -> Iterator[IO[bytes]]:
        """A binary file for ``target``: a temporary file beside it, renamed into place only when the
        block completes. On any error or an interrupt the temporary file is removed and an existing
        file under the target's name is left as it was."""
        if target.path is None:
            yield sys.stdout.buffer
            sys.stdout.buffer.flush()
            return
        path = target.path.resolve() if target.path.is_symlink() else target.path
        stack = ExitStack()
        try:
            handle = stack.enter_context(atomic_file(path))
        except OutputRefused as exc:  # the guard again, as the file is written: nothing was written
            raise UserError(f"{target.option} {exc}") from None
        except OSError as exc:  # the place refuses the file: nothing was written
            raise UserError(f"{target.option} {path}: cannot write ({exc.strerror or exc})") from exc
        try:
            with stack:
                yield handle
        except BaseException as exc:
            # A failed write (a full disk) names no file or our temporary one; an input the body
            # failed to open names that input.
            ours = isinstance(exc, OSError) and (
                exc.filename is None or str(exc.filename) == str(path) or str(exc.filename).endswith(".part")
            )
            if ours and isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
                raise UserError(
                    f"{target.option} {path}: cannot write ({exc.strerror or exc})", EXIT_PARTIAL
                ) from exc
            raise
        self.written.append(str(target.path))

    def write_text(self, target: OutputTarget, text: str) -> None:
        with self.write(target) as sink:
            sink.write(text.encode())

    # -- what happened ------------------------------------------------------------------------------
    def problem(self, text: str, kind: str = "skipped") -> None:
        """Something the verb could not use (by default an input it skipped: a file, record or run)
        or did not expect (``kind``); the verb goes on, and exits 1 at the end."""
        self.problems.append(f"{kind}: {text}")

    def nothing_to_do(self, why: str) -> None:
        """The verb finished without anything to use (exit 1)."""
        self.nothing = why

    @contextmanager
    def progress(self, total: int, what: str, unit: str = "files") -> Iterator[Callable[[str], None]]:
        """``advance(name)`` after each item: a bar on stderr (terminal only) and ``done`` kept current."""
        console = err_console()
        count = [0]
        self.done = f"0 of {total} {unit} {what}"
        with Progress(
            TextColumn(f"{escape(what)} {{task.fields[name]}}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        ) as bar:
            task = bar.add_task(what, total=total, name="")

            def advance(name: str) -> None:
                count[0] += 1
                self.done = f"{count[0]} of {total} {unit} {what}"
                bar.update(task, advance=1, name=escape(name[:48]))

            yield advance

    def unwritten(self) -> list[str]:
        """The declared output files not (yet) written."""
        return [str(t.path) for t in self._outputs if t.path is not None and str(t.path) not in self.written]

    def finish(self, text: str) -> None:
        """Say what is finished (shown if the user interrupts what comes next)."""
        self.done = text
