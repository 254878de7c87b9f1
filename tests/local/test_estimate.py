"""serve-local's time per episode: two timed requests to the server, scaled to an episode's size
(against the stub chat server: the rates follow its delays)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sopbench.local import Speed, measure_speed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from chat_server import Reply, serve  # noqa: E402


def test_the_rates_follow_the_servers_time():
    # the stub counts a prompt as its characters / 4 and every reply as 7 tokens
    def slow_on_long_prompts(request):
        long = len(request["messages"][0]["content"]) > 1000
        return Reply(content="one", delay=0.5 if long else 0.2)

    with serve(slow_on_long_prompts) as server:
        speed = measure_speed(server.url, "m")
    assert 1000 < speed.prompt_tps < 4000  # about 1,300 tokens in 0.5 s
    assert 20 < speed.completion_tps < 60  # 7 tokens in about 0.2 s
    assert speed.seconds_per_episode() == pytest.approx(
        7000 / speed.prompt_tps + 5 * 128 / speed.completion_tps
    )
    assert "s per episode" in speed.describe() and "prompt tokens/s" in speed.describe()


def test_an_episode_estimate_is_its_reading_and_its_writing():
    assert Speed(1000.0, 10.0).seconds_per_episode() == pytest.approx(7 + 64)


def test_a_server_that_does_not_answer_is_an_error():
    with (
        serve(lambda request: Reply(status=500, error={"message": "boom"})) as server,
        pytest.raises(OSError),
    ):
        measure_speed(server.url, "m", timeout=5)


def test_serve_locals_suggestions_carry_a_limit_and_the_estimate(tmp_path):
    from sopbench.local import LocalServer, describe

    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    lines = describe(LocalServer(gguf, port=8080), speed=Speed(1000.0, 10.0).describe())
    runs = [line for line in lines if "sopbench run" in line]
    assert len(runs) == 3 and all("--limit 5" in line for line in runs)
    assert "about 71 s per episode" in lines[-1]
