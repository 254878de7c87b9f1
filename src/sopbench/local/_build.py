"""``sopbench local build``: llama-cpp-python built once with portable CPU flags, cached, installed.

pip builds llama.cpp for the CPU it builds on (``-march=native``); on CPUs with AMX (recent Xeons)
that build dies at its first request, and a build made on one machine may not run on another.
``PORTABLE_CMAKE_ARGS`` (AVX2, FMA, F16C, BMI2, no AMX, no multimodal library) runs on any x86-64
CPU of the last decade. pip's own wheel cache ignores ``CMAKE_ARGS``, so the wheel goes to a folder
of its own named by the flags (``wheel_folder``), built once per machine and Python version, and is
installed from there with the server's dependencies.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF"
LLAMA_REQUIREMENT = "llama-cpp-python>=0.3"
PROGRESS_EVERY_S = 30.0


class BuildError(Exception):
    """The build or the install failed: one line naming what, and where its log is."""


@dataclass(frozen=True)
class Built:
    wheel: Path
    cached: bool  # True: taken from the wheel folder, not built now
    seconds: float  # the build's wall time (0 for a cache hit)

    @property
    def version(self) -> str:
        return self.wheel.name.split("-")[1]


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/sopbench`` (``~/.cache/sopbench`` by default)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sopbench"


def wheel_folder(root: Path | None = None, cmake_args: str = PORTABLE_CMAKE_ARGS) -> Path:
    """The folder of the wheels built with ``cmake_args``: ``llama-cpp-<first 16 hex of sha256>``
    under ``root`` (``.ci/run`` names its folder the same way)."""
    digest = hashlib.sha256(cmake_args.encode()).hexdigest()[:16]
    return (root or cache_root()) / f"llama-cpp-{digest}"


def cached_wheel(folder: Path) -> Path | None:
    """The newest llama-cpp-python wheel in ``folder`` for this Python (None: none yet): tagged
    ``py3`` (llama-cpp-python loads its library with ctypes) or this CPython's ``cpXY``."""
    major, minor = sys.version_info[:2]
    ours = {f"py{major}", f"py{major}{minor}", f"cp{major}{minor}"}
    found = [
        path
        for path in folder.glob("llama_cpp_python-*.whl")
        if len(parts := path.name.split("-")) == 5 and ours & set(parts[2].split("."))
    ]
    return max(found, key=lambda path: _version_key(path.name.split("-")[1]), default=None)


def build_wheel(
    folder: Path, *, rebuild: bool = False, say: Callable[[str], None] = lambda line: None
) -> Built:
    """The portable wheel of ``folder``, built there first when missing (or ``rebuild``). The wheel is
    built in a scratch folder and moved in whole; pip's log is kept only when the build fails."""
    if not rebuild and (found := cached_wheel(folder)) is not None:
        return Built(found, True, 0.0)
    compiler = next((name for name in ("c++", "g++", "clang++") if shutil.which(name)), None)
    if compiler is None:
        raise BuildError("no C++ compiler to build llama.cpp with: install one (Debian: apt-get install g++)")
    folder.mkdir(parents=True, exist_ok=True)
    say(f"building {LLAMA_REQUIREMENT} with CMAKE_ARGS={PORTABLE_CMAKE_ARGS!r} into {folder} (minutes) ...")
    env = {**os.environ, "CMAKE_ARGS": PORTABLE_CMAKE_ARGS, "FORCE_CMAKE": "1"}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=".building-", dir=folder) as scratch:
        log_path = Path(scratch) / "pip.log"
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-w", scratch,
                   LLAMA_REQUIREMENT]  # fmt: skip
        code = _run_logged(command, env, log_path, started, say)
        wheels = sorted(Path(scratch).glob("llama_cpp_python-*.whl"))
        if code != 0 or not wheels:
            kept = Path(tempfile.mkstemp(prefix="sopbench-llama-build-", suffix=".log")[1])
            shutil.copyfile(log_path, kept)
            raise BuildError(
                f"pip could not build {LLAMA_REQUIREMENT} (exit {code}): {_last_line(log_path)}; log: {kept}"
            )
        target = folder / wheels[-1].name
        os.replace(wheels[-1], target)
    return Built(target, False, time.monotonic() - started)


def install_wheel(built: Built, say: Callable[[str], None] = lambda line: None) -> None:
    """Install ``built`` into this Python: llama-cpp-python with its server's dependencies from the
    registry, then the portable wheel over whatever build was there (pip's native one, say)."""
    folder = str(built.wheel.parent)
    steps = [
        ["install", "-q", "--find-links", folder, f"llama-cpp-python[server]=={built.version}"],
        ["install", "-q", "--no-deps", "--force-reinstall", str(built.wheel)],
    ]
    for step in steps:
        done = subprocess.run([sys.executable, "-m", "pip", *step], capture_output=True, text=True)
        if done.returncode != 0:
            last = last_line(done.stderr) or last_line(done.stdout) or "(nothing printed)"
            raise BuildError(f"pip {' '.join(step[:2])} failed (exit {done.returncode}): {last}")
    say(f"installed llama-cpp-python {built.version} (portable build) into {sys.prefix}")


def _run_logged(
    command: list[str], env: dict[str, str], log_path: Path, started: float, say: Callable[[str], None]
) -> int:
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            while True:
                try:
                    return process.wait(PROGRESS_EVERY_S)
                except subprocess.TimeoutExpired:
                    say(f"still building llama.cpp ({time.monotonic() - started:.0f} s)")
        finally:
            if process.poll() is None:  # interrupted: the build goes with us
                process.kill()
                process.wait()


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))


def _last_line(path: Path) -> str:
    try:
        return last_line(path.read_text(errors="replace")) or "(nothing printed)"
    except OSError:
        return "(no log)"


def last_line(text: str) -> str:
    """The last line of ``text`` that is not blank, cut at 300 characters ("" for none)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
