"""The verdict cache: what the verbs that read results (``evaluate``, ``leaderboard``, ``compare``,
``report``, ``view``) computed before, kept on disk so that they score only what changed.

>>> from sopbench.cache import VerdictCache
>>> cache = VerdictCache.default()  # $SOPBENCH_CACHE_DIR, else $XDG_CACHE_HOME/sopbench or ~/.cache/sopbench
>>> cache.info().as_dict()  # doctest: +SKIP
{'location': '...', 'entries': 146, 'bytes': 6481920, 'kinds': {...}}

Three kinds of entries: ``verdicts/`` (each trajectory file's verdicts, keyed by the sha256 of its
bytes, the scoring fingerprint and the options that change a verdict), ``floors/`` (the refuse-all
and no-verify floors of each task set) and ``figures/`` (the HTML report's SVG figures, each keyed
by its drawing and the numbers it shows). An entry is checked (length and checksum) before
it is used: a damaged one is scored again and rewritten, never trusted. Writes are atomic (a
temporary file, then a rename), so two processes may fill the cache at once. ``VerdictCache.stats``
counts what one cache object read, scored and wrote (hits, misses).

The library's use cases (``sopbench.results``) use it only when given one
(``ScoringOptions(cache=VerdictCache.default())``); the command line gives it unless ``--no-cache``.
"""

from ._entries import CACHE_ENV, KINDS, CacheInfo, cache_dir
from ._verdicts import CacheStats, FileVerdicts, VerdictCache, scoring_fingerprint

__all__ = [
    "CACHE_ENV",
    "KINDS",
    "CacheInfo",
    "CacheStats",
    "FileVerdicts",
    "VerdictCache",
    "cache_dir",
    "scoring_fingerprint",
]
