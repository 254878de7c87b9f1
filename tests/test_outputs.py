"""The one output guard (``sopbench._outputs.refuse_output``) on its own: what it refuses and how it
names it; ``tests/test_cli_outputs.py`` walks it through every verb."""

from __future__ import annotations

import os
import socket
import sqlite3
import stat
from pathlib import Path

import pytest

from sopbench._outputs import OutputRefused, protected_by, refuse_output, store_files

# A character device (a sandbox may have replaced /dev/null with a plain file).
DEVICE = next(d for d in (os.devnull, "/dev/zero", "/dev/full") if stat.S_ISCHR(os.stat(d).st_mode))


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("results.sqlite", "a run's store"),
        ("results.sqlite-wal", "a run's store journal (wal)"),
        ("results.sqlite-shm", "a run's store journal (shm)"),
        ("results.sqlite-journal", "a run's store journal (journal)"),
        ("results.sqlite.lock", "a run's lock"),
    ],
)
def test_a_store_file_is_refused_by_name_whether_or_not_it_exists(tmp_path, name, what):
    with pytest.raises(OutputRefused, match=rf": is {what.replace('(', '[(]').replace(')', '[)]')}; writing"):
        refuse_output(tmp_path / name)


def test_a_store_under_another_name_is_refused_by_its_content(tmp_path):
    store = tmp_path / "results.sqlite"
    with sqlite3.connect(store) as db:
        db.execute("CREATE TABLE t (x)")
    os.link(store, tmp_path / "copy.db")
    (tmp_path / "link").symlink_to(store)
    with pytest.raises(OutputRefused, match="copy.db: is an SQLite database"):
        refuse_output(tmp_path / "copy.db")
    with pytest.raises(OutputRefused, match="link: is a run's store"):
        refuse_output(tmp_path / "link")
    (tmp_path / "log").write_bytes(b"\x37\x7f\x06\x82" + bytes(28))
    with pytest.raises(OutputRefused, match="log: is an SQLite write-ahead log"):
        refuse_output(tmp_path / "log")


def test_devices_pipes_and_sockets_are_refused_files_and_new_names_are_not(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(tmp_path / "sock"))
    try:
        for path, kind in (
            (Path(DEVICE), "a device"),
            (tmp_path / "pipe", "a named pipe"),
            (tmp_path / "sock", "a socket"),
        ):
            with pytest.raises(OutputRefused, match=f": is {kind}, not a file"):
                refuse_output(path)
    finally:
        listening.close()
    (tmp_path / "old.jsonl").write_text("replace me")
    refuse_output(tmp_path / "old.jsonl")
    refuse_output(tmp_path / "new.jsonl")


def test_an_input_is_refused_under_any_spelling(tmp_path):
    (tmp_path / "a").mkdir()
    given = tmp_path / "a" / "x.json"
    given.write_text("[]")
    os.link(given, tmp_path / "hard.json")
    for spelling in (given, tmp_path / "a" / ".." / "a" / "x.json", tmp_path / "hard.json"):
        with pytest.raises(OutputRefused, match=r" is also an input \(--tasks\)"):
            refuse_output(spelling, [(given, "--tasks")])


def test_reading_a_folder_or_a_store_protects_the_whole_store(tmp_path):
    assert protected_by(tmp_path) == [tmp_path, *store_files(tmp_path)]
    wal = tmp_path / "results.sqlite-wal"
    assert sorted(protected_by(wal)) == sorted(store_files(tmp_path))
    assert protected_by(tmp_path / "missing.json") == [tmp_path / "missing.json"]
