"""Finding a domain's task file."""

import pytest

from sopbench.tasks import LoadError, task_file


def test_task_file_prefers_the_compressed_file_and_names_what_it_expected(tmp_path):
    (tmp_path / "bank_tasks.json").write_text("{}")
    assert task_file(tmp_path, "bank") == tmp_path / "bank_tasks.json"
    (tmp_path / "bank_tasks.json.gz").write_bytes(b"")
    assert task_file(tmp_path, "bank") == tmp_path / "bank_tasks.json.gz"
    with pytest.raises(
        LoadError, match=r"no task file for dmv \(expected dmv_tasks.json.gz or dmv_tasks.json\)"
    ):
        task_file(tmp_path, "dmv")
