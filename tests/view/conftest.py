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


@pytest.fixture(scope="session")
def crashed_run(viewer_sources: ViewerSources, tmp_path_factory: pytest.TempPathFactory):
    """A run folder of infra_error episodes that kept their transcripts and a malformed call."""
    from viewer_helpers import make_crashed_run

    return make_crashed_run(tmp_path_factory.mktemp("crashed"), viewer_sources.tasks)


@pytest.fixture(scope="session")
def inspect_log(tmp_path_factory: pytest.TempPathFactory):
    """An Inspect .eval log of the sopbench task (two bank tasks, the reference policy)."""
    pytest.importorskip(
        "inspect_ai", reason="the inspect extra is not installed (pip install 'sopbench[inspect]')"
    )
    from viewer_helpers import make_inspect_log

    return make_inspect_log(tmp_path_factory.mktemp("inspect"))
