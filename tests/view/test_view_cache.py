"""The viewer over the verdict cache: the same episodes, filters and pages as without it, and an
episode read from the cache shows its whole verdict when its page is opened."""

from __future__ import annotations

from sopbench.cache import VerdictCache
from sopbench.scoring import SOUND
from sopbench.view import EpisodeIndex, Filters, episode_view, load_sources, source_files


def listed(loaded):
    return [
        (e.id, e.address, e.configuration, e.outcome, e.failing, sorted(e.kinds), e.score.explanations)
        for e in loaded.episodes
    ]


def page(episode):
    view = episode_view(episode)
    return (
        view.failing_step,
        view.failing_explanations,
        view.database_diff,
        view.database_kept,
        view.judgements,
    )


def test_the_cached_list_and_pages_are_the_same(viewer_sources, tmp_path):
    units = source_files(viewer_sources.all)
    plain = load_sources(units, SOUND)
    load_sources(units, SOUND, cache=VerdictCache(tmp_path / "cache"))
    warm = VerdictCache(tmp_path / "cache")
    cached = load_sources(units, SOUND, cache=warm)
    assert warm.stats.hits == 1 and warm.stats.misses == 0  # the trajectory file; run folders are read
    assert listed(cached) == listed(plain) and cached.problems == plain.problems
    filters = Filters({"outcome": "passed"})
    assert (
        EpisodeIndex(cached.episodes).page(filters).total == EpisodeIndex(plain.episodes).page(filters).total
    )
    from_file = [e for e in cached.episodes if e.in_file]
    assert from_file and all(e.score.episode is None for e in from_file)  # the list keeps no verdict object
    for episode in from_file:
        assert page(episode) == page(plain.episodes[episode.id])
        assert episode.full_score.episode is not None
