"""A run folder keeps what each failed procedure left unverified, so its breakdown by constraint is
the one its transcripts give, and an older store (without it) still reads."""

from sopbench.runner import RunSpec, run
from sopbench.runner.episode import row_score
from sopbench.runner.store import open_existing
from sopbench.statistics import breakdown


def _rows(tmp_path, small_tasks):
    run(RunSpec(agent="no-verify", tasks=small_tasks, output=tmp_path / "run", baselines=False))
    store = open_existing(tmp_path / "run")
    rows = [row for row in store.rows() if row.status == "completed"]
    store.close()
    return rows


def test_a_run_folder_breaks_procedure_failures_down_by_constraint(small_tasks, tmp_path):
    rows = _rows(tmp_path, small_tasks)
    outcomes = [row_score(row).outcome() for row in rows]
    constraints = breakdown(outcomes, "constraint")
    assert constraints["procedure_failures"] > 0
    assert "unclassified" not in constraints["by_kind"]
    for row in rows:
        stored = row.verdict["unverified"]
        assert all(set(item) == {"kind", "depth"} for item in stored)
        if row.verdict["procedure"]:
            assert stored == []
        assert "unverified" not in row_score(row).verdict


def test_a_store_without_the_unverified_constraints_counts_them_unclassified(small_tasks, tmp_path):
    rows = _rows(tmp_path, small_tasks)
    for row in rows:
        del row.verdict["unverified"]  # as a store written before it was kept
    constraints = breakdown([row_score(row).outcome() for row in rows], "constraint")
    assert set(constraints["by_kind"]) == {"unclassified"}
    assert constraints["procedure_failures"] > 0
