"""Claiming a run folder: the manifest a run writes, checked against the one it resumes."""

from __future__ import annotations

from typing import Any

from sopbench.tasks import LoadError, load_tasks

from ._manifest import Manifest, TaskSet, build_manifest, differences, task_differences, task_digest
from ._plan import task_files, with_ids
from ._spec import RunSpec, RunSpecError
from ._store import STORE_NAME, Store, StoreError, open_existing


def generated_seed(config: RunSpec) -> int | None:
    """The seed of the generated default task set, when the run plays it (no ``tasks`` given)."""
    if config.tasks is not None:
        return None
    from sopbench.generation import DEFAULT_SEED

    return DEFAULT_SEED


def claim(config: RunSpec, task_set: TaskSet) -> tuple[Manifest, dict[str, str]]:
    """The manifest and task digests to record for this run, read from the folder's store without
    changing it; ``StoreError`` when the folder holds another run: a result-determining setting
    differs, or tasks played before are not these tasks. A schema-1 store is adopted (made schema 3
    when the manifest is recorded) only when its episodes were played on these tasks; a schema-2
    one's manifest is read as it is and written again at schema 3."""
    identity = config.identity()
    manifest: Manifest | None = None
    stored_digests: dict[str, str] = {}
    if (config.output / STORE_NAME).is_file():
        store = open_existing(config.output)
        try:
            manifest = store.manifest()
            stored_digests = store.task_digests()
            if store.version == 1:
                stored_digests = _adopt_schema_1(store, config, task_set, identity)
            elif manifest is not None:
                problems = differences(manifest.config, identity)
                changed = task_differences(stored_digests, task_set)
                if changed:
                    problems.append(changed)
                if problems:
                    raise StoreError(
                        f"{store.folder} holds another run ({'; '.join(problems)}); it is left as it "
                        "was: use another --output folder to run these"
                    )
        finally:
            store.close()
    played = {**stored_digests, **task_set.digests}
    created = None if manifest is None else manifest.created_at
    return build_manifest(task_set, identity, played, created_at=created), played


def _adopt_schema_1(
    store: Store, config: RunSpec, task_set: TaskSet, identity: dict[str, Any]
) -> dict[str, str]:
    """The digests of the tasks a schema-1 store's episodes were played on, when the task set named
    now still holds those very tasks (same goal, position, expected outcome and opening message);
    otherwise ``StoreError`` saying what to do."""
    legacy = store.legacy_config()
    if legacy is not None:
        try:
            before = RunSpec(output=config.output, **legacy).identity()
        except (ValueError, KeyError, TypeError):
            before = legacy
        problems = differences(before, identity)
        if problems:
            raise StoreError(
                f"{store.folder} holds another run ({'; '.join(problems)}); it is left as it was: "
                "use another --output folder to run these"
            )
    rows = list(
        store.db.execute(
            "SELECT task_id, domain, goal, task_index, should_succeed, user, "
            "json_extract(messages, '$[0].content') FROM episodes"
        )
    )
    if not rows:
        return {}
    domains = sorted({row[1] for row in rows})
    noted = store.note("tasks")
    hint = (
        f"run it with --tasks {noted} if that still holds the tasks it was played on, or use another "
        "--output folder"
        if noted
        else "use another --output folder"
    )
    try:
        files = task_files(config.tasks_path, domains)
        tasks = {
            task_id: task
            for file_domain, file in files.items()
            for task, task_id in with_ids(load_tasks(file, domain=file_domain))
        }
    except (RunSpecError, LoadError) as exc:
        raise StoreError(
            f"{store.folder} was made by an earlier sopbench (schema 1) and its episodes cannot be matched "
            f"with the tasks of {config.tasks_path} ({exc}); {hint}"
        ) from None
    mismatched = [
        row[0]
        for row in rows
        if (task := tasks.get(row[0])) is None
        or task.goal != row[2]
        or (task.index if task.index is not None else 0) != row[3]
        or int(task.action_should_succeed) != row[4]
        or (row[5] == "none" and row[6] is not None and row[6] != task.user_prompt)
    ]
    if mismatched:
        raise StoreError(
            f"{store.folder} was made by an earlier sopbench (schema 1) and {len(mismatched)} of its "
            f"{len(rows)} episodes were not played on the tasks of {config.tasks_path} (first "
            f"{mismatched[0]}); it is left as it was: {hint}"
        )
    return {row[0]: task_digest(tasks[row[0]]) for row in rows}
