"""Configurations run side by side, and an agent's ``concurrency`` bounds its endpoint over every
configuration that uses it (the endpoint's other configurations wait; other endpoints do not)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sopbench.cli import app
from sopbench.runner import read_run

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from chat_server import ChatServer, benchmark_model, error  # noqa: E402


class CountingServer(ChatServer):
    """The benchmark model, 0.15 s per reply, counting the replies in the making at once."""

    def __init__(self) -> None:
        super().__init__(benchmark_model, latency=0.15)
        self.in_flight = self.most = 0
        self.first = self.last = 0.0  # when the first request came, when the last reply went
        self._count = threading.Lock()

    def answer(self, body: dict[str, Any], headers: dict[str, str]) -> Any:
        with self._count:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            self.first = self.first or time.monotonic()
        try:
            return super().answer(body, headers)
        finally:
            with self._count:
                self.in_flight -= 1
                self.last = time.monotonic()


def test_an_endpoint_limit_holds_across_configurations_and_spares_other_endpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "loopback")
    with CountingServer() as shared, CountingServer() as other:
        sweep = tmp_path / "sweep.toml"
        sweep.write_text(
            f"""
domains = ["bank"]
concurrency = 16
[limits]
limit = 4
[[agents]]
name = "a1"
agent = "openai"
model = "m1"
endpoint = "{shared.url}"
concurrency = 2
[[agents]]
name = "a2"
agent = "openai"
model = "m2"
endpoint = "{shared.url}"
[[agents]]
name = "b"
agent = "openai"
model = "m3"
endpoint = "{other.url}"
[matrix]
agents = ["a1", "a2", "b"]
tool_modes = ["fc"]
""",
            encoding="utf-8",
        )
        result = CliRunner().invoke(app, ["sweep", str(sweep), "--output", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    for name in ("a1-fc-full", "a2-fc-full", "b-fc-full"):
        assert len(read_run(tmp_path / "out" / name).episodes) == 4
    assert shared.most == 2  # a1 and a2 together never had more than the limit at their endpoint
    assert other.most == 4  # b ran all its episodes at once
    assert other.first < shared.last  # beside a1 and a2, not after them


def test_a_refusing_endpoint_stops_its_configuration_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "loopback")
    with ChatServer(lambda _request: error(401, "bad key")) as refusing, CountingServer() as working:
        sweep = tmp_path / "sweep.toml"
        sweep.write_text(
            f"""
domains = ["bank"]
concurrency = 4
[limits]
limit = 3
[[agents]]
name = "refused"
agent = "openai"
model = "m"
endpoint = "{refusing.url}"
[[agents]]
name = "fine"
agent = "openai"
model = "m"
endpoint = "{working.url}"
[matrix]
agents = ["refused", "fine"]
tool_modes = ["fc"]
""",
            encoding="utf-8",
        )
        result = CliRunner().invoke(app, ["sweep", str(sweep), "--output", str(tmp_path / "out")])
    assert result.exit_code == 2
    [line] = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert "refused-fc-full:" in line and "rejected the API key" in line and "fine-fc-full" not in line
    assert len(read_run(tmp_path / "out" / "fine-fc-full").episodes) == 3
    assert not read_run(tmp_path / "out" / "refused-fc-full").episodes
