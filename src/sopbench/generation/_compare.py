"""Combination-by-combination comparison of a generated task set with a published task file.

A published task is placed in a combination (goal, SOP variant, assignment) by computing, on its own
database, parameters and user-known values, the truth of every constraint instance of the
variant's verification form: it belongs to the first assignment of its variant whose every relevant
instance has that truth and whose outcome is the task's ``action_should_succeed``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sopbench.constraints import And, Expr, Or, Single, dump, singles
from sopbench.domains import Domain, LenientSystem, simplify
from sopbench.tasks import Task

from ._enumerate import Variant, single_text


def canonical(expr: Expr | None) -> list[object] | None:
    """An order-insensitive form of an SOP (children of and/or sorted), to recognise a variant."""
    expr = simplify(expr)

    def form(e: Expr) -> list[object]:
        if isinstance(e, Single):
            return ["single", ("not " if e.negated else "") + e.name, sorted(e.params or ())]
        children = [form(c) for c in e.children]
        if isinstance(e, And | Or):
            children.sort(key=repr)
        return [type(e).__name__.lower(), children]

    return None if expr is None else form(expr)


@dataclass
class Comparison:
    """Per combination: how many published and how many generated tasks it has."""

    domain: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    unplaced: list[dict[str, Any]] = field(default_factory=list)  # published tasks in no combination
    difficulty: dict[str, Any] = field(default_factory=dict)  # "generated" / "published": difficulty()

    @property
    def published_combinations(self) -> int:
        return sum(1 for r in self.rows if r["published"])

    @property
    def generated_combinations(self) -> int:
        return sum(1 for r in self.rows if r["generated"])

    @property
    def published_only(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["published"] and not r["generated"]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "combinations": len(self.rows),
            "covered_by_published": self.published_combinations,
            "covered_by_generated": self.generated_combinations,
            "covered_by_both": sum(1 for r in self.rows if r["published"] and r["generated"]),
            "published_only": len(self.published_only),
            "generated_only": sum(1 for r in self.rows if r["generated"] and not r["published"]),
            "published_tasks": sum(r["published"] for r in self.rows) + len(self.unplaced),
            "published_tasks_unplaced": self.unplaced,
            "difficulty": self.difficulty,
            "rows": self.rows,
        }


def compare(
    domain: Domain,
    variants: Sequence[Variant],
    generated_counts: Iterable[dict[str, Any]],
    published: Sequence[Task],
) -> Comparison:
    """Place every published task in a combination and line the counts up with the generated ones."""
    result = Comparison(domain.name)
    index: dict[tuple[str, int, tuple[tuple[str, int], ...], bool], dict[str, Any]] = {}
    by_variant: dict[tuple[str, Any], Variant] = {}
    for variant in variants:
        by_variant.setdefault((variant.goal, repr(canonical(variant.original))), variant)
        for assignment in variant.assignments:
            row = {
                "goal": variant.goal,
                "variant": variant.number,
                "constraints_original": dump(variant.original),
                "assignment": [list(item) for item in assignment.key()],
                "outcome": assignment.outcome,
                "published": 0,
                "generated": 0,
            }
            index[(variant.goal, variant.number, assignment.key(), assignment.outcome)] = row
            result.rows.append(row)
    for counted in generated_counts:
        key = (
            counted["goal"],
            counted["variant"],
            tuple(tuple(i) for i in counted["assignment"]),
            counted["outcome"],
        )
        if key in index:
            index[key]["generated"] += counted["tasks"]
    for task in published:
        matched = by_variant.get((task.goal, repr(canonical(task.constraints_original))))
        where = f"{task.goal}[{task.index}]"
        if matched is None:
            result.unplaced.append({"task": where, "reason": "its SOP is not one of the enumerated variants"})
            continue
        truths = _truths(domain, task, [s for a in matched.assignments for s, _ in a.values])
        placed = False
        for assignment in matched.assignments:
            if assignment.outcome != task.action_should_succeed:
                continue
            if all(truths.get(s) is want for s, want in assignment.required.items()):
                index[(matched.goal, matched.number, assignment.key(), assignment.outcome)]["published"] += 1
                placed = True
                break
        if not placed:
            shown = ", ".join(f"{single_text(s)}={t}" for s, t in truths.items())
            result.unplaced.append(
                {"task": where, "reason": f"no assignment of its variant matches its data ({shown})"}
            )
    return result


def _truths(domain: Domain, task: Task, instances: Iterable[Single]) -> dict[Single, bool | None]:
    system = LenientSystem(domain, task.initial_database, task.constraint_parameters)
    truths: dict[Single, bool | None] = {}
    try:
        for single in dict.fromkeys(instances):
            try:
                truths[single] = system.value_of(single, task.user_known) == True  # noqa: E712
            except Exception:  # noqa: BLE001 - an instance its data cannot evaluate has no truth
                truths[single] = None
    finally:
        system.close()
    return truths


# ---- how hard a task set is -------------------------------------------------------------------

DIFFICULTY_MEASURES = (
    "constraints",
    "expanded_constraints",
    "distinct_expanded_constraints",
    "nesting_depth",
)


def nesting_depth(expr: Expr | None) -> int:
    """Levels of the SOP tree: 0 for none, 1 for a single constraint, +1 per group around it."""
    if expr is None:
        return 0
    if isinstance(expr, Single):
        return 1
    return 1 + max((nesting_depth(c) for c in expr.children), default=0)


def difficulty(tasks: Sequence[Task]) -> dict[str, Any]:
    """Per measure the distribution (min, median, mean, max) over the tasks: constraints the agent
    is shown, constraints of the expanded SOP the oracle checks (each occurrence, and each distinct
    instance once: an expansion may write a shared prerequisite once or before every constraint that
    needs it, the same checks either way), nesting depth of the expanded SOP; and the share of tasks
    that must succeed."""

    def summary(values: list[int]) -> dict[str, float]:
        if not values:
            return {"min": 0, "median": 0, "mean": 0.0, "max": 0}
        ordered = sorted(values)
        middle = len(ordered) // 2
        median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
        return {
            "min": ordered[0],
            "median": median,
            "mean": round(sum(ordered) / len(ordered), 2),
            "max": ordered[-1],
        }

    return {
        "tasks": len(tasks),
        "must_succeed_share": round(sum(t.action_should_succeed for t in tasks) / len(tasks), 3)
        if tasks
        else 0.0,
        "constraints": summary([sum(1 for _ in singles(t.constraints_original)) for t in tasks]),
        "expanded_constraints": summary([sum(1 for _ in singles(t.constraints)) for t in tasks]),
        "distinct_expanded_constraints": summary([len(set(singles(t.constraints))) for t in tasks]),
        "nesting_depth": summary([nesting_depth(t.constraints) for t in tasks]),
    }
