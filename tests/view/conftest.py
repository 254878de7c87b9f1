"""The viewer's test episodes, made once a session (see viewer_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from viewer_helpers import ViewerSources, make_viewer_sources  # noqa: E402


@pytest.fixture(scope="session")
def viewer_sources(tmp_path_factory: pytest.TempPathFactory) -> ViewerSources:
    return make_viewer_sources(tmp_path_factory.mktemp("viewer"))
