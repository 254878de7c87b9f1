"""Scoring protocols: the sound one, and the published evaluator's as the sound one plus named quirks.

There is one scoring engine. Every behaviour in which the published evaluator (spec §7) departs from
a sound judgement is a *quirk*: a named switch that the engine consults at exactly the place where
the behaviour happens. ``SOUND`` enables none, ``SOPBENCH`` (compat) enables all of them, and any
mixture can be made with ``Protocol.with_quirks`` (the CLI's ``--quirk NAME`` / ``--no-quirk NAME``).
Nothing else differs between the two protocols.

The quirks
----------
``first_call_only`` (Q4)
    Published: only the first tool call of an assistant message is scored, its name is taken from the
    *following* message, and the "N/A" filter removes items from the list it is iterating (so the
    second of two adjacent "N/A" calls survives). Sound: every call of every message, paired with the
    tool message that answered it; calls the simulator never executed (``exit_conversation``, "N/A"
    pseudo-calls) are not calls.
``python_eval`` (Q3)
    Published: argument strings and tool outputs are read with Python ``eval`` (kept as text when
    that fails): arguments containing JSON ``true``/``false``/``null`` stay a string, so the oracle
    cannot replay the call (a tool-call error); output ``2024-10-12`` becomes the integer 2002.
    Sound: arguments are the JSON object the agent sent; outputs are read as Python literals.
``pair_output_equivalence`` (Q1)
    Published: an output matches the oracle's when ``L(output) == L(oracle)`` or
    ``[True, L(output)] == L(oracle)`` (``L`` turns tuples into lists), whatever format the file
    used; a failing reader's ``(False, {})`` never matches the ``{}`` the agent saw (Q9). Sound: the
    oracle's output is rendered as the agent would have seen it in this file's format (the whole
    pair in older files, the value in newer ones) and compared as text, then as a literal.
``success_from_output_text`` (Q2)
    Published: the goal counts as executed when the output text of a goal call reads as ``True`` or
    as a pair/list whose first item is truthy. Newer files store only the value, so reads whose value
    is a number, dict or string (bank ``get_account_balance``, dmv ``renew_vehicle``, ...) never
    count, and their should-succeed tasks always fail. Sound: the goal counts as executed when a goal
    call succeeded in the agent's environment (the calls replayed on the lenient system).
``unchecked_argument_types`` (§7.3 ``no_tool_call_error``)
    Published: a call is an error only when the oracle cannot run it (unknown tool, an exception).
    Sound: also when its arguments are not a JSON object of the tool's schema (unknown or missing
    required parameters, a wrong JSON type, a value outside an enum).
``replay_unoffered_tools`` (Q10)
    Published: tools that exist but were never offered (bank ``cancel_credit_card``,
    ``pay_bill_with_credit_card``; ``internal_get_database``; library
    ``internal_get_interaction_date``) are replayed on the oracle although the agent got
    "Error: Tool ... not found.", so the call counts as a violation and may change the oracle's
    database. Sound: such a call is an invalid call and is not replayed. (A tool counts as offered
    when the domain offers it or the agent's environment evidently executed it, as in older runs
    that were offered ``internal_get_database``.)
``strict_class_lacks_internal_tools`` (§3.1, §7.2 status 1)
    Published: university's strict class has no ``internal_*`` tools, so those calls are neither
    replayed nor compared (status 1) - yet they take part in the graph check. Sound: every tool is
    replayed on the oracle and compared.
``session_before_credentials`` (Q8)
    Published: the strict ``login_user`` / ``authenticate_admin_password`` update the session before
    checking the credentials, so a wrong-password login counts as logged in. Sound: only a successful
    login changes the session.
``credit_cards_as_shipped`` (Q20)
    Published: the shipped bank code expects ``credit_cards`` as a dict keyed by card number while
    every task stores a list, so card look-ups never find a card. Sound: cards are read as stored.
    (Twelve published bank files were scored by an older bank implementation that read the list; the
    conformance test turns this quirk off for exactly those files, from bank_scoring_semantics.csv.)
``python_equality_database`` (Q17)
    Published: the final databases are compared with Python ``==`` (``1 == 1.0``). Sound: canonical
    JSON equality (sorted keys; ``1`` and ``1.0`` differ).
``graph_check`` (§7.4)
    Published: ``dirgraph_satisfied`` comes from the directed-action-graph check: every call of a tool
    (not only the goal) must be preceded by calls of the tools its graph lists. Sound: the procedure
    judgement of the core evaluator (prefix-only, parameter-bound helper identities, Chain order, a
    failed helper verifies nothing, extra read-only calls never hurt). The next three quirks refine
    the graph check and change nothing when it is off.
``loose_parameter_matching`` (Q6, only with ``graph_check``)
    Published: a prerequisite's expected values are looked up by the prerequisite's *parameter name*
    among the caller's variables instead of by the mapped variable, and falsy expected values are
    wildcards, so passwords and identifications are never compared. Sound (inside the graph check):
    expected values come from the mapped variables and only variables the call does not bind are
    wildcards.
``failed_prerequisites_count`` (Q7, only with ``graph_check``)
    Published: a prerequisite counts as done whatever it returned (a failed login satisfies it), and
    calls the oracle did not run (status 1) take part. Sound (inside the graph check): only calls
    that succeeded in the agent's environment and were run by the oracle count.
``dropped_innate_implications`` (Q5, only with ``graph_check``)
    Published: a passing call records the tools its innate check implies, but only the first child
    of a compound innate dependency, and only implications whose parameter names are all argument
    names of the call (dmv ``internal_get_test_details`` implies only the username check;
    online_market ``exchange_product`` and university ``change_major`` imply nothing). Sound (inside
    the graph check): every tool of the innate dependency, bound through the call's own variables.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields

__all__ = [
    "QUIRKS",
    "SOPBENCH",
    "SOUND",
    "Protocol",
    "Quirk",
    "QuirkSwitches",
    "protocol_by_name",
    "quirk_names",
]


@dataclass(frozen=True, slots=True)
class Quirk:
    """One published behaviour that the sound protocol does not share."""

    name: str
    spec: str  # where the spec describes it, e.g. "Q4" or "§7.4"
    summary: str  # one line
    published: str  # what the published evaluator does
    sound: str  # what the sound protocol does instead
    refines: str | None = None  # the quirk whose code path this one refines (no effect without it)


def _quirk(
    name: str, spec: str, summary: str, published: str, sound: str, refines: str | None = None
) -> Quirk:
    return Quirk(name, spec, summary, published, sound, refines)


QUIRKS: dict[str, Quirk] = {
    q.name: q
    for q in (
        _quirk(
            "first_call_only",
            "Q4",
            "only the first tool call of a message is scored, named by the next message",
            "one call per assistant message, tool name from the following message, buggy N/A filter",
            "every call, paired with the tool message that answered it",
        ),
        _quirk(
            "python_eval",
            "Q3",
            "arguments and outputs are read with Python eval",
            "JSON true/false/null arguments stay a string (a tool-call error); 2024-10-12 reads as 2002",
            "arguments are the agent's JSON object; outputs are read as Python literals",
        ),
        _quirk(
            "pair_output_equivalence",
            "Q1",
            "an output also matches when [True, output] equals the oracle's",
            "format-blind comparison; a failed reader's (False, {}) never matches the {} the agent saw (Q9)",
            "the oracle's output rendered in the file's format (pair or value), compared as text or literal",
        ),
        _quirk(
            "success_from_output_text",
            "Q2",
            "the goal's execution is read from the recorded output text",
            "value-format reads of numbers, dicts and strings never count as executed",
            "a goal call that succeeded in the agent's environment (lenient replay)",
        ),
        _quirk(
            "unchecked_argument_types",
            "§7.3",
            "only calls the oracle cannot run are tool-call errors",
            "no schema check of the arguments",
            "arguments must be a JSON object of the tool's schema (names, required, types, enums)",
        ),
        _quirk(
            "replay_unoffered_tools",
            "Q10",
            "tools never offered to the agent are replayed on the oracle",
            "the call counts as a violation and may change the oracle's database",
            "a call of an unoffered tool is an invalid call and is not replayed",
        ),
        _quirk(
            "strict_class_lacks_internal_tools",
            "§7.2",
            "university internal_* calls are not replayed (status 1)",
            "neither replayed nor compared, yet part of the graph check",
            "every tool is replayed and compared",
        ),
        _quirk(
            "session_before_credentials",
            "Q8",
            "a login with a wrong password still logs the user in",
            "the strict oracle updates the session before checking the credentials",
            "only a successful login or admin authentication changes the session",
        ),
        _quirk(
            "credit_cards_as_shipped",
            "Q20",
            "bank credit cards are looked up as a dict keyed by number",
            "list-format cards are never found; no_credit_card_balance raises for card holders",
            "cards are read as the task data stores them (a list)",
        ),
        _quirk(
            "python_equality_database",
            "Q17",
            "final databases are compared with Python ==",
            "1 == 1.0; in-memory and JSON data compared directly",
            "canonical JSON equality (sorted keys; 1 and 1.0 differ)",
        ),
        _quirk(
            "graph_check",
            "§7.4",
            "dirgraph_satisfied is the directed-action-graph check",
            "every call of every tool is checked against its action graph",
            "the core procedure judgement on the task's SOP",
        ),
        _quirk(
            "loose_parameter_matching",
            "Q6",
            "prerequisite values are looked up by parameter name; falsy = wildcard",
            "passwords and identifications are never compared",
            "values come from the mapped variables; only unbound variables are wildcards",
            refines="graph_check",
        ),
        _quirk(
            "failed_prerequisites_count",
            "Q7",
            "a prerequisite counts whatever it returned; status-1 calls count",
            "a failed login satisfies the graph",
            "only calls that succeeded and were run by the oracle count",
            refines="graph_check",
        ),
        _quirk(
            "dropped_innate_implications",
            "Q5",
            "innate implications keep only the first child and matching names",
            "compound innate checks imply only their first tool; renamed parameters imply nothing",
            "every tool of the innate dependency, bound through the call's variables",
            refines="graph_check",
        ),
    )
}


def quirk_names() -> list[str]:
    return list(QUIRKS)


@dataclass(frozen=True, slots=True)
class QuirkSwitches:
    """The quirks of a protocol as typed switches, one field per quirk of ``QUIRKS``.

    The scorer reads quirks only through this object: a misspelt switch is an ``AttributeError``,
    never a quirk silently off.
    """

    first_call_only: bool = False
    python_eval: bool = False
    pair_output_equivalence: bool = False
    success_from_output_text: bool = False
    unchecked_argument_types: bool = False
    replay_unoffered_tools: bool = False
    strict_class_lacks_internal_tools: bool = False
    session_before_credentials: bool = False
    credit_cards_as_shipped: bool = False
    python_equality_database: bool = False
    graph_check: bool = False
    loose_parameter_matching: bool = False
    failed_prerequisites_count: bool = False
    dropped_innate_implications: bool = False

    @classmethod
    def of(cls, quirks: Iterable[str]) -> QuirkSwitches:
        _check_names(quirks)
        return cls(**dict.fromkeys(quirks, True))


# Every documented quirk is a switch and every switch a documented quirk.
assert [f.name for f in fields(QuirkSwitches)] == list(QUIRKS), "QuirkSwitches and QUIRKS differ"


@dataclass(frozen=True, slots=True)
class Protocol:
    """A scoring protocol: a name and the set of enabled quirks (also as typed ``switches``)."""

    name: str
    quirks: frozenset[str] = frozenset()
    switches: QuirkSwitches = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "switches", QuirkSwitches.of(self.quirks))

    def has(self, quirk: str) -> bool:
        """Whether ``quirk`` is enabled; an unknown name raises ``ValueError``."""
        _check_names((quirk,))
        return quirk in self.quirks

    def with_quirks(self, enable: Iterable[str] = (), disable: Iterable[str] = ()) -> Protocol:
        """This protocol with quirks switched on and off; unknown names raise ``ValueError``."""
        enable, disable = list(enable), list(disable)
        _check_names(enable)
        _check_names(disable)
        quirks = (self.quirks | set(enable)) - set(disable)
        if quirks == self.quirks:
            return self
        added = sorted(set(enable) - self.quirks)
        removed = sorted(set(disable) & self.quirks)
        suffix = "".join(f"+{q}" for q in added) + "".join(f"-{q}" for q in removed)
        base = self.name.split("[", 1)[0]
        for standard in (SOUND, SOPBENCH):
            if quirks == standard.quirks:
                return standard
        return Protocol(f"{base}[{suffix}]", frozenset(quirks))

    def __str__(self) -> str:
        return self.name


def _check_names(names: Iterable[str]) -> None:
    unknown = sorted(set(names) - set(QUIRKS))
    if unknown:
        raise ValueError(f"unknown quirk(s) {', '.join(unknown)}; known quirks: {', '.join(QUIRKS)}")


SOUND = Protocol("sound", frozenset())
SOPBENCH = Protocol("sopbench", frozenset(QUIRKS))
_BY_NAME = {"sound": SOUND, "sopbench": SOPBENCH, "compat": SOPBENCH}


def protocol_by_name(name: str) -> Protocol:
    """``"sound"`` or ``"sopbench"`` (alias ``"compat"``); raises ``ValueError`` naming the known ones."""
    try:
        return _BY_NAME[name.lower()]
    except KeyError:
        raise ValueError(f"unknown protocol {name!r}; known: sound, sopbench") from None
