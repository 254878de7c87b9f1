"""The one-writer lock of a run folder, and whether a run is writing a folder now.

One process writes a folder at a time: ``RunLock`` is an OS lock that dies with its process;
readers never take it (``run_in_progress`` only probes it).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from sopbench._outputs import LOCK_NAME

from ._store import StoreError, _reason


class RunLock:
    """The one-writer lock of a run folder: ``flock`` on ``DIR/results.sqlite.lock``, held for the
    whole run and released by the OS when the process ends (however it ends). The file holds the
    writer's process id, for the message a second writer gets."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / LOCK_NAME
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create the run folder's lock ({_reason(exc)})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise StoreError(
                f"{self.path.parent} is in use by process {holder} (another sopbench run); "
                "wait for it to end or choose another --output folder"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock; the file stays (removing it would race a new writer)
            self._fd = None


def run_in_progress(folder: Path) -> bool:
    """Whether a ``sopbench run`` (or sweep) is writing ``folder`` now: its lock file names a live
    process and the lock is held. The lock is probed (a shared lock taken and let go at once) only
    when that process is alive, so a folder no run writes is never touched; a probe could turn away
    a run starting in that very microsecond, never one already running."""
    path = folder / LOCK_NAME
    try:
        pid = int(path.read_text(encoding="ascii", errors="replace").strip())
        if pid <= 0:
            return False
        os.kill(pid, 0)
    except PermissionError:
        pass  # alive, someone else's: probe the lock
    except (OSError, ValueError):
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also lets go of the probe's lock
    return False
