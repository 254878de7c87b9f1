"""Shared test fixtures: where the published SOPBench data lives.

The published data sits next to the repository, in ``../shared/sopbench`` (never copied into the repo).
Tests that need it take one of these fixtures and are skipped, with the reason, when it is absent.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from sopbench.tasks import Task, load_tasks
from sopbench.traces import PUBLISHED_CHECKS

SHARED_DIR = Path(__file__).resolve().parents[1].parent / "shared"
PUBLISHED_DATA_DIR = SHARED_DIR / "sopbench"
PUBLISHED_TABLES_FILE = SHARED_DIR / "reference" / "SOPBENCH_DOMAIN_TABLES.json"
# How many tasks each published ``<domain>_tasks.json.gz`` holds (903 in all).
PUBLISHED_TASK_COUNTS = {
    "bank": 153,
    "dmv": 115,
    "healthcare": 130,
    "online_market": 187,
    "university": 44,
    "library": 78,
    "hotel": 196,
}


@pytest.fixture(autouse=True, scope="session")
def private_verdict_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The verdict cache of every verb the tests run (in process or as a child process): a folder of
    the session's own, never the user's (``$SOPBENCH_CACHE_DIR``)."""
    folder = tmp_path_factory.mktemp("verdict-cache")
    before = os.environ.get("SOPBENCH_CACHE_DIR")
    os.environ["SOPBENCH_CACHE_DIR"] = str(folder)
    yield folder
    if before is None:
        os.environ.pop("SOPBENCH_CACHE_DIR", None)
    else:
        os.environ["SOPBENCH_CACHE_DIR"] = before


def require_published_data() -> Path:
    """``../shared/sopbench``, or skip the calling test."""
    if not PUBLISHED_DATA_DIR.is_dir():
        pytest.skip("../shared/sopbench not found: published data needed")
    return PUBLISHED_DATA_DIR


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` (the reference texts and the published data)."""
    require_published_data()
    return SHARED_DIR


@pytest.fixture(scope="session")
def published_tasks_dir(shared_dir: Path) -> Path:
    return shared_dir / "sopbench" / "tasks"


@pytest.fixture(scope="session")
def published_trajectories_dir(shared_dir: Path) -> Path:
    return shared_dir / "sopbench" / "trajectories"


@pytest.fixture(scope="session")
def published_tasks(published_tasks_dir: Path) -> Callable[[str], list[Task]]:
    """``published_tasks(domain)``: the typed tasks of ``<domain>_tasks.json.gz``, loaded once a session.

    The tasks share their decoded JSON: treat them as read-only (the systems copy their database).
    """

    @cache
    def load(domain: str) -> list[Task]:
        return load_tasks(published_tasks_dir / f"{domain}_tasks.json.gz")

    return load


@pytest.fixture(scope="session")
def published_task_counts() -> dict[str, int]:
    """How many tasks each domain's published task file holds (no data needed)."""
    return dict(PUBLISHED_TASK_COUNTS)


@pytest.fixture(scope="session")
def published_tables(shared_dir: Path) -> dict[str, Any]:
    """The published derived tables (``../shared/reference/SOPBENCH_DOMAIN_TABLES.json``), by domain."""
    if not PUBLISHED_TABLES_FILE.is_file():
        pytest.skip("../shared/reference not found: published tables needed")
    return json.loads(PUBLISHED_TABLES_FILE.read_text())


# -- a small synthetic trajectory record (not published data) for loader tests -----------------------


def _synthetic_task() -> dict:
    login = ["single", "login_user", {"username": "username", "identification": "identification"}]
    return {
        "initial_database": {"accounts": {"alice": {"identification": "pw", "balance": 10.0}}},
        "constraint_parameters": {"maximum_withdrawal": 500},
        "user_known": {"username": "alice", "identification": "pw"},
        "constraints": ["and", [login, ["single", "not account_frozen", None]]],
        "constraints_original": ["and", [login]],
        "action_should_succeed": True,
        "user_instruction": "You want to know your balance.",
        "user_prompt": "Hi, what is my balance? I am alice, password pw.",
        "directed_action_graph": {
            "nodes": [
                ["get_account_balance", {"username": "username"}],
                "and",
                ["login_user", {"username": "username"}],
            ],
            "connections": [[0, 1], [1, 2]],
        },
        "user_goal": "get_account_balance",
    }


def _synthetic_run() -> dict:
    def call(call_id: str, name: str, arguments: str) -> dict:
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}

    return {
        "prompt": "You are a bank assistant.",
        "interaction": [
            {"content": "Hi, what is my balance?", "sender": "user"},
            {
                "content": None,
                "sender": "bank assistant",
                "tool_calls": [call("c1", "login_user", '{"username": "alice", "identification": "pw"}')],
                "refusal": None,
                "thinking": "log in first",
            },
            {"tool_call_id": "c1", "tool_name": "login_user", "content": "(True, True)"},
            {
                "content": None,
                "sender": "bank assistant",
                "tool_calls": [call("c2", "get_account_balance", '{"username": "alice"}')],
            },
            {"tool_call_id": "c2", "tool_name": "get_account_balance", "content": "(True, 10.0)"},
            {"content": "Your balance is 10.0.", "sender": "bank assistant", "tool_calls": None},
            {"content": "Thanks!", "sender": "user", "tool_calls": []},
            {
                "content": None,
                "sender": "bank assistant",
                "tool_calls": [call("c3", "exit_conversation", "{}")],
            },
        ],
        "database": {"accounts": {"alice": {"identification": "pw", "balance": 10.0}}},
    }


def _synthetic_verdict() -> dict:
    verdict = {
        "user_goal": "get_account_balance",
        "action_should_succeed": 1,
        "num_messages": 5,
        "num_function_calls": 2,
    }
    verdict.update(dict.fromkeys(PUBLISHED_CHECKS, True))
    return verdict


def synthetic_record() -> dict:
    """A fresh, valid trajectory record in the published layout (older tuple output format)."""
    agent = {"model": "gpt-4o", "temperature": 0.0, "top_p": 0.01, "max_tokens": 512, "tool_call_mode": "fc"}
    return {
        "domain": "bank",
        "setup": {
            "env_mode": "prompt",
            "tool_list": "full",
            "user_agent": None,
            "assistant_agent": agent,
            "shuffle_func": False,
            "default_constraint_option": "full",
            "constraint_descr_format": "structured",
        },
        "task": _synthetic_task(),
        "interactions": [_synthetic_run()],
        "evaluations": [_synthetic_verdict()],
        "statistics": {"total_interactions": 1, "total_success": 1},
    }


@pytest.fixture(scope="session")
def make_record():
    """A factory for fresh synthetic trajectory records (session-scoped, so hypothesis tests can use it)."""
    return synthetic_record


@pytest.fixture(scope="session")
def make_task():
    """A factory for fresh synthetic task objects in the published layout."""
    return _synthetic_task


@pytest.fixture(scope="session")
def start_chromium() -> Callable[[], Any]:
    """Starts headless Debian chromium through selenium, logging the console and every request:
    the one browser set-up of the viewer's and the report's browser tests (each skips or requires
    the browser itself)."""

    def start() -> Any:
        import shutil

        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
        for argument in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--window-size=1200,760",
        ):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)

    return start


@pytest.fixture(scope="session")
def generated_bank_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``bank_tasks.json`` made by ``sopbench generate --domain bank`` (no published data needed)."""
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("generated")
    made = subprocess.run(
        [sys.executable, "-m", "sopbench.cli", "generate", "--domain", "bank", "-o", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    return folder / "bank_tasks.json"


@pytest.fixture(scope="session")
def gzip_bomb() -> bytes:
    """257 MiB of spaces in a JSON list, gzip-compressed (about 260 KB): one MiB past the bound on
    a file sopbench reads."""
    import zlib

    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b" " * (1 << 20)
    parts = [compressor.compress(b"[")]
    parts += [compressor.compress(chunk) for _ in range(257)]
    return b"".join([*parts, compressor.compress(b"]"), compressor.flush()])
