"""The published SOPBench data: the task files and recorded trajectories of the original repository
(``Leezekun/SOPBench``) at a pinned commit, fetched once into the user cache and checked file by file.

``fetch_published()`` downloads what is missing (from the repository's raw files, or from a mirror
with the same layout: ``--from URL`` or ``SOPBENCH_DATA_MIRROR``), checks each file's sha256 against
the list kept in this package (``SHA256SUMS``: digest, size in bytes, path in the repository), and
keeps it gzip-compressed as ``tasks/<domain>_tasks.json.gz`` and
``trajectories/<domain>/<run>.json.gz`` under ``published_dir()``: the layout every loader reads.
``published_path("tasks")`` is what ``--tasks published`` names.
"""

from ._fetch import (
    DEFAULT_SOURCE,
    MIRROR_ENV,
    PINNED_COMMIT,
    FetchError,
    FetchReport,
    PublishedFile,
    PublishedMissing,
    fetch_published,
    published_dir,
    published_files,
    published_path,
)

__all__ = [
    "DEFAULT_SOURCE",
    "MIRROR_ENV",
    "PINNED_COMMIT",
    "FetchError",
    "FetchReport",
    "PublishedFile",
    "PublishedMissing",
    "fetch_published",
    "published_dir",
    "published_files",
    "published_path",
]
