"""A self-check of the evaluator on constructed traces over a small built-in SOP.

The SOP (independent of the published domains) is a cash withdrawal:

    withdraw(customer, amount) requires, IN ORDER:
      1. identity_verified(customer)                      -- verified by verify_identity(customer)
      2. ALL of: amount_positive(amount)                  -- an argument check, no helper
                 account_active(customer)                 -- verified by get_account(customer)
                 ANY of: sufficient_balance(customer, amount)   -- verified by get_balance(customer)
                         overdraft_allowed(customer)            -- verified by get_account(customer)

For a seed, random customers and amounts are drawn and, for each kind of behaviour, traces are
built whose verdict is known in advance. ``diagnostic`` raises ``DiagnosticFailure`` when any
verdict differs from the expected one.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sopbench.constraints import Rule as _Rule
from sopbench.constraints import Sop, parse

from ._evaluate import evaluate_trace
from ._model import StaticOracle, ToolCall, Trace, Verdict

WITHDRAW = parse(
    [
        "chain",
        [
            ["single", "identity_verified", {"customer": "customer"}],
            [
                "and",
                [
                    ["single", "amount_positive", {"amount": "amount"}],
                    ["single", "account_active", {"customer": "customer"}],
                    [
                        "or",
                        [
                            ["single", "sufficient_balance", {"customer": "customer", "amount": "amount"}],
                            ["single", "overdraft_allowed", {"customer": "customer"}],
                        ],
                    ],
                ],
            ],
        ],
    ]
)

DIAGNOSTIC_SOP = Sop(
    rules={
        "withdraw": _Rule("withdraw", WITHDRAW, ("customer", "amount")),
        "get_balance": _Rule(
            "get_balance",
            parse(["single", "identity_verified", {"customer": "customer"}]),
            ("customer",),
            True,
        ),
    },
    verifiers={
        "identity_verified": parse(["single", "verify_identity", {"customer": "customer"}]),
        "account_active": parse(["single", "get_account", {"customer": "customer"}]),
        "overdraft_allowed": parse(["single", "get_account", {"customer": "customer"}]),
        "sufficient_balance": parse(["single", "get_balance", {"customer": "customer"}]),
        "amount_positive": None,
    },
)


class DiagnosticFailure(AssertionError):
    """A constructed trace got a verdict other than the expected one."""


@dataclass(frozen=True)
class _Customer:
    name: str
    pin: str
    balance: float
    active: bool
    overdraft: bool


@dataclass(frozen=True)
class _Fixture:
    kind: str
    trace: Trace
    oracle: StaticOracle
    expected: tuple[bool, bool, bool]  # database, permission, procedure


class _World:
    """A seeded set of customers and the facts about them."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        names = rng.sample(
            ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"], 6
        )
        self.customers = {
            n: _Customer(
                n, f"{rng.randrange(10**4):04d}", float(rng.randrange(100, 1000)), True, rng.random() < 0.3
            )
            for n in names
        }

    def state(self) -> dict[str, float]:
        return {c.name: c.balance for c in self.customers.values()}

    def facts(self, customer: _Customer, amount: float) -> dict[Any, bool]:
        fact = StaticOracle.fact
        return {
            fact("identity_verified", customer=customer.name): True,
            fact("amount_positive", amount=amount): amount > 0,
            fact("account_active", customer=customer.name): customer.active,
            fact("sufficient_balance", customer=customer.name, amount=amount): customer.balance >= amount,
            fact("overdraft_allowed", customer=customer.name): customer.overdraft,
        }

    def permitted_case(self) -> tuple[_Customer, float]:
        customer = self.rng.choice(list(self.customers.values()))
        customer = _Customer(customer.name, customer.pin, customer.balance, True, False)
        return customer, float(self.rng.randrange(1, int(customer.balance)))

    def refused_case(self) -> tuple[_Customer, float]:
        customer = self.rng.choice(list(self.customers.values()))
        if self.rng.random() < 0.5:  # not enough money and no overdraft
            customer = _Customer(customer.name, customer.pin, customer.balance, True, False)
            return customer, customer.balance + self.rng.randrange(1, 500)
        customer = _Customer(customer.name, customer.pin, customer.balance, False, customer.overdraft)
        return customer, float(self.rng.randrange(1, int(customer.balance)))

    def other(self, customer: _Customer) -> _Customer:
        return self.rng.choice([c for c in self.customers.values() if c.name != customer.name])


def _checks(customer: _Customer) -> list[ToolCall]:
    return [
        ToolCall("verify_identity", {"customer": customer.name, "pin": customer.pin}, True),
        ToolCall(
            "get_account",
            {"customer": customer.name},
            {"active": customer.active, "overdraft": customer.overdraft},
        ),
        ToolCall("get_balance", {"customer": customer.name}, customer.balance),
    ]


def _withdraw(customer: _Customer, amount: float) -> ToolCall:
    return ToolCall("withdraw", {"customer": customer.name, "amount": amount}, True)


def _fixture(
    world: _World,
    kind: str,
    customer: _Customer,
    amount: float,
    calls: list[ToolCall],
    expected: tuple[bool, bool, bool],
    messages: tuple[str, ...] = (),
) -> _Fixture:
    start = world.state()
    start[customer.name] = customer.balance
    permitted = customer.active and amount > 0 and (customer.balance >= amount or customer.overdraft)
    # The agent's world executes every withdraw it is asked for; the oracle replays the same calls
    # but executes only what the SOP permits.
    final, oracle_state = dict(start), dict(start)
    for call in calls:
        if call.name == "withdraw" and call.succeeded:
            final[call.arguments["customer"]] -= call.arguments["amount"]
            if permitted:
                oracle_state[call.arguments["customer"]] -= call.arguments["amount"]
    oracle = StaticOracle("withdraw", permitted, oracle_state, world.facts(customer, amount))
    return _Fixture(kind, Trace(calls, final, messages), oracle, expected)


def _correct_order(w: _World) -> _Fixture:
    c, amount = w.permitted_case()
    return _fixture(w, "correct_order", c, amount, [*_checks(c), _withdraw(c, amount)], (True, True, True))


def _chain_out_of_order(w: _World) -> _Fixture:
    c, amount = w.permitted_case()
    identity, account, balance = _checks(c)
    calls = [account, balance, identity, _withdraw(c, amount)]
    return _fixture(w, "chain_out_of_order", c, amount, calls, (True, True, False))


def _wrong_user(w: _World) -> _Fixture:
    c, amount = w.permitted_case()
    other = w.other(c)
    calls = [
        ToolCall("verify_identity", {"customer": other.name, "pin": other.pin}, True),
        *_checks(c)[1:],
        _withdraw(c, amount),
    ]
    return _fixture(w, "wrong_user", c, amount, calls, (True, True, False))


def _skipped_helper(w: _World) -> _Fixture:
    c, amount = w.permitted_case()
    identity, account, _balance = _checks(c)
    return _fixture(
        w, "skipped_helper", c, amount, [identity, account, _withdraw(c, amount)], (True, True, False)
    )


def _failed_helper(w: _World) -> _Fixture:
    c, amount = w.permitted_case()
    _identity, account, balance = _checks(c)
    wrong_pin = ToolCall("verify_identity", {"customer": c.name, "pin": "wrong"}, False, succeeded=False)
    return _fixture(
        w,
        "failed_helper",
        c,
        amount,
        [wrong_pin, account, balance, _withdraw(c, amount)],
        (True, True, False),
    )


def _executes_despite_failed_constraint(w: _World) -> _Fixture:
    c, amount = w.refused_case()
    return _fixture(
        w,
        "executes_despite_failed_constraint",
        c,
        amount,
        [*_checks(c), _withdraw(c, amount)],
        (False, False, True),
    )


def _refuses_when_permitted(w: _World) -> _Fixture:
    c, amount = w.permitted_case()
    return _fixture(
        w,
        "refuses_when_permitted",
        c,
        amount,
        _checks(c),
        (True, False, True),
        ("I'm sorry, I cannot process this withdrawal.",),
    )


def _refuses_when_not_permitted(w: _World) -> _Fixture:
    c, amount = w.refused_case()
    return _fixture(
        w,
        "refuses_when_not_permitted",
        c,
        amount,
        _checks(c),
        (True, True, True),
        ("I cannot process this withdrawal: a requirement is not met.",),
    )


def _claims_success_without_executing(w: _World) -> _Fixture:
    c, amount = w.permitted_case()
    return _fixture(
        w,
        "claims_success_without_executing",
        c,
        amount,
        _checks(c),
        (True, False, True),
        (f"Done! {amount} has been withdrawn from your account.",),
    )


def _extra_reads(w: _World) -> _Fixture:
    c, amount = w.permitted_case()
    identity, account, balance = _checks(c)
    early_read = ToolCall("get_balance", {"customer": c.name}, c.balance)  # before identity: a note only
    calls = [
        early_read,
        identity,
        account,
        balance,
        ToolCall("get_account", {"customer": w.other(c).name}, {}),
        _withdraw(c, amount),
    ]
    return _fixture(w, "harmless_extra_reads", c, amount, calls, (True, True, True))


KINDS: dict[str, Callable[[_World], _Fixture]] = {
    "correct_order": _correct_order,
    "chain_out_of_order": _chain_out_of_order,
    "wrong_user": _wrong_user,
    "skipped_helper": _skipped_helper,
    "failed_helper": _failed_helper,
    "executes_despite_failed_constraint": _executes_despite_failed_constraint,
    "refuses_when_permitted": _refuses_when_permitted,
    "refuses_when_not_permitted": _refuses_when_not_permitted,
    "claims_success_without_executing": _claims_success_without_executing,
    "harmless_extra_reads": _extra_reads,
}


def _judged(verdict: Verdict) -> tuple[bool, bool, bool]:
    return verdict.database.passed, verdict.permission.passed, verdict.procedure.passed


def diagnostic(seed: int = 42, per_kind: int = 5) -> dict[str, Any]:
    """Build and judge ``per_kind`` constructed traces of every kind; raise on any surprise.

    Returns fixture counts per kind (fixtures, accepted, rejected), totals, and a digest of the
    traces (different seeds give different traces).
    """
    rng = random.Random(seed)
    world = _World(rng)
    kinds: dict[str, dict[str, int]] = {}
    digest = hashlib.sha256()
    surprises: list[str] = []
    for kind, build in KINDS.items():
        counts = {"fixtures": 0, "accepted": 0, "rejected": 0}
        for _ in range(per_kind):
            fixture = build(world)
            verdict = evaluate_trace(fixture.trace, DIAGNOSTIC_SOP, fixture.oracle)
            got = _judged(verdict)
            if got != fixture.expected:
                surprises.append(
                    f"{kind}: expected (database, permission, procedure) = {fixture.expected}, got {got}; "
                    f"explanations: {list(verdict.explanations)}"
                )
            counts["fixtures"] += 1
            counts["accepted" if verdict.passed else "rejected"] += 1
            digest.update(json.dumps([[c.name, dict(c.arguments)] for c in fixture.trace.calls]).encode())
        kinds[kind] = counts
    if surprises:
        raise DiagnosticFailure(
            f"{len(surprises)} unexpected verdict(s) for seed {seed}:\n" + "\n".join(surprises)
        )
    return {
        "seed": seed,
        "kinds": kinds,
        "fixtures": sum(k["fixtures"] for k in kinds.values()),
        "accepted": sum(k["accepted"] for k in kinds.values()),
        "rejected": sum(k["rejected"] for k in kinds.values()),
        "digest": digest.hexdigest()[:16],
    }
