"""SOP files: the rules ``Guard.from_rules`` takes, as a JSON document (``Guard.from_file``).

::

    {
      "rules": [
        {"action": "refund", "params": ["user", "order", "amount"],
         "constraints": ["and", [["single", "verify_identity", {"user": "user"}],
                                 ["single", "lookup_order", {"user": "user", "order": "order"}]]]},
        {"action": "lookup_order", "params": ["user", "order"], "constraints": null, "read_only": true}
      ],
      "verifiers": {"identity_verified": ["single", "verify_identity", {"user": "user"}]},
      "goal": null
    }

``rules``: one object per guarded action: ``action`` (the tool's name), ``params`` (its argument
names, the variables its constraints may bind), ``constraints`` (the published encoding of a
constraint expression, ``sopbench.constraints.parse``; ``null``: always allowed) and ``read_only``
(default false: a read-only action is never refused, unless it is the ``goal``). ``verifiers``
(optional): constraint name -> the helper expression that verifies it, in the constraint's own
parameter names (``null``: an argument check that needs no helper). A single that names neither a
verifier nor anything else is a helper tool: a call of it that answered ``true`` verifies it.
Tools without a rule are never refused.

Every error is one ``LoadError`` naming the file and the place: ``sop.json: field
"rules[0].constraints[1][0]": unknown operator "xor"``, or the line and column of bad JSON.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sopbench._io import FieldError, LoadError, StrPath, at, expect, json_type, optional, read_json, required
from sopbench.constraints import ConstraintError, Expr, Rule, Sop, parse

FIELDS = ("rules", "verifiers", "goal")
RULE_FIELDS = ("action", "params", "constraints", "read_only")


def read_sop_file(path: StrPath) -> tuple[Sop, str | None]:
    """The SOP catalogue of an SOP file and its goal (the action guarded even when read-only)."""
    path = Path(path)
    document = read_json(path)  # LoadError naming the file (and where the JSON is bad)
    try:
        return sop_from_json(document)
    except FieldError as exc:
        raise LoadError(exc.message, file=path, field=exc.field or None) from None


def sop_from_json(document: Any) -> tuple[Sop, str | None]:
    """An SOP catalogue and goal from a decoded SOP file; ``FieldError`` locating what is wrong."""
    if not isinstance(document, dict):
        raise FieldError("", f'expected an object with "rules", got {json_type(document)}')
    _no_unknown(document, FIELDS, "")
    rules: dict[str, Rule] = {}
    for i, item in enumerate(required(document, "rules", list, "")):
        rule = _rule(item, at("rules", i))
        if rule.action in rules:
            raise FieldError(at(at("rules", i), "action"), f"a second rule for {rule.action!r}")
        rules[rule.action] = rule
    verifiers: dict[str, Expr | None] = {}
    for name, encoded in (optional(document, "verifiers", dict, "") or {}).items():
        verifiers[name] = _expr(encoded, at("verifiers", name))
    goal = optional(document, "goal", str, "")
    if goal is not None and goal not in rules:
        raise FieldError("goal", f"{goal!r} has no rule")
    sop = Sop(rules, verifiers)
    try:
        sop.validate()  # parameter maps name the action's params; no helper requires itself
    except ConstraintError as exc:
        raise FieldError(_field_of(exc.path, list(rules)), exc.message) from None
    return sop, goal


def _rule(item: Any, where: str) -> Rule:
    expect(item, dict, where)
    _no_unknown(item, RULE_FIELDS, where)
    action = required(item, "action", str, where)
    if not action.strip():
        raise FieldError(at(where, "action"), "must be a tool's name, got an empty string")
    params = optional(item, "params", list, where) or []
    for j, param in enumerate(params):
        expect(param, str, at(at(where, "params"), j))
    if "constraints" not in item:
        raise FieldError(at(where, "constraints"), "missing (null: the action is always allowed)")
    expr = _expr(item["constraints"], at(where, "constraints"))
    read_only = optional(item, "read_only", bool, where) or False
    return Rule(action, expr, tuple(params), read_only)


def _expr(encoded: Any, where: str) -> Expr | None:
    try:
        return parse(encoded, where)
    except ConstraintError as exc:
        raise FieldError(exc.path, exc.message) from None


def _field_of(path: str, actions: list[str]) -> str:
    """A constraint's path as ``Sop.validate`` names it (``refund.constraints[1]``) as a field of
    the file (``rules[0].constraints[1]``)."""
    for i, action in enumerate(actions):
        if path.startswith(action + "."):
            return f"rules[{i}]{path[len(action) :]}"
    return path


def _no_unknown(obj: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    for key in obj:
        if key not in known:
            raise FieldError(at(where, key), f"unknown field (expected {', '.join(known)})")
