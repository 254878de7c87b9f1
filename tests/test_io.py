"""Reading plain and gzip-compressed files: every way of writing gzip reads back, damage is reported."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from sopbench._io import LoadError, read_json


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("one-member.json.gz", gzip.compress(b"[1, 2]")),
        ("two-members.json.gz", gzip.compress(b"[1, ") + gzip.compress(b"2]")),  # concatenated gzip files
        ("padded.json.gz", gzip.compress(b"[1, 2]") + b"\0" * 8),  # zero padding after the member
        ("plain.json", b"[1, 2]"),
    ],
)
def test_gzip_files_in_every_layout_read_back(tmp_path: Path, name: str, data: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    assert read_json(path) == [1, 2]


def _crc_flipped(data: bytes) -> bytes:
    damaged = bytearray(data)
    damaged[-8] ^= 1  # the first byte of the CRC-32 in the gzip trailer
    return bytes(damaged)


@pytest.mark.parametrize(
    "damage",
    [_crc_flipped, lambda data: data[:-3], lambda data: data + b"garbage"],
    ids=["wrong-crc", "truncated", "trailing-garbage"],
)
def test_damaged_gzip_is_a_load_error_naming_the_file(tmp_path: Path, damage) -> None:
    path = tmp_path / "broken.json.gz"
    path.write_bytes(damage(gzip.compress(b"[1, 2]")))
    with pytest.raises(LoadError, match=r"broken\.json\.gz: truncated or corrupt gzip data"):
        read_json(path)


def test_the_atomic_writer_refuses_what_the_output_guard_refuses(tmp_path):
    from sopbench._io import atomic_file

    store = tmp_path / "results.sqlite-wal"
    store.write_bytes(b"committed rows")
    with pytest.raises(ValueError, match="is a run's store journal"), atomic_file(store) as out:
        out.write(b"")
    assert store.read_bytes() == b"committed rows"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.sqlite-wal"]  # no temporary file left
