"""The viewer marks a verdict that accounted for a recording artefact (not the agent's doing)."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from sopbench.scoring import SOUND
from sopbench.view import EpisodeIndex, load_sources, source_files
from sopbench.view.server import create_app

NAME = "ast_claude-3-5-sonnet-20241022-mode_fc-dep_full-fmt_structured-tool_full-shuffle_False.json.gz"


def test_the_episode_page_names_the_salted_hash_licence_number(published_trajectories_dir: Path):
    loaded = load_sources(source_files([published_trajectories_dir / "dmv" / NAME]), SOUND)
    marked = [e for e in loaded.episodes if e.score.artefacts]
    assert marked
    client = TestClient(create_app(EpisodeIndex(loaded.episodes), "sound"))
    page = client.get(f"/episode/{marked[0].id}").text
    assert "recording artefact, not the agent's: dmv_licence_number_salted_hash" in page
    plain = next(e for e in loaded.episodes if not e.score.artefacts)
    assert "recording artefact" not in client.get(f"/episode/{plain.id}").text
