"""What `sopbench run` says when the endpoint itself is at fault, as a user types it: a base URL that
carries credentials is refused at start (and they are never printed), a reply whose HTTP head the
client cannot parse is the endpoint's infra_error (not an agent crash), and abandoned requests are
not said to have been sent again when --max-retries 0 forbade it. The tasks are the generated set
(no published data needed); the server runs on 127.0.0.1."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from chat_server import Reply, call, serve  # noqa: E402

KEY_ENV = "SOPBENCH_TEST_ENDPOINT_FAULTS_KEY"
KEY = "sk-faults-7h6g5f4e3d2c1b"


def sopbench_run(url: str, output: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["run", "--agent", "openai", "--model", "m", "--base-url", url, "--api-key-env", KEY_ENV,
            "--domain", "bank", "--limit", "1", "--no-baselines", "-o", str(output), *extra]  # fmt: skip
    env = {**os.environ, KEY_ENV: KEY, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "sopbench.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


def stored(folder: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(folder / "results.sqlite")
    try:
        return list(db.execute("SELECT status, reason FROM episodes"))
    finally:
        db.close()


def test_a_base_url_with_credentials_is_refused_at_start_in_one_line_that_does_not_show_them(tmp_path):
    with serve([call("exit_conversation")]) as server:
        url = server.url.replace("http://", f"http://user:{KEY}@")
        done = sopbench_run(url, tmp_path / "r")
        assert server.requests == []  # refused before any request
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "carries credentials" in lines[0] and server.url in lines[0], done.stderr
    assert f"${KEY_ENV}" in lines[0]  # where the key goes instead
    assert KEY not in done.stdout + done.stderr and f"user:{KEY}" not in done.stderr
    assert not (tmp_path / "r").exists()


def test_a_reply_head_the_client_cannot_parse_is_the_endpoints_infra_error_not_an_agent_crash(tmp_path):
    with serve(lambda request: Reply(content="hi", headers={"X-Padding": "a" * 60_000})) as server:
        done = sopbench_run(server.url, tmp_path / "r", "--max-retries", "1")
        assert len(server.requests) == 2  # retried once, as any failure of the endpoint
    assert done.returncode == 1, done.stderr
    [(status, reason)] = stored(tmp_path / "r")
    assert status == "infra_error"
    assert reason.startswith("agent endpoint error: ") and "unreadable HTTP reply from the endpoint" in reason
    assert "raised" not in reason and len(reason) < 600 and "aaaa" * 100 not in reason


def test_abandoned_requests_are_not_said_to_be_sent_again_when_no_retry_was_allowed(tmp_path):
    with serve(lambda request: Reply(content="late", delay=2.0)) as server:
        done = sopbench_run(server.url, tmp_path / "r", "--max-retries", "0", "--request-timeout", "0.3")
        assert len(server.requests) == 1
    assert done.returncode == 1
    said = " ".join(done.stderr.split())
    assert "1 requests got no reply within --request-timeout and were abandoned" in said, done.stderr
    assert "were sent again" not in said


def test_a_sweep_whose_endpoint_carries_credentials_is_refused_before_any_folder(tmp_path):
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        f'domains = ["bank"]\n[[agents]]\nname = "a"\nagent = "openai"\nmodel = "m"\n'
        f'endpoint = "http://bob:{KEY}@127.0.0.1:9/v1"\n[matrix]\nagents = ["a"]\ntool_modes = ["fc"]\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "sopbench.cli", "sweep", str(sweep), "-o", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 2 and "carries credentials" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and KEY not in done.stdout + done.stderr
    assert not (tmp_path / "out").exists()
