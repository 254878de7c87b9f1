"""Finding a domain's task file."""

import pytest

from sopbench.tasks import LoadError, task_file


def test_task_file_finds_either_form_refuses_both_and_names_what_it_expected(tmp_path):
    (tmp_path / "bank_tasks.json").write_text("{}")
    assert task_file(tmp_path, "bank") == tmp_path / "bank_tasks.json"
    (tmp_path / "bank_tasks.json").rename(tmp_path / "bank_tasks.json.gz")
    assert task_file(tmp_path, "bank") == tmp_path / "bank_tasks.json.gz"
    (tmp_path / "bank_tasks.json").write_text("{}")  # which one is meant cannot be told
    with pytest.raises(LoadError, match=r"holds both bank_tasks.json and bank_tasks.json.gz: remove one"):
        task_file(tmp_path, "bank")
    (tmp_path / "bank_tasks.json").unlink()
    with pytest.raises(
        LoadError, match=r"no task file for dmv \(expected dmv_tasks.json.gz or dmv_tasks.json\)"
    ):
        task_file(tmp_path, "dmv")
