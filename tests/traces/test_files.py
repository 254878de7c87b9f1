"""Every file problem is named: a .json.gz that is not gzip, a folder that cannot be listed,
and records keep the path they were read from, so equal file names in two folders differ."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sopbench.traces import LoadError, iter_records, iter_trajectory_files, read_trajectory_file


def write(path: Path, content: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content))
    return path


def test_a_json_gz_that_is_not_gzip_is_reported_as_not_gzip(tmp_path: Path) -> None:
    path = tmp_path / "bank" / "x.json.gz"
    path.parent.mkdir(parents=True)
    path.write_text("this is neither gzip nor JSON")
    errors: list[LoadError] = []
    assert read_trajectory_file(path, errors.append) is None
    assert len(errors) == 1 and "not gzip" in str(errors[0]) and "invalid JSON" not in str(errors[0])


def test_a_json_gz_holding_plain_json_is_still_read(tmp_path: Path, make_record) -> None:
    path = write(tmp_path / "bank" / "x.json.gz", [make_record()])
    assert len(read_trajectory_file(path) or []) == 1


def test_a_folder_that_cannot_be_listed_is_named_as_a_problem(
    tmp_path: Path, make_record, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "bank" / "a.json", [make_record()])
    locked = tmp_path / "dmv"
    write(locked / "b.json", [make_record()])
    real_scandir = os.scandir

    def scandir(path=".", *args, **kwargs):  # the test runs as a user that may read everything
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", scandir)
    assert locked in list(iter_trajectory_files(tmp_path))
    monkeypatch.setattr(os, "listdir", lambda path: scandir(path))
    errors: list[LoadError] = []
    records = list(iter_records(tmp_path, keep_going=True, on_error=errors.append))
    assert len(records) == 1
    assert len(errors) == 1 and errors[0].file == locked and "cannot read folder" in str(errors[0])


def test_records_keep_the_path_they_were_read_from(tmp_path: Path, make_record) -> None:
    write(tmp_path / "expA" / "bank" / "x.json", [make_record()])
    write(tmp_path / "expB" / "bank" / "x.json", [make_record()])
    sources = [record.source for record in iter_records([tmp_path / "expA", tmp_path / "expB"])]
    assert sources == [
        (tmp_path / "expA" / "bank" / "x.json").as_posix(),
        (tmp_path / "expB" / "bank" / "x.json").as_posix(),
    ]
    relative = [record.source for record in iter_records(Path(os.path.relpath(tmp_path)) / "expA")]
    assert relative == [(Path(os.path.relpath(tmp_path)) / "expA" / "bank" / "x.json").as_posix()]
