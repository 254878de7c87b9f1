"""``sopbench serve-local``: a local model behind llama.cpp's OpenAI-compatible server."""

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
) -> None:
    """Serve a local model through llama.cpp's OpenAI-compatible server, for `run --agent openai`.

    Needs the optional extra: pip install 'sopbench[local-llm]'. Listens on 127.0.0.1 only, with the
    function-calling chat format (tool calls in fc mode), prints the base URL and the model name once
    the server answers, and stops it (with every process it started) on Ctrl-C or SIGTERM.
    """
    from sopbench.local import LocalServer, LocalServerError, bundled_gguf, describe

    job = current_job()
    try:
        if model_path is not None:
            job.inputs([model_path], "--model-path")
        server = LocalServer(model_path or bundled_gguf(), port=port, ctx=ctx, threads=threads)
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


def _speed(server: Any) -> str:
    """The time per episode, measured on the running server (or why it could not be)."""
    from sopbench.local import measure_speed

    err_console().print("measuring the model's speed (two short requests) ...", markup=False)
    try:
        return measure_speed(server.base_url, server.model_name).describe()
    except (OSError, KeyError, ValueError, TypeError) as exc:
        return f"time per episode not measured ({type(exc).__name__}: {exc})"
