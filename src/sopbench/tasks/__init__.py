"""Published tasks: typed models and loaders for ``<domain>_tasks.json[.gz]``.

>>> from sopbench.tasks import load_tasks
>>> tasks = load_tasks("../shared/sopbench/tasks/bank_tasks.json.gz")  # doctest: +SKIP
>>> tasks[0].goal, tasks[0].action_should_succeed  # doctest: +SKIP
('apply_credit_card', True)
"""

from sopbench._io import LoadError
from sopbench.constraints import ActionGraph, GraphNode, GroupNodeKind, ToolNode

from ._digest import task_digest, task_json
from ._files import domain_task_files, iter_all_tasks, task_file
from ._load import TASK_FIELDS, load_tasks, parse_task_json, task_file_domain, task_from_json
from ._model import Task, task_ids

__all__ = [
    "TASK_FIELDS",
    "ActionGraph",
    "GraphNode",
    "GroupNodeKind",
    "LoadError",
    "Task",
    "task_digest",
    "task_ids",
    "task_json",
    "ToolNode",
    "domain_task_files",
    "iter_all_tasks",
    "load_tasks",
    "parse_task_json",
    "task_file",
    "task_file_domain",
    "task_from_json",
]
