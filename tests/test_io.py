"""Reading plain and gzip-compressed files: every way of writing gzip reads back, damage is reported."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from sopbench._io import LoadError, read_json

MAX_DOCUMENT_DEPTH = 254  # the documented bound on a file: what orjson writes back


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


def test_a_gzip_bomb_is_a_load_error_and_never_inflated_whole(tmp_path, gzip_bomb):
    path = tmp_path / "bank" / "bomb.json.gz"
    path.parent.mkdir()
    path.write_bytes(gzip_bomb)
    with pytest.raises(LoadError, match=r"bomb\.json\.gz: inflates to more than 256 MiB"):
        read_json(path)


def test_two_gzip_members_are_bounded_together(tmp_path):
    path = tmp_path / "two.json.gz"
    path.write_bytes(gzip.compress(b"[1, ") + gzip.compress(b"2]"))
    assert read_json(path) == [1, 2]


@pytest.mark.parametrize("depth", [MAX_DOCUMENT_DEPTH + 1, 1000, 1025, 100_000])
def test_a_file_nested_past_the_bound_is_a_load_error(tmp_path, depth):
    path = tmp_path / "deep.json"
    path.write_text("[" * depth + "]" * depth)
    with pytest.raises(LoadError, match=rf"deep\.json: JSON nested deeper than {MAX_DOCUMENT_DEPTH} levels$"):
        read_json(path)
