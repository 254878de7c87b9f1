"""A domain's world as the searches see it: what a task asks of them (its variables, their kinds
and schemas, the helper actions an agent calls), the spans of days its rules compare, and the cost
of a state: the targets whose truth, computed by the domain's own rules, differs from the one wanted."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import orjson

from sopbench.constraints import Expr, Single, ToolNode, singles
from sopbench.domains import Domain, LenientSystem, action_graph

from ._enumerate import Assignment, Variant
from ._state import GoalCall, ShownSop, State, Targets, copy_data
from ._values import WorldIndex, format_date, parse_date


class SearchSpace:
    """A domain's world, the variables a task takes and the cost of a state (shared by the searches
    of every assignment of the domain; what it learns of the domain's tools is kept)."""

    def __init__(self, domain: Domain, world: Mapping[str, Any]) -> None:
        self.domain = domain
        self.world = copy_data(world)
        self.index = WorldIndex(self.world)
        self.params = dict(domain.catalogue.default_parameters)
        # The numeric constraint parameters, whole: where dates are compared they are spans of days
        # (a maximum stay, a booking lead time).
        self.windows = sorted(
            {int(v) for v in self.params.values() if isinstance(v, int | float) and not isinstance(v, bool)}
        )
        # Spans of days the rules compare with: each window and its neighbours, then a few days.
        # Just past each window first (a stay one night longer than the maximum), then the window.
        self.spans = list(
            dict.fromkeys([w + d for d in (1, 0, -1, 2) for w in self.windows if 1 < w < 400] + [1, 2, 3])
        )
        self._kinds: dict[str, tuple[str, ...]] = {}
        self._helpers: dict[tuple[str, int], list[Single]] = {}
        self._relative: dict[str, list[str]] = {}  # date -> dates a span away (see relative_dates)

    # ---- what a task needs -------------------------------------------------------------------
    def variables(self, variant: Variant, assignment: Assignment) -> list[str]:
        """The user-known variables: the goal's parameters, then those of every relevant instance,
        then those only the actions an agent calls to check them take (a login's identification
        before reading a balance: the user must be able to give it)."""
        names = self._checked_variables(variant, assignment)
        for helper in self.credential_helpers(variant, assignment):
            names += [var for _, var in helper.params or () if var not in names]
        return names

    def _checked_variables(self, variant: Variant, assignment: Assignment) -> list[str]:
        names = list(self.domain.catalogue.graph_params(variant.goal))
        for single, value in assignment.values:
            if value >= 0:
                for _, var in single.params or ():
                    if var not in names:
                        names.append(var)
        return names

    def credential_helpers(self, variant: Variant, assignment: Assignment) -> list[Single]:
        """The helper actions that take a variable no instance takes: the user must know it, and
        when the task is to succeed the call must work with it."""
        checked = set(self._checked_variables(variant, assignment))
        return [
            helper
            for helper in self.helpers(variant)
            if any(var not in checked for _, var in helper.params or ())
        ]

    def helpers(self, variant: Variant) -> list[Single]:
        """The offered actions of the variant's action graph other than the goal (those an agent
        calls to verify the SOP: a login, a balance read), as calls over the task's variables."""
        key = (variant.goal, variant.number)
        if key not in self._helpers:
            graph = action_graph(self.domain.catalogue, variant.goal, variant.original)
            found: list[Single] = []
            for node in graph.nodes[1:]:
                if not isinstance(node, ToolNode) or node.tool == variant.goal:
                    continue
                spec = self.domain.tools.get(node.tool)
                if spec is None or not spec.offered:
                    continue
                call = GoalCall(node.tool, tuple(node.params.items()))
                if call not in found:
                    found.append(call)
            self._helpers[key] = found
        return self._helpers[key]

    def kinds(self, variable: str, verification: Expr | None, goal: str) -> tuple[str, ...]:
        """JSON kinds a variable may take, from the schemas of the tools it is passed to."""
        key = f"{goal}:{variable}"
        if key in self._kinds:
            return self._kinds[key]
        found: list[str] = []
        callees = [(goal, variable)] + [
            (s.name, p) for s in singles(verification) for p, v in s.params or () if v == variable
        ]
        tools = self.domain.catalogue.tools
        for callee, param in callees:
            candidates = [tools[callee]] if callee in tools else list(tools.values())
            for tool in candidates:
                for entry in tool.schema_params or ():
                    if entry.get("name") == param:
                        kind = entry.get("type", "string")
                        found += kind if isinstance(kind, list) else [kind]
            if found:
                break
        kinds = tuple(dict.fromkeys("number" if k == "integer" else k for k in found)) or ("string",)
        self._kinds[key] = kinds
        return kinds

    def entries(self, variable: str, verification: Expr | None, goal: str) -> list[Mapping[str, Any]]:
        """The schema entries of every tool parameter the variable is passed as."""
        tools = self.domain.catalogue.tools
        callees = [(goal, variable)] + [
            (s.name, p) for s in singles(verification) for p, v in s.params or () if v == variable
        ]
        found: list[Mapping[str, Any]] = []
        for callee, param in callees:
            if callee in tools:
                found += [e for e in tools[callee].schema_params or () if e.get("name") == param]
        return found

    def schema(self, variable: str, verification: Expr | None, goal: str) -> Mapping[str, Any] | None:
        """The schema of an array or object parameter the variable is passed as, if any."""
        tools = self.domain.catalogue.tools
        callees = [(goal, variable)] + [
            (s.name, p) for s in singles(verification) for p, v in s.params or () if v == variable
        ]
        for callee, param in callees:
            for tool in [tools[callee]] if callee in tools else list(tools.values()):
                for entry in tool.schema_params or ():
                    kind = entry.get("type")
                    kinds = kind if isinstance(kind, list) else [kind]
                    if entry.get("name") == param and ("array" in kinds or "object" in kinds):
                        return entry
        return None

    def relative_dates(self, name: str, partners: list[Any]) -> list[str]:
        """Days a span away (before and after) from the dates chosen for the same instances when
        ``name`` is a date: the rules compare spans of days with the domain's windows (a stay
        longer than the maximum, a booking within the lead time)."""
        if "date" not in name and "time" not in name:
            return []
        out: list[str] = []
        for other in partners:
            if not isinstance(other, str):
                continue
            if other not in self._relative:
                parsed = parse_date(other)
                shifted: list[str] = []
                if parsed is not None:
                    moment, layout = parsed
                    for days in self.spans:
                        for sign in (1, -1):
                            shifted.append(format_date(moment + timedelta(days=sign * days), layout))
                self._relative[other] = shifted
            out += self._relative[other]
        return out

    # ---- cost --------------------------------------------------------------------------------
    def wrong(self, state: State, targets: Targets) -> list[Single]:
        """The targets whose truth on ``state`` is not the one wanted (the state's cost is how many)."""
        system = LenientSystem(self.domain, state.db, state.params, copy=False)
        bad: list[Single] = []
        try:
            for single, want in targets.wanted:
                if isinstance(single, GoalCall):
                    if self._goal_fails(single, state):
                        bad.append(single)
                    continue
                if isinstance(single, ShownSop):
                    try:
                        shown = system.holds(targets.shown_sop, state.known)
                    except Exception:  # noqa: BLE001 - as in refusal_unseen: a check that cannot
                        shown = False  # conclude (a guest who is not a member) stops the agent
                    if shown != want:
                        bad.append(single)
                    continue
                try:
                    got = system.value_of(single, state.known) == True  # noqa: E712 - the oracle's own test
                except Exception:  # noqa: BLE001 - a rule that cannot be evaluated is a difference
                    bad.append(single)
                    continue
                if got != want:
                    bad.append(single)
        finally:
            system.close()
        return bad

    def refusal_unseen(self, variant: Variant, state: State) -> bool:
        """Whether a task to be refused would be carried out by an agent that checks what it is
        shown: the SOP as shown (without hidden prerequisites) plainly holds and the goal goes
        through on the system the agent talks to."""
        system = LenientSystem(self.domain, state.db, state.params, copy=False)
        try:
            shown_holds = system.holds(variant.original, state.known)
        except Exception:  # noqa: BLE001 - a check that cannot conclude stops the agent
            shown_holds = False
        finally:
            system.close()
        if not shown_holds:
            return False
        # The agent's system keeps what a call wrote before it raised (as the published one did):
        # a goal that fails half-way through its writes has gone through as far as the final
        # database is concerned, so the agent would fail the task without a reason it can see.
        goal_params = self.domain.catalogue.graph_params(variant.goal)
        arguments = {p: state.known[p] for p in goal_params if p in state.known}
        system = LenientSystem(self.domain, state.db, state.params, atomic=False)
        try:
            before = orjson.dumps(system.db, option=orjson.OPT_NON_STR_KEYS)
            if system.execute(variant.goal, arguments, offered_only=False).ok:
                return True
            return orjson.dumps(system.db, option=orjson.OPT_NON_STR_KEYS) != before
        finally:
            system.close()

    def _goal_fails(self, goal: Single, state: State) -> bool:
        """Whether the goal itself fails on the lenient system (run on a copy: it may write)."""
        system = LenientSystem(self.domain, state.db, state.params)
        try:
            arguments = {p: state.known[v] for p, v in goal.params or () if v in state.known}
            return not system.execute(goal.name, arguments, offered_only=False).ok
        finally:
            system.close()
