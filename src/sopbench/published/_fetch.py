"""Download, check and keep the pinned published files (see the package doc)."""

from __future__ import annotations

import gzip
import hashlib
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from sopbench._io import atomic_file

PINNED_COMMIT = "8cd43276845fb25a760a6fcd1090e5aae3a36273"
DEFAULT_SOURCE = f"https://raw.githubusercontent.com/Leezekun/SOPBench/{PINNED_COMMIT}"
MIRROR_ENV = "SOPBENCH_DATA_MIRROR"  # a mirror of the repository's files at the pinned commit
TIMEOUT_S = 60.0  # per read: a stalled connection fails with one line instead of hanging
CHUNK = 1 << 20


class FetchError(Exception):
    """A file that could not be fetched or did not check out (the message names it and why)."""


class PublishedMissing(FileNotFoundError):
    """The published data is not in the cache yet (the message says how to fetch it)."""


@dataclass(frozen=True)
class PublishedFile:
    """One file of the pinned list: its path in the repository, size and sha256 of its bytes."""

    source_path: str  # data/bank_tasks.json, output/bank/<run>.json
    size: int
    sha256: str

    @property
    def domain(self) -> str:
        name = self.source_path.rsplit("/", 1)[-1]
        return name.removesuffix("_tasks.json") if self.is_tasks else self.source_path.split("/")[1]

    @property
    def is_tasks(self) -> bool:
        return self.source_path.startswith("data/")

    @property
    def cache_path(self) -> str:
        """Where it is kept under ``published_dir()`` (gzip-compressed, as the loaders read it)."""
        if self.is_tasks:
            return f"tasks/{self.source_path.removeprefix('data/')}.gz"
        return f"trajectories/{self.source_path.removeprefix('output/')}.gz"


@dataclass
class FetchReport:
    """What a fetch did: files downloaded, files already in the cache, bytes downloaded."""

    folder: Path
    downloaded: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    bytes: int = 0


def published_files(domains: Iterable[str] | None = None) -> list[PublishedFile]:
    """The pinned list (``SHA256SUMS`` of this package), of the given domains only when named."""
    wanted = None if domains is None else set(domains)
    out = []
    text = files(__package__).joinpath("SHA256SUMS").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.strip():
            digest, size, path = line.split(maxsplit=2)
            item = PublishedFile(path, int(size), digest)
            if wanted is None or item.domain in wanted:
                out.append(item)
    return out


def published_dir() -> Path:
    """``$XDG_CACHE_HOME/sopbench/published/<commit>`` (``~/.cache`` without XDG_CACHE_HOME)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "sopbench" / "published" / PINNED_COMMIT[:12]


def published_path(kind: str) -> Path:
    """The cached ``tasks`` or ``trajectories`` folder; ``PublishedMissing`` when nothing is there."""
    folder = published_dir() / kind
    if not folder.is_dir() or not any(folder.rglob("*.json.gz")):
        raise PublishedMissing(
            f"the published {kind} are not in the cache ({folder}): run `sopbench data fetch` first"
        )
    return folder


def fetch_published(
    source: str | None = None,
    domains: Iterable[str] | None = None,
    progress: Callable[[PublishedFile, bool], None] | None = None,
    folder: Path | None = None,
) -> FetchReport:
    """Fetch every pinned file (of ``domains``) missing from the cache; keep those already there
    (after checking them again). Each file is checked against its sha256 before it takes its name:
    on any error the file being fetched leaves nothing behind, the files finished before it stay
    (a second call resumes after them), and ``FetchError`` names the file and the cause."""
    base = (source or os.environ.get(MIRROR_ENV) or DEFAULT_SOURCE).rstrip("/")
    folder = folder or published_dir()
    report = FetchReport(folder)
    for item in published_files(domains):
        target = folder / item.cache_path
        if _cached_ok(target, item):
            report.present.append(item.cache_path)
            if progress:
                progress(item, False)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            report.bytes += _download(f"{base}/{item.source_path}", item, target)
        except BaseException:
            _remove_empty(target.parent, folder.parent)
            raise
        report.downloaded.append(item.cache_path)
        if progress:
            progress(item, True)
    return report


def _cached_ok(target: Path, item: PublishedFile) -> bool:
    """``target`` holds the file (a damaged or altered copy is removed, to be fetched again)."""
    if not target.is_file():
        return False
    digest = hashlib.sha256()
    try:
        with gzip.open(target, "rb") as data:
            while chunk := data.read(CHUNK):
                digest.update(chunk)
    except (OSError, EOFError):
        pass
    if digest.hexdigest() == item.sha256:
        return True
    target.unlink()
    return False


def _download(url: str, item: PublishedFile, target: Path) -> int:
    digest = hashlib.sha256()
    size = 0
    try:
        with (
            urllib.request.urlopen(url, timeout=TIMEOUT_S) as response,
            atomic_file(target) as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed,
        ):
            while chunk := response.read(CHUNK):
                size += len(chunk)
                if size > item.size:
                    raise FetchError(f"{url}: longer than the pinned {item.size} bytes: refused")
                digest.update(chunk)
                packed.write(chunk)
            if digest.hexdigest() != item.sha256:
                raise FetchError(
                    f"{url}: sha256 {digest.hexdigest()[:16]}... is not the pinned "
                    f"{item.sha256[:16]}... ({size} bytes, pinned {item.size}): refused"
                )
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise FetchError(f"{url}: cannot connect ({_reason(exc.reason)})") from None
    except (OSError, ValueError) as exc:  # a reset connection, a timeout, a bad URL
        raise FetchError(f"{url}: {_reason(exc)}") from None
    return size


def _remove_empty(start: Path, root: Path) -> None:
    """Remove ``start`` and its parents up to ``root`` (included) while they are empty."""
    for path in (start, *start.parents):
        if not path.is_relative_to(root.parent) or path == root.parent:
            return
        try:
            path.rmdir()
        except OSError:
            return


def _reason(reason: object) -> str:
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason) or type(reason).__name__
