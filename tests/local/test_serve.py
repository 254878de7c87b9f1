"""serve-local without a model: its one-line errors, and the process-group stop of a stand-in
server (a real subprocess that answers /v1/models and leaves a child behind)."""

from __future__ import annotations

import os
import socket
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.local import (
    PORTABLE_CMAKE_ARGS,
    BuildError,
    LocalServer,
    LocalServerError,
    build_wheel,
    cached_wheel,
    describe,
    wheel_folder,
)

STAND_IN = textwrap.dedent(
    """
    import json, subprocess, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    open(sys.argv[2], "w").write(str(child.pid))
    class Models(BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"data": [{"id": "stand-in"}]}).encode()
            self.send_response(200); self.end_headers(); self.wfile.write(body)
        def log_message(self, *args): pass
    HTTPServer(("127.0.0.1", int(sys.argv[1])), Models).serve_forever()
    """
)


class StandIn(LocalServer):
    def __init__(self, gguf: Path, pid_file: Path, **options) -> None:
        super().__init__(gguf, model_name="stand-in", **options)
        self.pid_file = pid_file

    def check_installed(self) -> None:
        pass

    def check_command(self) -> list[str]:
        return [sys.executable, "-c", "pass"]

    def command(self) -> list[str]:
        return [sys.executable, "-c", STAND_IN, str(self.port), str(self.pid_file)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def _ends_within(pid: int, seconds: float) -> bool:
    # A signal is delivered when its target is next scheduled: on a loaded machine the child may
    # still be running for a moment after stop() returned, but it must end.
    deadline = time.monotonic() + seconds
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF" + bytes(16))
    return path


def test_start_waits_until_it_answers_and_stop_ends_the_whole_group(gguf, tmp_path):
    server = StandIn(gguf, tmp_path / "child.pid", port=0)
    with server:
        assert server.answers() and server.base_url.startswith("http://127.0.0.1:")
        child = int((tmp_path / "child.pid").read_text())
        assert _alive(child)
    assert not server.answers()
    assert _ends_within(child, seconds=10)  # no orphan


def test_a_port_in_use_is_refused(gguf, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(LocalServerError, match=f"--port {port}: 127.0.0.1:{port} is in use"):
            StandIn(gguf, tmp_path / "p", port=port).start()


def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    bad = tmp_path / "m.gguf"
    bad.write_text("not a model")
    with pytest.raises(LocalServerError, match="not a GGUF model file"):
        StandIn(bad, tmp_path / "p", port=0).start()


def test_the_verb_says_one_line_and_exits_2_for_a_missing_model_file(tmp_path):
    result = CliRunner().invoke(app, ["serve-local", "--model-path", str(tmp_path / "none.gguf")])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "none.gguf" in result.output


def test_a_crashed_server_is_named_with_how_to_rebuild_it(tmp_path):
    server = LocalServer(tmp_path / "model.gguf")
    crashed = server.exited(-11)
    assert crashed.startswith("the server exited by itself (signal SIGSEGV)")
    assert "llama.cpp crashed" in crashed and "sopbench local build" in crashed and "\n" not in crashed
    assert server.exited(3).startswith("the server exited by itself (code 3)")
    assert "crashed" not in server.exited(3) and "crashed" not in server.exited(-15)


class CheckedBy(LocalServer):
    """A server whose llama.cpp check is a stand-in process (``code``)."""

    def __init__(self, gguf: Path, code: str) -> None:
        super().__init__(gguf)
        self.code = code

    def check_installed(self) -> None:
        pass

    def check_command(self) -> list[str]:
        return [sys.executable, "-c", self.code]


def test_a_llama_cpp_that_crashes_on_this_cpu_is_named_with_its_fix_before_serving(gguf):
    crash = (
        "import os, signal, sys; print('loading'); sys.stdout.flush(); os.kill(os.getpid(), signal.SIGILL)"
    )
    with pytest.raises(LocalServerError) as caught:
        CheckedBy(gguf, crash).start()
    line = str(caught.value)
    assert line == (
        "llama.cpp crashed on this CPU (SIGILL) while loading m.gguf: "
        "rebuild llama.cpp for any x86-64 CPU with: sopbench local build"
    )


def test_a_model_llama_cpp_cannot_load_is_named_with_its_last_line(gguf):
    failing = "import sys; sys.exit('llama_model_load: error loading model: unknown architecture')"
    with pytest.raises(
        LocalServerError, match=r"cannot load m.gguf \(exit 1\): llama_model_load: error loading"
    ):
        CheckedBy(gguf, failing).check_library()
    CheckedBy(gguf, "pass").check_library()  # a build that runs: nothing said


def test_the_verb_prints_the_crash_line_and_exits_2(gguf, monkeypatch):
    monkeypatch.setattr(LocalServer, "check_installed", lambda self: None)
    monkeypatch.setattr(
        LocalServer, "check_command", lambda self: [sys.executable, "-c", "import os; os.abort()"]
    )
    result = CliRunner().invoke(app, ["serve-local", "--model-path", str(gguf), "--port", "0"])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 1  # "starting ..." and the error line
    assert "crashed on this CPU (SIGABRT)" in result.output and "sopbench local build" in result.output


def test_the_suggested_runs_are_bounded_and_one_request_at_a_time(gguf):
    lines = describe(LocalServer(gguf, port=8085))
    runs = [line for line in lines if "sopbench run" in line]
    assert len(runs) == 3 and all("--limit" in line and "--endpoint-slots 1" in line for line in runs)


def test_ci_builds_llama_cpp_with_the_portable_flags_serve_local_names():
    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text()
    assert PORTABLE_CMAKE_ARGS in ci or "sopbench local build" in ci


def test_the_wheel_folder_is_named_by_the_flags_and_holds_a_wheel_per_python(tmp_path):
    import hashlib

    folder = wheel_folder(tmp_path)
    assert folder == tmp_path / f"llama-cpp-{hashlib.sha256(PORTABLE_CMAKE_ARGS.encode()).hexdigest()[:16]}"
    assert wheel_folder(tmp_path, "-DGGML_NATIVE=ON") != folder
    folder.mkdir()
    assert cached_wheel(folder) is None
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    for name in (f"llama_cpp_python-0.3.9-{tag}-{tag}-linux_x86_64.whl", "llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl",
                 "llama_cpp_python-0.4.0-cp27-cp27-linux_x86_64.whl"):  # fmt: skip
        (folder / name).write_bytes(b"")
    hit = build_wheel(folder)  # a cache hit: nothing is built
    assert hit.cached and hit.version == "0.3.36" and hit.seconds == 0


def test_a_failed_build_is_one_line_with_its_log_and_leaves_the_folder_clean(tmp_path, monkeypatch):
    monkeypatch.setattr("sopbench.local._build.LLAMA_REQUIREMENT", str(tmp_path / "no-such-project"))
    folder = wheel_folder(tmp_path)
    said: list[str] = []
    with pytest.raises(BuildError) as caught:
        build_wheel(folder, say=said.append)
    line = str(caught.value)
    assert line.startswith("pip could not build") and "; log: " in line and "\n" not in line
    log = Path(line.rsplit("; log: ", 1)[1])
    assert log.read_text().strip()
    log.unlink()
    assert list(folder.iterdir()) == [] and said and "CMAKE_ARGS" in said[0]
