"""Run generated tasks on the published code's own strict oracle (its acceptance test, SPEC §9 step 6).

    .venv/bin/python benchmarks/generate_vs_original.py --original <checkout of Leezekun/SOPBench> TASKS_DIR

For every task of every ``<domain>_tasks.json`` in TASKS_DIR (read with the standard library's
``json``, as the published simulator reads its data): build the published strict system from the
task's database, parameters and ``constraints``, call the required linked actions with the
user-known values and then the goal, and compare the goal's success with ``action_should_succeed``.
Prints per domain how many agree, and the disagreeing tasks. Known reasons for disagreement are
the published oracle's own quirks (a wrong password still logs the user in; bank credit cards read
as a dict; see docs/protocols.md), which the generated tasks, verified on the sound oracle, do not
share. Imports only the checkout's ``env/`` folder (standard library only).
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import sys
from pathlib import Path

from sopbench.domains import get_domain, goal_arguments, required_actions
from sopbench.tasks import task_from_json


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("tasks_dir", type=Path)
    parser.add_argument("--original", type=Path, required=True)
    args = parser.parse_args()
    sys.path.insert(0, str(args.original))
    variables = importlib.import_module("env.variables")
    task_module = importlib.import_module("env.task")
    total_agree = total = 0
    for path in sorted(args.tasks_dir.glob("*_tasks.json")):
        name = path.name[: -len("_tasks.json")]
        data = json.loads(path.read_text())
        innate = variables.domain_assistant_keys[name].action_innate_dependencies
        agree = count = 0
        disagreements = []
        for goal, entries in data.items():
            for position, entry in enumerate(entries):
                entry = {**entry, "user_goal": goal}
                defaults = task_module.get_default_dep_full(name, "full")
                defaults[goal] = entry["constraints"]
                strict = variables.domain_keys[name + "_strict"](
                    copy.deepcopy(entry["initial_database"]), innate, defaults, entry["constraint_parameters"]
                )
                ours = task_from_json(entry, domain=name, goal=goal)
                succeeded = None
                try:
                    for call in required_actions(get_domain(name), ours):
                        result = getattr(strict, call.tool)(**call.arguments)
                        if not _ok(result):
                            succeeded = False
                            break
                    if succeeded is None:
                        succeeded = _ok(getattr(strict, goal)(**goal_arguments(get_domain(name), ours)))
                except Exception as exc:  # noqa: BLE001 - the published code raising is a disagreement
                    succeeded = f"raised {type(exc).__name__}: {exc}"
                count += 1
                if succeeded is entry["action_should_succeed"]:
                    agree += 1
                else:
                    disagreements.append(
                        f"{goal}[{position}] expected {entry['action_should_succeed']}, got {succeeded}"
                    )
        total += count
        total_agree += agree
        print(f"{name:14} {agree}/{count} agree")
        for line in disagreements[:12]:
            print(f"    {line}")
        if len(disagreements) > 12:
            print(f"    ... and {len(disagreements) - 12} more")
    print(f"all            {total_agree}/{total} agree")
    return 0


def _ok(result: object) -> bool:
    if isinstance(result, tuple):
        return bool(result) and bool(result[0])
    return bool(result)


if __name__ == "__main__":
    sys.exit(main())
