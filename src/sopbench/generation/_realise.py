"""Realising an assignment: a database, user-known values and parameters that give every constraint
instance its assigned truth, found by a bounded, deterministic local search checked by the oracle.

The search state is (database, constraint parameters, user-known values). Its cost is the number of
constraint instances of the verification form whose truth, computed by the domain's own rules on
that state, differs from the assignment (a rule that raises counts as a difference). Moves change
one thing: a variable to another candidate (an entity of the world, a same-named field, a fresh
pool value), one database value near the entities the variables name (a number around a threshold,
a date around "now", another value the same field takes elsewhere, an entry added to or removed
from a collection), or one constraint parameter. The first move that lowers the cost is taken;
states that realised earlier assignments of the domain are warm starts. At cost zero the task is
verified on the strict oracle by its reference path (required linked actions, then the goal).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import orjson

from sopbench.constraints import And, Chain, Expr, Single, ToolNode, singles
from sopbench.domains import Domain, LenientSystem, action_graph

from ._enumerate import Assignment, Variant, single_text
from ._values import (
    WorldIndex,
    date_shifts,
    fits_schema,
    format_date,
    get_path,
    json_kind,
    number_shifts,
    parse_date,
    structured_candidates,
    walk,
)

DEFAULT_BUDGET = 1500  # cost evaluations per assignment before it is reported unrealisable
WARM_STARTS = 24
BROADENING = (3, 8, 20, 10_000)  # candidates per variable in successive backtracking passes
ASSIGN_BUDGET = 4000  # evaluations of the backtracking over variables, per start
RESTARTS = 3  # descents from the best starting states
SIDEWAYS_STEPS = 20  # equal-cost steps allowed per descent (to leave a plateau)


class GoalCall(Single):
    """The goal call itself as a target: it must succeed when the task is to succeed."""

    __slots__ = ()


class ShownSop(Single):
    """The SOP as the agent is shown it (the original constraints, without their hidden
    prerequisites) as a target: a refusal must rest on a constraint the agent can check."""

    __slots__ = ()


@dataclass
class State:
    db: dict[str, Any]
    params: dict[str, Any]
    known: dict[str, Any]

    def with_known(self, **changes: Any) -> State:
        return State(self.db, self.params, {**self.known, **changes})

    def fingerprint(self) -> bytes:
        return orjson.dumps(
            [self.db, self.params, self.known], option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
        )


@dataclass
class Outcome:
    state: State | None
    reason: str = ""
    evaluations: int = 0
    wrong: list[str] = field(default_factory=list)


def _copy(data: Any) -> Any:
    return orjson.loads(orjson.dumps(data))


class Realiser:
    """Realises assignments of one domain over one world database."""

    def __init__(self, domain: Domain, world: Mapping[str, Any], *, budget: int = DEFAULT_BUDGET) -> None:
        self.domain = domain
        self.world = _copy(world)
        self.index = WorldIndex(self.world)
        self.budget = budget
        self.params = dict(domain.catalogue.default_parameters)
        self.warm: list[State] = []
        self._kinds: dict[str, tuple[str, ...]] = {}
        self._helpers: dict[tuple[str, int], list[Single]] = {}
        self._relative: dict[str, list[str]] = {}  # date -> dates a span away (see _relative_dates)
        self._shown: dict[str, Expr | None] = {}
        self._windows = sorted(
            {int(v) for v in self.params.values() if isinstance(v, int | float) and not isinstance(v, bool)}
        )
        # Spans of days the rules compare with: each window and its neighbours, then a few days.
        # Just past each window first (a stay one night longer than the maximum), then the window.
        self._spans = list(
            dict.fromkeys([w + d for d in (1, 0, -1, 2) for w in self._windows if 1 < w < 400] + [1, 2, 3])
        )

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
        found = []
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

    # ---- cost --------------------------------------------------------------------------------
    def wrong(self, state: State, targets: list[tuple[Single, bool]]) -> list[Single]:
        system = LenientSystem(self.domain, state.db, state.params, copy=False)
        bad: list[Single] = []
        try:
            for single, want in targets:
                if isinstance(single, GoalCall):
                    if self._goal_fails(single, state):
                        bad.append(single)
                    continue
                if isinstance(single, ShownSop):
                    try:
                        shown = system.holds(self._shown[single.name], state.known)
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

    # ---- the search --------------------------------------------------------------------------
    def realise(
        self,
        variant: Variant,
        assignment: Assignment,
        rng: random.Random,
        avoid: set[bytes],
        verify,
        *,
        shown_refusal: bool = True,
    ) -> Outcome:
        """A verified state for the assignment. With ``shown_refusal``, a task to be refused must
        also break the SOP as the agent is shown it (not only a hidden prerequisite of it)."""
        targets: list[tuple[Single, bool]] = [(s, v) for s, v in assignment.required.items()]
        if assignment.outcome:
            # A permitted goal must also work: its own checks (a matching password) must pass.
            goal_params = self.domain.catalogue.graph_params(variant.goal)
            targets.append((GoalCall(variant.goal, tuple((p, p) for p in goal_params)), True))
            # ... and so must the actions an agent calls with the extra values to verify that
            # it is permitted (a login before reading the balance a constraint speaks of).
            targets += [(helper, True) for helper in self.credential_helpers(variant, assignment)]
        elif shown_refusal and (settled := _truth_under(variant.original, assignment.required)) is not None:
            if settled:
                # The assignment makes every constraint the agent is shown hold: only a hidden
                # prerequisite can refuse it, so no budget is spent looking for a shown failure.
                return Outcome(None, reason="the SOP as shown holds under this assignment")
            # (when it makes the shown SOP fail, that needs no target of its own)
        elif shown_refusal:
            shown = f"{variant.goal}#{variant.number}"
            self._shown[shown] = variant.original
            shown_vars = dict.fromkeys(
                var for single in singles(variant.original) for _, var in single.params or ()
            )
            targets.append((ShownSop(shown, tuple((var, var) for var in shown_vars)), False))
        names = self.variables(variant, assignment)
        kinds = {n: self.kinds(n, variant.verification, variant.goal) for n in names}
        thresholds = [
            v for v in self.params.values() if isinstance(v, int | float) and not isinstance(v, bool)
        ]
        candidates = {n: self.index.for_variable(n, kinds[n], rng, thresholds) for n in names}
        for n in names:
            schema = self.schema(n, variant.verification, variant.goal)
            if schema is not None:
                candidates[n] = candidates[n] + structured_candidates(schema, self.index, self.params)
            entries = self.entries(n, variant.verification, variant.goal)
            enums = [list(e["enum"]) for e in entries if "enum" in e]
            if enums:
                candidates[n] = enums[0] + candidates[n]
            # Values an agent could not even pass (wrong JSON type, outside an enum) make no task.
            candidates[n] = [v for v in candidates[n] if all(fits_schema(e, v) for e in entries)]
        constrained = {v for single, _ in targets for _, v in single.params or ()}
        for n in names:  # a seeded rotation of the best guesses varies tasks between seeds
            if n not in constrained:
                # Nothing checks it (a bill's description, a review's comment): a fresh pool value
                # reads better than some other record's field.
                fresh = [v for v in candidates[n] if isinstance(v, str) and v not in self.index.stored]
                candidates[n] = fresh + [v for v in candidates[n] if v not in fresh]
                head = fresh
            else:
                head = candidates[n][: min(4, len(candidates[n]))]
            rng.shuffle(head)
            candidates[n][: len(head)] = head
        starts = [self._initial(names, candidates)]
        for warm in self.warm[:WARM_STARTS]:
            # Only the checked variables come from an earlier task; the others stay fresh.
            known = {
                n: warm.known[n] if n in warm.known and n in constrained else starts[0].known[n]
                for n in names
            }
            starts.append(State(warm.db, warm.params, known))
        evaluations = 0
        scored: list[tuple[int, int, State]] = []
        for start in starts:
            scored.append((len(self.wrong(start, targets)), len(scored), start))
            evaluations += 1
        scored.sort(key=lambda item: (item[0], item[1]))
        # First, on the databases of the two best starts, choose the variables by backtracking
        # (each instance checked as soon as its variables are chosen); only then move the database.
        for _, _, start in scored[:2]:
            found, used = self._assign(
                start,
                targets,
                names,
                candidates,
                ASSIGN_BUDGET * self.budget // DEFAULT_BUDGET,
                avoid,
                verify,
            )
            evaluations += used
            if found is not None:
                self._remember(found)
                return Outcome(found, evaluations=evaluations)
        best_wrong: list[Single] = []
        moving = evaluations  # the database moves get their own budget
        for _, _, start in scored[:RESTARTS]:
            if evaluations - moving >= self.budget:
                break
            state, wrong, used = self._descend(
                start,
                targets,
                names,
                candidates,
                self.budget - (evaluations - moving),
                avoid,
                verify,
            )
            evaluations += used
            if state is not None:
                self._remember(state)
                return Outcome(state, evaluations=evaluations)
            if not best_wrong or len(wrong) < len(best_wrong):
                best_wrong = wrong
        texts = [single_text(s) + (" must hold" if dict(targets)[s] else " must fail") for s in best_wrong]
        reason = (
            "no state within the search budget gives " + "; ".join(texts)
            if texts
            else "every instance got its truth but the oracle's reference path disagreed with the expected outcome"
        )
        return Outcome(None, reason=reason, evaluations=evaluations, wrong=texts)

    def _remember(self, state: State) -> None:
        self.warm.insert(0, state)
        del self.warm[WARM_STARTS * 2 :]

    def _assign(
        self, start: State, targets, names, candidates, budget: int, avoid, verify
    ) -> tuple[State | None, int]:
        """Backtracking over the variables alone, the database fixed; returns a verified state or None."""
        involved = [
            (single, want, [v for _, v in single.params or () if v in names]) for single, want in targets
        ]
        order = _variable_order(names, [set(variables) for _, _, variables in involved])
        position = {n: i for i, n in enumerate(order)}
        checks: list[list[tuple[Single, bool]]] = [[] for _ in order]
        fixed: list[tuple[Single, bool]] = []
        for single, want, variables in involved:
            if variables:
                checks[max(position[v] for v in variables)].append((single, want))
            else:
                fixed.append((single, want))
        allowed = {n: {c for c in candidates[n] if _hashable_scalar(c) or isinstance(c, bool)} for n in names}
        used = 1
        if fixed and self.wrong(start, fixed):
            return None, used  # only the database can change these
        known = dict(start.known)

        records = records_of(start.db)
        partners = {
            n: list(dict.fromkeys(v for _, _, variables in involved if n in variables for v in variables))
            for n in names
        }

        # A variable that shares an instance with others tries first the values most records
        # hold (a guest with reservations before a guest without): those give the other
        # variables linked values to try. The seeded order is kept among equals.
        ranked = {
            n: sorted(candidates[n], key=functools.partial(_fewest_first, records, n))
            if len(partners[n]) > 1
            else candidates[n]
            for n in names
        }

        def options(name: str) -> list[Any]:
            # Constructive candidates first: the values that records named by the variables chosen
            # so far hold (the dates of the chosen guest's reservation), and dates a window away
            # from a date chosen for the same instance (a stay just longer than the maximum).
            chosen = {n: known[n] for n in order[: position[name]] if n in known}
            first = [start.known[name]] if name in start.known else []
            linked = records.linked(name, chosen)
            first += _alternate(
                linked,
                self._relative_dates(name, [chosen[n] for n in partners[name] if n in chosen]),
            )
            # ... and the days next to the linked ones (a stay that just runs into another one).
            first += [
                format_date(moment + timedelta(days=shift), layout)
                for moment, layout in (p for p in map(parse_date, linked[:4]) if p is not None)
                for shift in (-1, 1, -2, 2)
            ]
            first = list(dict.fromkeys(v for v in first if _hashable_scalar(v) or isinstance(v, bool)))
            if name in allowed:
                first = [v for v in first if v in allowed[name]]
            taken = set(first)
            return first + [c for c in ranked[name] if not (_hashable_scalar(c) and c in taken)]

        everything = frozenset(range(len(order)))

        def search(i: int, width: int) -> tuple[State | None, frozenset[int]]:
            """Depth-first over the variables with conflict-directed backjumping: a level whose
            values all fail returns the levels its failures depend on, and the levels between are
            skipped (choosing another amount cannot help a guest without a reservation)."""
            nonlocal used
            if i == len(order):
                state = State(start.db, start.params, dict(known))
                if state.fingerprint() not in avoid and verify(state):
                    return state, frozenset()
                return None, everything
            name = order[i]
            values = options(name)[: width if checks[i] else 3]
            conflicts: set[int] = set()
            for value in values:
                if used >= budget:
                    return None, everything
                known[name] = value
                if checks[i]:
                    used += 1
                    failed = self.wrong(State(start.db, start.params, known), checks[i])
                    if failed:
                        conflicts.update(
                            position[v] for single in failed for _, v in single.params or () if v in position
                        )
                        continue
                found, below = search(i + 1, width)
                if found is not None:
                    return found, frozenset()
                if i not in below:  # this variable took no part in the failure: jump over it
                    known[name] = start.known.get(name)
                    return None, below
                conflicts.update(below)
            known[name] = start.known.get(name)
            conflicts.discard(i)
            return None, frozenset(c for c in conflicts if c < i)

        # Iterative broadening: every variable's first few candidates before any variable's many.
        for width in BROADENING:
            found, _ = search(0, width)
            if found is not None or used >= budget:
                return found, used
        return None, used

    def _relative_dates(self, name: str, partners: list[Any]) -> list[str]:
        """Days a window away (before and after) from the dates chosen for the same instances:
        the rules compare spans of days with the domain's windows (a stay longer than the
        maximum, a booking within the lead time)."""
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
                    for days in self._spans:
                        for sign in (1, -1):
                            shifted.append(format_date(moment + timedelta(days=sign * days), layout))
                self._relative[other] = shifted
            out += self._relative[other]
        return out

    def _initial(self, names: list[str], candidates: dict[str, list[Any]]) -> State:
        known = {n: (candidates[n][0] if candidates[n] else "") for n in names}
        state = State(self.world, dict(self.params), known)
        for n in names:
            state = self._follow(state, n, names)
        return state

    def _follow(self, state: State, variable: str, names: list[str]) -> State:
        """After a variable names a record (its key, or one of its fields), take the other variables
        that are fields of that record (same name, or a name that contains the field's)."""
        value = state.known[variable]
        if not isinstance(value, str) or not value:
            return state
        record = _find_record(state.db, value)
        if record is None:
            return state
        changes = {}
        for n in names:
            if n == variable:
                continue
            source = n if n in record else next((f for f in record if len(f) > 3 and f in n), None)
            if (
                source is not None
                and not isinstance(record[source], list | dict)
                and record[source] not in (None, "")
            ):
                changes[n] = record[source]
        return state.with_known(**changes) if changes else state

    def _descend(self, state, targets, names, candidates, budget, avoid, verify):
        """First-improvement descent; a few equal-cost steps are allowed to leave a plateau."""
        used = 1
        wrong = self.wrong(state, targets)
        seen = {state.fingerprint()}
        penalty = 0
        sideways = SIDEWAYS_STEPS
        while used < budget:
            if not wrong:
                if state.fingerprint() not in avoid and verify(state):
                    return state, [], used
                penalty = 1  # realised on paper, refused by the oracle or already produced: keep moving
            cost = len(wrong) + penalty
            level: tuple[State, list[Single]] | None = None
            improved = False
            for move in self._moves(state, wrong, names, candidates):
                if used >= budget:
                    break
                key = move.fingerprint()
                if key in seen:
                    continue
                seen.add(key)
                used += 1
                new_wrong = self.wrong(move, targets)
                new_cost = len(new_wrong)
                if new_cost < cost or (penalty and new_cost == 0):
                    state, wrong, improved = move, new_wrong, True
                    penalty = 0
                    break
                if level is None and new_cost == cost and new_wrong != wrong:
                    level = (move, new_wrong)
            if improved:
                continue
            if level is None or sideways == 0:
                break
            sideways -= 1
            state, wrong = level
        return None, wrong, used

    # ---- moves -------------------------------------------------------------------------------
    def _moves(self, state: State, wrong: list[Single], names: list[str], candidates) -> Iterator[State]:
        """Moves for the first wrong instance first: its variables, its entities, the top-level values."""
        involved = list(dict.fromkeys(v for s in wrong[:1] for _, v in s.params or () if v in state.known))
        for n in involved:
            yield from self._variable_moves(state, n, names, candidates)
        yield from self._date_pair_moves(state, involved)
        yield from self._database_moves(state, involved)
        others = [n for n in names if n not in involved]
        for n in others:
            yield from self._variable_moves(state, n, names, candidates)
        yield from self._database_moves(state, others)
        yield from self._parameter_moves(state)
        yield from self._database_moves(state, [], everywhere=True)

    def _date_pair_moves(self, state: State, involved: list[str]) -> Iterator[State]:
        """Two date variables of one instance moved together: a start and a stay of n days after it."""
        parsed = [(n, parse_date(state.known[n])) for n in involved]
        dated = [(n, p) for n, p in parsed if p is not None and p[1] == "%Y-%m-%d"]
        if len(dated) < 2:
            return
        (first, (start, layout)), (second, _) = dated[0], dated[1]
        anchors = [p[0] for p in (parse_date(v) for v in state.db.values() if isinstance(v, str)) if p]
        starts = [start] + [
            a.replace(hour=0, minute=0, second=0) + timedelta(days=d)
            for a in anchors
            for d in (1, 2, 3, 5, 10)
        ]
        lengths = sorted({1, 2, 3, 5} | {w + 1 for w in self._windows if 0 < w < 60})
        for begin in starts:
            for nights in lengths:
                yield state.with_known(
                    **{
                        first: format_date(begin, layout),
                        second: format_date(begin + timedelta(days=nights), layout),
                    }
                )

    def _variable_moves(self, state: State, n: str, names: list[str], candidates) -> Iterator[State]:
        current = state.known.get(n)
        for value in candidates[n]:
            if value == current and type(value) is type(current):
                continue
            yield self._follow(state.with_known(**{n: value}), n, names)

    def _database_moves(
        self, state: State, variables: list[str], *, everywhere: bool = False
    ) -> Iterator[State]:
        known_strings = [v for v in state.known.values() if isinstance(v, str)]
        numbers = [v for v in state.known.values() if isinstance(v, int | float) and not isinstance(v, bool)]
        numbers += [
            v for v in state.params.values() if isinstance(v, int | float) and not isinstance(v, bool)
        ]
        anchors = [p[0] for p in (parse_date(v) for v in state.db.values() if isinstance(v, str)) if p]
        roots: list[tuple[Any, ...]] = []
        for name in variables:
            value = state.known.get(name)
            if isinstance(value, str):
                roots += [path for path in _paths_of(state.db, value)]
        roots.append(())
        done: set[tuple[Any, ...]] = set()
        for root in roots:
            for leaf in walk(get_path(state.db, root), root, str(root[-1]) if root else ""):
                if leaf.path in done or (root == () and len(leaf.path) > 1 and not everywhere):
                    continue
                done.add(leaf.path)
                for value in self._edits(leaf, known_strings, numbers, anchors):
                    yield _with_value(state, leaf.path, value)

    def _edits(self, leaf, known_strings, numbers, anchors) -> Iterator[Any]:
        value = leaf.value
        kind = json_kind(value)
        if kind == "boolean":
            yield not value
        elif kind == "number":
            yield from number_shifts(value, numbers)
        elif kind == "string":
            shifted = date_shifts(value, anchors, self._windows)
            if shifted:
                yield from shifted
                return
            for other in self.index.by_field.get(leaf.field, []) + known_strings:
                if other != value and isinstance(other, str):
                    yield other
            for variant in (value.lower(), value.capitalize(), ""):
                if variant != value:
                    yield variant
        elif kind == "null":
            for other in self.index.containers.get(leaf.field, []) + self.index.by_field.get(leaf.field, []):
                if other is not None:
                    yield _copy(other)
        elif kind == "array":
            if value:
                yield []
                for i, item in enumerate(value):
                    if item in known_strings:
                        yield value[:i] + value[i + 1 :]
            for text in known_strings:
                if text not in value:
                    yield [*value, text]
            days = sorted(p for p in (parse_date(t) for t in known_strings) if p and p[1] == "%Y-%m-%d")
            if len(days) >= 2 and all(parse_date(v) for v in value if isinstance(v, str)):
                span = _days_between(days[0][0], days[-1][0])
                if span and len(span) <= 60:
                    yield sorted(set(value) | set(span))
            for other in self.index.containers.get(leaf.field, []):
                if isinstance(other, list) and other and other != value:
                    yield _copy(other)
                    if isinstance(other[0], dict):
                        yield [*_copy(value), _copy(other[0])]
        elif kind == "object" and leaf.path:
            for key in list(value):
                if key in known_strings:
                    yield {k: v for k, v in value.items() if k != key}
            template = _template_entry(value, self.index.containers.get(leaf.field, []))
            if template is not None:
                for text in known_strings:
                    if text not in value:
                        yield {**value, text: _copy(template)}

    def _parameter_moves(self, state: State) -> Iterator[State]:
        numbers = [v for v in state.known.values() if isinstance(v, int | float) and not isinstance(v, bool)]
        for name, value in state.params.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                for shifted in number_shifts(value, numbers):
                    if shifted >= 0:
                        yield State(state.db, {**state.params, name: shifted}, state.known)


def _template_entry(container: dict[str, Any], same_field: list[Any]) -> Any:
    """A record to copy when a collection needs one more entry: one of its own, or of a like collection."""
    for candidate in [container, *same_field]:
        if isinstance(candidate, dict) and candidate:
            first = next(iter(candidate.values()))
            if isinstance(first, dict | list | str | int | float):
                return first
    return None


def _paths_of(db: Any, value: str) -> Iterator[tuple[Any, ...]]:
    """Paths of records keyed by ``value`` and of containers holding it."""
    for leaf in walk(db):
        if isinstance(leaf.value, dict) and value in leaf.value and leaf.path:
            yield (*leaf.path, value)
            yield leaf.path
        elif isinstance(leaf.value, dict) and value in leaf.value:
            yield (value,)
        elif isinstance(leaf.value, list) and value in leaf.value:
            yield leaf.path


class Records:
    """The records of one database (dicts holding scalar fields), found by a key or a field value.

    Built once per database object: the search asks it for every candidate it follows."""

    def __init__(self, db: Any) -> None:
        self.db = db  # held so that the id this index is cached under stays this database's
        self.keyed: dict[Any, dict[str, Any]] = {}
        self.holding: dict[Any, list[dict[str, Any]]] = {}
        self.counts: dict[tuple[str, Any], int] = {}  # (field, value) -> records holding it there
        self._like: dict[str, list[str]] = {}  # variable -> the fields named like it
        for leaf in walk(db):
            if not isinstance(leaf.value, dict):
                continue
            for key, value in leaf.value.items():
                if isinstance(value, dict) and _hashable_scalar(key):
                    self.keyed.setdefault(key, value)
                if leaf.path and _hashable_scalar(value):
                    self.counts[(key, value)] = self.counts.get((key, value), 0) + 1
                    bucket = self.holding.setdefault(value, [])
                    if not bucket or bucket[-1] is not leaf.value:
                        bucket.append(leaf.value)

    def held(self, name: str, value: Any) -> int:
        """How many records hold ``value`` in a field named like variable ``name``."""
        if not _hashable_scalar(value):
            return 0
        fields = self._like.get(name)
        if fields is None:
            fields = self._like[name] = [name] + [f for f in self._fields if len(f) > 3 and f != name and f in name]
        return max(self.counts.get((f, value), 0) for f in fields)

    @property
    def _fields(self) -> set[str]:
        if not hasattr(self, "_field_names"):
            self._field_names = {f for f, _ in self.counts}
        return self._field_names

    def find(self, key: str) -> dict[str, Any] | None:
        """The record keyed by ``key``, else the first record with a field equal to it."""
        if key in self.keyed:
            return self.keyed[key]
        holders = self.holding.get(key)
        return holders[0] if holders else None

    def linked(self, name: str, known: Mapping[str, Any]) -> list[Any]:
        """Values for variable ``name`` read from the records that the other variables' values
        name (the old dates of a guest's reservation once the guest is chosen), records that
        match more of those values first."""
        scores: dict[int, list[Any]] = {}
        for other, value in known.items():
            if other == name or not _hashable_scalar(value) or isinstance(value, bool):
                continue
            records = ([self.keyed[value]] if value in self.keyed else []) + self.holding.get(value, [])
            for record in records:
                entry = scores.setdefault(id(record), [0, record])
                entry[0] += 1
        found: list[Any] = []
        for _, record in sorted(scores.values(), key=lambda item: -item[0]):
            source = name if name in record else next((f for f in record if len(f) > 3 and f in name), None)
            if source is None:
                continue
            value = record[source]
            if _hashable_scalar(value) and value not in (None, "") and value not in found:
                found.append(value)
        return found


def _truth_under(expr: Expr | None, truths: Mapping[Single, bool]) -> bool | None:
    """The truth of an SOP that the instances' assigned truths settle, or None when they do not
    (an instance the assignment leaves free or does not have decides it)."""
    if expr is None:
        return True
    if isinstance(expr, Single):
        value = truths.get(Single(expr.name, expr.params, False))
        return None if value is None else value != expr.negated
    conjunction = isinstance(expr, And | Chain)
    values = [_truth_under(child, truths) for child in expr.children]
    if (not conjunction) in values:
        return not conjunction
    return conjunction if all(v is not None for v in values) else None


def _variable_order(names: list[str], scopes: list[set[str]]) -> list[str]:
    """The order the backtracking chooses variables in: next, the variable that completes the
    most instances (so each choice is checked at once), then the one in most instances (the
    most constrained), then the earlier name."""
    order: list[str] = []
    chosen: set[str] = set()
    degree = {n: sum(n in scope for scope in scopes) for n in names}
    rest = [n for n in names if degree[n]]
    while rest:

        def rank(name: str) -> tuple[int, int, int]:
            completes = sum(1 for scope in scopes if name in scope and scope - chosen <= {name})
            return (-completes, -degree[name], names.index(name))

        best = min(rest, key=rank)
        order.append(best)
        chosen.add(best)
        rest.remove(best)
    return order + [n for n in names if n not in order]


def _alternate(first: list[Any], second: list[Any]) -> list[Any]:
    """The two lists interleaved (each one's best candidates come early)."""
    out: list[Any] = []
    for i in range(max(len(first), len(second))):
        out += first[i : i + 1] + second[i : i + 1]
    return out


def _hashable_scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


_RECORDS: dict[int, Records] = {}
_RECORDS_KEPT = 64


def records_of(db: Any) -> Records:
    """The record index of a database object (a few recent ones are kept)."""
    found = _RECORDS.get(id(db))
    if found is not None and found.db is db:
        return found
    found = Records(db)
    _RECORDS[id(db)] = found
    while len(_RECORDS) > _RECORDS_KEPT:
        del _RECORDS[next(iter(_RECORDS))]
    return found


def _find_record(db: Any, key: str) -> dict[str, Any] | None:
    return records_of(db).find(key)


def _with_value(state: State, path: tuple[Any, ...], value: Any) -> State:
    db = _copy(state.db)
    target = db
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return State(db, state.params, state.known)


def _days_between(first, last) -> list[str]:
    from datetime import timedelta

    count = (last - first).days
    return [(first + timedelta(days=i)).strftime("%Y-%m-%d") for i in range(count)]


def _fewest_first(records: Any, name: str, value: Any) -> int:
    """Sort key: values that more records hold come first."""
    return -int(records.held(name, value))
