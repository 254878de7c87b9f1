"""``sopbench data fetch`` against a local mirror (http.server on 127.0.0.1): every file checked
against the pinned sha256 list, a corrupt file refused with the cache left clean, an interrupted
fetch resumed without fetching again what it had, no network as one line, and ``published`` then
named by ``--tasks`` and ``evaluate`` from any folder."""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
import threading
from collections import Counter
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.published import PINNED_COMMIT, published_dir, published_files

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import PUBLISHED_DATA_DIR, PUBLISHED_TASK_COUNTS, require_published_data  # noqa: E402
from offline import block_network  # noqa: E402

DOMAIN = "library"  # the smallest trajectories: 28 files, 58 MB before compression


def _shared_file(source_path: str) -> Path:
    """The copy of a repository file in the published data (gzip-compressed, same bytes inside)."""
    if source_path.startswith("data/"):
        return PUBLISHED_DATA_DIR / "tasks" / f"{source_path.removeprefix('data/')}.gz"
    return PUBLISHED_DATA_DIR / "trajectories" / f"{source_path.removeprefix('output/')}.gz"


def test_the_pinned_list_names_the_published_files():
    items = published_files()
    assert len(items) == 7 + 146 and len({i.source_path for i in items}) == len(items)
    assert {i.domain for i in items if i.is_tasks} == set(PUBLISHED_TASK_COUNTS)
    assert all(len(i.sha256) == 64 and i.size > 0 for i in items)
    assert [i.domain for i in published_files(["dmv"])] == ["dmv"] * 28
    assert published_dir().name == PINNED_COMMIT[:12]


def test_the_pinned_digests_are_those_of_the_published_files():
    require_published_data()
    for item in published_files():
        data = gzip.decompress(_shared_file(item.source_path).read_bytes())
        assert (len(data), hashlib.sha256(data).hexdigest()) == (item.size, item.sha256), item.source_path


class _Mirror:
    """The repository's layout under ``root``, served on 127.0.0.1; ``requests`` counts each path."""

    def __init__(self, root: Path) -> None:
        self.requests: Counter[str] = Counter()
        mirror = self

        class Handler(SimpleHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                mirror.requests[self.path.lstrip("/")] += 1
                super().do_GET()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def mirror(tmp_path):
    require_published_data()
    root = tmp_path / "mirror"
    for item in published_files([DOMAIN]):
        target = root / item.source_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(gzip.decompress(_shared_file(item.source_path).read_bytes()))
    served = _Mirror(root)
    yield root, served
    served.server.shutdown()
    served.server.server_close()


def _cache_files(cache: Path) -> list[str]:
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file())


def test_fetch_checks_refuses_a_corrupt_file_and_resumes(mirror, tmp_path, monkeypatch):
    root, served = mirror
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    items = published_files([DOMAIN])
    corrupt = items[5]
    original = (root / corrupt.source_path).read_bytes()
    (root / corrupt.source_path).write_bytes(original.replace(b'"', b"'", 1))  # same size, other bytes
    runner = CliRunner()

    result = runner.invoke(app, ["data", "fetch", "--domain", DOMAIN, "--from", served.url])
    assert result.exit_code == 1, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and corrupt.source_path in errors[0] and "sha256" in errors[0], result.stderr
    # the files before the corrupt one are kept whole; nothing of it, no temporary file
    folder = published_dir()
    assert _cache_files(folder) == sorted(i.cache_path for i in items[:5])

    (root / corrupt.source_path).write_bytes(original)
    served.requests.clear()
    monkeypatch.setenv("SOPBENCH_DATA_MIRROR", served.url)  # the variable names the mirror too
    result = runner.invoke(app, ["data", "fetch", "--domain", DOMAIN])
    assert result.exit_code == 0, result.output
    assert set(served.requests) == {i.source_path for i in items[5:]}  # resumed: nothing fetched twice
    assert "5 already in the cache" in result.stdout and str(folder) in result.stdout
    assert _cache_files(folder) == sorted(i.cache_path for i in items)
    for item in items:
        data = gzip.decompress((folder / item.cache_path).read_bytes())
        assert hashlib.sha256(data).hexdigest() == item.sha256

    # `published` names the cache from any folder
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(
        app,
        [
            "run",
            "--agent",
            "reference",
            "--tasks",
            "published",
            "--domain",
            DOMAIN,
            "--limit",
            "2",
            "--output",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 0, result.output
    out = tmp_path / "verdicts.jsonl"
    result = runner.invoke(app, ["evaluate", "published", "--output", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2159 and {row["domain"] for row in rows} == {DOMAIN}


def test_a_damaged_cached_file_is_fetched_again(mirror, tmp_path, monkeypatch):
    _, served = mirror
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runner = CliRunner()
    item = published_files([DOMAIN])[0]
    assert runner.invoke(app, ["data", "fetch", "--domain", DOMAIN, "--from", served.url]).exit_code == 0
    (published_dir() / item.cache_path).write_bytes(gzip.compress(b"[]"))
    served.requests.clear()
    assert runner.invoke(app, ["data", "fetch", "--domain", DOMAIN, "--from", served.url]).exit_code == 0
    assert list(served.requests) == [item.source_path]


def test_no_network_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv("SOPBENCH_DATA_MIRROR", raising=False)
    block_network(monkeypatch)
    result = CliRunner().invoke(app, ["data", "fetch"])
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(lines) == 1 and "data/bank_tasks.json" in lines[0], result.stderr
    assert "Traceback" not in result.output
    assert _cache_files(cache) == []


def test_published_before_a_fetch_says_how(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["evaluate", "published", "--output", "v.jsonl"])
    assert result.exit_code == 2
    assert "sopbench data fetch" in result.output
